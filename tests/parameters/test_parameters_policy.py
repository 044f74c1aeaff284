"""`chartshare parameters` under the fleet policy: the Parameters tab shows what decides the app's own objects
(its project's entries), and nothing else of the platform's file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import ROOT, run_cli

EXAMPLE = ROOT / "examples" / "fleet-policy"
POLICY = EXAMPLE / "chartshare-policy.yaml"


def _config_tooltip(helm: str, policy: Path, app: str = "team-a-web", project: str = "team-a") -> str:
    parameters = json.dumps([{"name": "set", "map": {"team": "team-a", "component": "web"}}])
    result = run_cli(
        ["parameters"],
        env={
            "ARGOCD_APP_NAME": app,
            "ARGOCD_APP_PROJECT_NAME": project,
            "ARGOCD_APP_SOURCE_PATH": f"examples/fleet-policy/apps/{app}",
            "ARGOCD_APP_PARAMETERS": parameters,
            "CHARTSHARE_HELM": helm,
            "CHARTSHARE_POLICY": str(policy),
        },
        cwd=EXAMPLE / "apps" / app,
    )
    assert result.exit_code == 0, result.stderr
    entries: dict[str, dict[str, Any]] = {entry["name"]: entry for entry in json.loads(result.stdout)}
    return str(entries["config"]["tooltip"])


def test_the_tab_shows_the_policy_entries_that_decide_the_apps_own_objects_and_no_other(helm: str) -> None:
    tooltip = _config_tooltip(helm, POLICY)
    assert "stripped Namespace team-a (policy projects[1].rules[0]: owned by platform-*)" in tooltip
    assert "projects[1].forbid[1]" in tooltip
    assert "projects[0]" not in tooltip  # the platform project's entry decides nothing of this app
    assert "allowRepoRules" not in tooltip and "protect:" not in tooltip


def test_a_broken_policy_is_named_by_place_only(helm: str, tmp_path: Path) -> None:
    policy = tmp_path / "chartshare-policy.yaml"
    policy.write_text(
        "apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects:\n  - match: [secret-team-*]\n"
        "    forbid: [{kind: Secret, nmae: payroll-*}]\n"
    )
    tooltip = _config_tooltip(helm, policy)
    assert f"the fleet policy ({policy}:5) is missing or not valid" in tooltip
    assert "payroll" not in tooltip and "secret-team" not in tooltip and "nmae" not in tooltip
    missing = _config_tooltip(helm, tmp_path / "nowhere.yaml")
    assert f"the fleet policy ({tmp_path / 'nowhere.yaml'}) is missing or not valid" in missing
