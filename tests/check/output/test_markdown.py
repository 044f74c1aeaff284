"""The pull-request comment: the verdict first, tables a reviewer reads, under GitHub's size limit however
large the fleet, and nothing from a repository turned into markup."""

from __future__ import annotations

import re

from cmp.check.analysis.conflicts import AppRow, Conflict, Report
from cmp.check.analysis.findings import Finding
from cmp.check.fleet.applications import Skip
from cmp.check.output import markdown
from cmp.model import ClusterResourceId

CLUSTER = "https://kubernetes.default.svc"


def _fleet(conflicts: int, warnings: int = 0, skipped: int = 0) -> Report:
    """A synthetic analysis (no helm: the size of the report is the point) with long names, as real charts
    have."""
    apps = [f"team-{n:02d}-platform-operator" for n in range(25)]
    rows = tuple(AppRow(app, CLUSTER, "ops", "helm", conflicts) for app in apps)
    found = tuple(
        Conflict(
            ClusterResourceId(CLUSTER, "rbac.authorization.k8s.io", "ClusterRole", "", f"operator-role-{n:05d}"),
            tuple(apps[n % 20 : n % 20 + 5]),
        )
        for n in range(conflicts)
    )
    said = tuple(
        Finding(apps[0], "unprotected-shared", found[n].id, f"{found[n].id} is shared without Prune=false " * 5)
        for n in range(warnings)
    )
    skips = tuple(Skip(f"skipped-{n}", "render failed: the chart is missing") for n in range(skipped))
    return Report(rows, found, said, skips, None)


def test_the_first_line_is_the_verdict_with_the_summarys_counts() -> None:
    body = markdown.to_markdown(_fleet(3, warnings=2))
    assert body.splitlines()[0] == (
        "❌ **chartshare check fails**: 25 applications, 3 conflicts, 2 warnings, 0 skipped"
    )
    assert markdown.to_markdown(_fleet(0)).startswith("✅ **chartshare check passes**: 25 applications, 0 conflicts")


def test_every_row_is_shown_when_the_report_fits() -> None:
    body = markdown.to_markdown(_fleet(40, warnings=3, skipped=2))
    assert len(re.findall(r"^\| ClusterRole\.rbac\.authorization", body, re.M)) == 40
    assert "more: see the JSON report" not in body
    assert body.rstrip().endswith(markdown.MARKER)


def test_two_thousand_conflicts_stay_under_the_limit_each_table_cut_with_what_is_left() -> None:
    body = markdown.to_markdown(_fleet(2000, warnings=300, skipped=400))
    assert len(body) <= markdown.LIMIT
    assert len(markdown.to_markdown(_fleet(2000, warnings=300, skipped=400), limit=10**9)) > markdown.LIMIT
    shown = len(re.findall(r"^\| ClusterRole\.rbac\.authorization", body, re.M))
    assert 0 < shown < 2000
    assert f"\n{2000 - shown} more: see the JSON report (`--report json=FILE`).\n" in body
    assert f"- {400 - shown} more: see the JSON report" in body
    assert body.splitlines()[0].endswith("2000 conflicts, 300 warnings, 400 skipped")
    assert body.rstrip().endswith(markdown.MARKER)
    for line in body.splitlines():  # every row whole: a cut never falls inside a table row
        assert not line.startswith("|") or line.endswith(" |"), line


def test_names_from_a_repository_stay_text() -> None:
    hostile = "<script>alert(1)</script>|[x](https://evil.example)@team*b*"
    key = ClusterResourceId(CLUSTER, "", "ConfigMap", "ns", hostile)
    report = Report(
        (AppRow(hostile, CLUSTER, "ns", "helm", 1),),
        (Conflict(key, (hostile, "other")),),
        (),
        (Skip(hostile, hostile),),
        None,
    )
    body = markdown.to_markdown(report)
    assert "<script>" not in body
    assert "&lt;script&gt;" in body
    assert "[x](" not in body and "\\[x\\](" in body
    assert "\\@team" in body and "\\*b\\*" in body
    table = [line for line in body.splitlines() if line.startswith("| ConfigMap")]
    assert len(table) == 1 and table[0].count(" | ") == 3  # the name's `|` split no cell
