"""The report: text for people and CI logs, JSON for tools, and when a progress bar is wanted."""

from __future__ import annotations

import json

import pytest

from cmp.check.analysis.conflicts import Report
from cmp.check.analysis.findings import Finding, Together
from cmp.check.output.json_report import to_json
from cmp.check.output.text_report import progress_wanted, to_text
from cmp.model import ClusterResourceId


@pytest.mark.parametrize(
    ("tty", "json_output", "env", "jobs", "wanted"),
    [
        (True, False, {}, 20, True),
        (False, False, {}, 20, False),
        (True, True, {}, 20, False),
        (True, False, {"CI": "true"}, 20, False),
        (True, False, {"CI": "false"}, 20, True),
        (True, False, {}, 3, False),
    ],
)
def test_a_progress_bar_only_for_a_person_at_a_terminal(
    tty: bool, json_output: bool, env: dict[str, str], jobs: int, wanted: bool
) -> None:
    assert progress_wanted(tty, json_output, env, jobs) is wanted


def _finding(name: str, code: str = "unprotected-shared", app: str = "a", detail: str = "") -> Finding:
    key = ClusterResourceId("https://k", "rbac.authorization.k8s.io", "ClusterRole", "", name)
    together = Together("shared objects emitted only by a", detail, "Protect them.")
    return Finding(app, code, key, f"{key} is shared. Protect it.", together)


def _report(*warnings: Finding) -> Report:
    return Report(applications=(), conflicts=(), warnings=warnings, skipped=(), prune_risks=None)


def _warning_lines(report: Report) -> list[str]:
    text = to_text(report)
    return text[text.index("WARNINGS\n") : text.index("\n\n")].splitlines()[1:]


def test_warnings_of_one_code_for_one_app_share_one_entry_listing_their_objects() -> None:
    report = _report(_finding("x", detail="rendered by a, b"), _finding("y", detail="rendered by a, c"))
    assert _warning_lines(report) == [
        "  a: 2 shared objects emitted only by a [unprotected-shared]",
        "    - ClusterRole.rbac.authorization.k8s.io x: rendered by a, b",
        "    - ClusterRole.rbac.authorization.k8s.io y: rendered by a, c",
        "    Protect them.",
    ]


def test_a_detail_every_object_of_an_entry_shares_is_said_once() -> None:
    report = _report(_finding("x", detail="rendered by a, b"), _finding("y", detail="rendered by a, b"))
    assert _warning_lines(report)[:2] == [
        "  a: 2 shared objects emitted only by a (rendered by a, b) [unprotected-shared]",
        "    - ClusterRole.rbac.authorization.k8s.io x",
    ]


def test_a_warning_alone_in_its_group_reads_as_its_own_message() -> None:
    report = _report(_finding("x"), _finding("y", app="b"), _finding("z", code="nobody-emits"))
    assert _warning_lines(report) == [
        "  a: ClusterRole x [unprotected-shared]",
        "    ClusterRole.rbac.authorization.k8s.io x is shared. Protect it.",
        "  b: ClusterRole y [unprotected-shared]",
        "    ClusterRole.rbac.authorization.k8s.io y is shared. Protect it.",
        "  a: ClusterRole z [nobody-emits]",
        "    ClusterRole.rbac.authorization.k8s.io z is shared. Protect it.",
    ]


def test_json_keeps_one_warning_per_object_with_its_code_and_full_identity() -> None:
    report = _report(_finding("x"), _finding("y"))
    warnings = json.loads(to_json(report))["warnings"]
    assert [list(warning) for warning in warnings] == [
        ["app", "kind", "name", "message", "code", "cluster", "group", "namespace"]
    ] * 2
    assert warnings[1] == {
        "app": "a",
        "kind": "ClusterRole",
        "name": "y",
        "message": "ClusterRole.rbac.authorization.k8s.io y is shared. Protect it.",
        "code": "unprotected-shared",
        "cluster": "https://k",
        "group": "rbac.authorization.k8s.io",
        "namespace": "",
    }


def test_the_summary_counts_every_warning_not_every_entry() -> None:
    assert to_text(_report(_finding("x"), _finding("y"))).endswith(
        "chartshare check: 0 applications, 0 conflicts, 2 warnings, 0 skipped\n"
    )
