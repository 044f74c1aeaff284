"""The report: text for people and CI logs, JSON for tools, and when a progress bar is wanted."""

from __future__ import annotations

import pytest

from cmp.check.report import progress_wanted


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
