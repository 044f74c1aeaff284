"""SARIF for code scanning: every log valid against the published 2.1.0 schema, each result on the line
where the fix goes (the deciding rule, else the Application's metadata.name), fingerprints from the
finding's identity so that edits and shards leave them unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from reports_support import FLEET, checked_sarif, fleet_repository

from cmp.check.analysis.conflicts import AppRow, Report
from cmp.check.fleet.applications import Skip
from cmp.check.output.sarif import to_sarif
from conftest import run_cli


def _sarif(root: Path, helm: str, *extra: str) -> dict[str, object]:
    result = run_cli(["check", "argocd", "--format", "sarif", *extra], env={"CHARTSHARE_HELM": helm}, cwd=root)
    assert result.exit_code == 1, result.stderr
    return checked_sarif(result.stdout, root)


def _located(log: dict[str, object]) -> list[tuple[str, str, str, int]]:
    rows = []
    for result in log["runs"][0]["results"]:  # type: ignore[index]
        physical = result["locations"][0]["physicalLocation"]
        rows.append(
            (result["ruleId"], result["level"], physical["artifactLocation"]["uri"], physical["region"]["startLine"])
        )
    return rows


def test_each_result_sits_on_the_rule_that_decided_it_or_on_its_application(tmp_path: Path, helm: str) -> None:
    root = fleet_repository(tmp_path, change=False)
    log = _sarif(root, helm)
    driver = log["runs"][0]["tool"]["driver"]  # type: ignore[index]
    assert driver["name"] == "chartshare"
    assert {"conflict", "unsafe-lifecycle", "render-failed", "nondeterministic"} <= {r["id"] for r in driver["rules"]}
    assert sorted(_located(log)) == [
        ("conflict", "error", "apps/shared/chartshare.yaml", 6),  # Namespace team: rules[0]
        ("conflict", "error", "apps/shared/chartshare.yaml", 8),  # ClusterRole reader: rules[1]
        ("nondeterministic", "warning", "argocd/a.yaml", 4),  # no rule: the Application's metadata.name
        ("nondeterministic", "warning", "argocd/b.yaml", 4),
        ("nondeterministic", "warning", "argocd/c.yaml", 4),
        ("nondeterministic", "warning", "argocd/legacy.yaml", 5),
        ("unprotected-shared", "warning", "apps/shared/chartshare.yaml", 14),  # auditor: rules[3]
    ]
    conflict = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "conflict")  # type: ignore[index]
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in conflict["relatedLocations"]] == [
        "argocd/a.yaml",
        "argocd/legacy.yaml",
    ]


def test_fingerprints_hold_when_lines_move_and_across_shards(tmp_path: Path, helm: str) -> None:
    root = fleet_repository(tmp_path, change=False)
    before = _sarif(root, helm)
    rules = root / "apps" / "shared" / "chartshare.yaml"
    rules.write_text("# a comment moves every rule down\n\n" + rules.read_text(encoding="utf-8"), encoding="utf-8")
    after = _sarif(root, helm)

    def prints(log: dict[str, object]) -> list[str]:
        return sorted(r["partialFingerprints"]["chartshare/v1"] for r in log["runs"][0]["results"])  # type: ignore[index]

    assert prints(before) == prints(after)
    assert [row[3] for row in _located(after) if row[0] == "conflict"] == [8, 10]
    documents = []
    for index in (1, 2):
        shard = run_cli(["check", "argocd", "--shard", f"{index}/2"], env={"CHARTSHARE_HELM": helm}, cwd=root)
        assert shard.exit_code == 0, shard.stderr
        documents.append(tmp_path / f"shard-{index}.json")
        documents[-1].write_text(shard.stdout, encoding="utf-8")
    merged = run_cli(["check", "--merge", *map(str, documents), "--format", "sarif"], cwd=root)
    assert merged.exit_code == 1, merged.stderr
    assert json.loads(merged.stdout) == after


def test_a_failed_render_is_an_error_on_its_applications_name(tmp_path: Path) -> None:
    (tmp_path / "apps.yaml").write_text("# first\n" + (FLEET / "argocd" / "b.yaml").read_text(encoding="utf-8"))
    report = Report(
        (AppRow("a", "https://k", "ns", "helm", 1, located=(str(tmp_path / "apps.yaml"), 5)),),
        (),
        (),
        (Skip("b", "render failed: app path does not exist", (str(tmp_path / "apps.yaml"), 5)),),
        None,
    )
    log = checked_sarif(to_sarif(report, tmp_path), tmp_path)
    assert _located(log) == [("render-failed", "error", "apps.yaml", 5)]
