"""One run, six reports: text, JSON, JUnit, markdown, SARIF and HTML written together agree on every count,
on the shoong fleet without its rules and on a fleet of our own with conflicts, an unsafe lifecycle entry,
warnings and a skipped app; a baseline written today makes the same run pass and a new conflict fail."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple
from xml.etree import ElementTree

import pytest
from reports_support import checked_sarif, fleet_repository
from test_html import CHROMIUM, dump_dom

from conftest import ROOT, run_cli

FORMATS = ("json", "junit", "markdown", "sarif", "html")
SHOONG = ["examples/shoong-delivery/argocd", "--repo", "https://git.example.com/platform/gitops.git=.", "--raw"]


class Counts(NamedTuple):
    applications: int
    conflicts: int
    warnings: int
    skipped: int
    lifecycle: int
    unsafe: int


_SUMMARY = re.compile(
    r"(\d+) applications?, (\d+) conflicts?, (\d+) warnings?, (\d+) skipped"
    r"(?:, (\d+) lifecycle (?:entry|entries) \((\d+) unsafe\))?"
)


def _summary(text: str) -> Counts:
    found = _SUMMARY.search(text)
    assert found is not None, text
    return Counts(*(int(group or 0) for group in found.groups()))


def _run_all(root: Path, args: list[str], helm: str, scratch: Path, *extra: str) -> tuple[int, dict[str, str]]:
    files = {name: scratch / f"report.{name}" for name in FORMATS}
    reports = [part for name, path in files.items() for part in ("--report", f"{name}={path}")]
    result = run_cli(["check", *args, *reports, *extra], env={"CHARTSHARE_HELM": helm}, cwd=root)
    assert "error" not in result.stderr, result.stderr
    return result.exit_code, {"text": result.stdout, **{name: path.read_text() for name, path in files.items()}}


def _counts_of_each(written: dict[str, str], root: Path, scratch: Path) -> dict[str, Counts]:
    """Every count, read from each format by its own structure (the summary line where it has one)."""
    report: dict[str, Any] = json.loads(written["json"])
    lifecycle = report.get("lifecycle") or []
    counts = {
        "text": _summary(written["text"].rstrip().splitlines()[-1]),
        "json": Counts(
            len(report["applications"]),
            len(report["conflicts"]),
            len(report["warnings"]),
            len({skip["app"] for skip in report["skipped"]}),
            len(lifecycle),
            sum(1 for entry in lifecycle if not entry["safe"]),
        ),
    }
    suites = ElementTree.fromstring(written["junit"])
    counts["junit"] = _summary(suites.find("testsuite/system-out").text or "")  # type: ignore[union-attr]
    conflict_failures = len(suites.findall(".//failure[@type='conflict']"))
    new = [conflict for conflict in report["conflicts"] if not conflict.get("known")]
    assert conflict_failures == sum(len(conflict["apps"]) for conflict in new)  # a known one fails no case

    markdown = written["markdown"]
    first = _summary(markdown.splitlines()[0])
    tables = dict(re.findall(r"^### (Conflicts|Unsafe lifecycle entries) \((\d+)\)$", markdown, re.M))
    by_code = sum(int(n) for n in re.findall(r"^### Warnings: `[^`]+` \((\d+)\)$", markdown, re.M))
    assert int(tables.get("Conflicts", 0)) == first.conflicts and by_code == first.warnings
    assert int(tables.get("Unsafe lifecycle entries", 0)) == first.unsafe
    counts["markdown"] = first

    log = checked_sarif(written["sarif"], root)
    rules = Counter(result["ruleId"] for result in log["runs"][0]["results"])
    levels = Counter(result["level"] for result in log["runs"][0]["results"])
    counts["sarif"] = counts["json"]._replace(
        conflicts=rules["conflict"], warnings=levels["warning"], unsafe=rules["unsafe-lifecycle"]
    )

    page = written["html"]
    if CHROMIUM is not None:  # what the browser shows, after load
        shutil.copy(scratch / "report.html", scratch / "page.html")
        page = dump_dom(scratch / "page.html")
    verdict = re.search(r'id="verdict">([^<]*)<', page)
    assert verdict is not None
    html = _summary(verdict[1])
    assert page.count('<tr class="shared conflict">') == html.conflicts
    assert page.count('<tr class="warning">') == html.warnings
    assert page.count('<li class="unsafe">') == html.unsafe
    assert page.count('<li class="skipped">') == len(report["skipped"])
    assert page.count('<th class="app">') == len({a for row in _map_apps(page) for a in row})
    counts["html"] = html
    return counts


def _map_apps(page: str) -> list[list[str]]:
    return [re.findall(r'<th class="app">([^<]*)</th>', page)]


def _agree(counts: dict[str, Counts]) -> Counts:
    assert len(set(counts.values())) == 1, counts
    return counts["text"]


def test_six_reports_of_the_shoong_fleet_agree_and_a_baseline_passes_the_same_run(tmp_path: Path, helm: str) -> None:
    status, written = _run_all(ROOT, SHOONG, helm, tmp_path)
    assert status == 1
    assert _agree(_counts_of_each(written, ROOT, tmp_path)) == Counts(5, 1, 0, 0, 0, 0)
    baseline = tmp_path / "baseline.json"
    assert run_cli(["check", *SHOONG, "--write-baseline", str(baseline)], env={"CHARTSHARE_HELM": helm}).exit_code == 0
    again, known = _run_all(ROOT, SHOONG, helm, tmp_path, "--baseline", str(baseline))
    assert again == 0
    assert json.loads(known["json"])["conflicts"][0]["known"] is True
    assert "<failure" not in known["junit"] and known["markdown"].startswith("✅")
    assert [r["baselineState"] for r in json.loads(known["sarif"])["runs"][0]["results"]] == ["unchanged"]


@pytest.fixture
def changed_fleet(tmp_path: Path) -> Path:
    return fleet_repository(tmp_path)


def test_six_reports_of_a_fleet_with_every_finding_agree_and_only_a_new_conflict_fails(
    tmp_path: Path, helm: str, changed_fleet: Path
) -> None:
    args = ["argocd", "--base", "HEAD~1"]
    scratch = tmp_path / "reports"
    scratch.mkdir()
    status, written = _run_all(changed_fleet, args, helm, scratch)
    assert status == 1
    # b, c, legacy; Namespace team and ClusterRole reader (b and legacy); auditor unprotected and three
    # nondeterministic Secrets; vault-secrets (another plugin); a's deletion moves two objects, one unsafely
    assert _agree(_counts_of_each(written, changed_fleet, scratch)) == Counts(3, 2, 4, 1, 2, 1)

    baseline = tmp_path / "baseline.json"
    recorded = run_cli(
        ["check", *args, "--write-baseline", str(baseline)], env={"CHARTSHARE_HELM": helm}, cwd=changed_fleet
    )
    assert recorded.exit_code == 0, recorded.stderr
    codes = Counter(entry["code"] for entry in json.loads(baseline.read_text())["findings"])
    assert codes == {"conflict": 2, "unsafe-lifecycle": 1, "nondeterministic": 3, "unprotected-shared": 1}
    again, known = _run_all(changed_fleet, args, helm, scratch, "--baseline", str(baseline))
    assert again == 0
    assert _agree(_counts_of_each(known, changed_fleet, scratch)) == Counts(3, 2, 4, 1, 2, 1)
    assert known["text"].rstrip().endswith("7 known (in the baseline)")

    # A new conflict: c stops following the rules (plain helm now), so it fights b and legacy
    c = changed_fleet / "argocd" / "c.yaml"
    c.write_text(c.read_text().replace("path: apps/shared\n    plugin: {name: chartshare-v1}", "path: charts/shared"))
    new, after = _run_all(changed_fleet, args, helm, scratch, "--baseline", str(baseline))
    assert new == 1
    fresh = [c for c in json.loads(after["json"])["conflicts"] if not c.get("known")]
    assert fresh and all("c" in conflict["apps"] for conflict in fresh)
    states = Counter(r.get("baselineState") for r in json.loads(after["sarif"])["runs"][0]["results"])
    assert states["new"] >= len(fresh)
