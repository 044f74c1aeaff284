"""The fleet policy's reader and the decisions it makes before an app's own rules (pure: YAML strings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmp import manifests
from cmp.errors import ConfigError
from cmp.model import Action, App
from cmp.ownership import policy, rules
from cmp.ownership.process import process

HEAD = "apiVersion: chartshare/v1\nkind: ChartSharePolicy\n"
EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "fleet-policy" / "chartshare-policy.yaml").read_text()


def test_the_worked_example_reads_and_each_project_finds_its_entry() -> None:
    read = policy.parse(EXAMPLE, "chartshare-policy.yaml")
    platform, teams = read.projects
    assert read.entry_for("platform") == platform
    assert read.entry_for("team-a") == teams and read.entry_for("team-zz") == teams
    assert read.entry_for("default") is None and read.entry_for("") is None
    assert teams.label == "chartshare-policy.yaml:13: projects[1]"
    assert [entry.match.kind for entry in teams.forbid] == ["ClusterRole", "ClusterRoleBinding"]
    assert teams.rules[0].owners == ("platform-*",) and teams.allow_repo_rules


def test_the_first_entry_that_globs_the_project_wins_and_no_project_is_default() -> None:
    read = policy.parse(HEAD + "projects:\n  - match: default\n  - match: ['*']\n", "p.yaml")
    assert read.entry_for("").position == 0
    assert read.entry_for("other").position == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "projects:\n  - match: [a]\n    rules:\n      - match: {kind: X}\n        ownr: a\n",
            "p.yaml:7: projects[0].rules[0]: unknown key 'ownr'; did you mean 'owner'?",
        ),
        ("projects:\n  - rules: []\n", "p.yaml:4: projects[0]: missing `match:`"),
        (
            "projects:\n  - match: [a]\n    forbid: {kind: X}\n",
            "p.yaml:5: projects[0].forbid: must be a list, got a mapping",
        ),
        ("projects:\n  - match: [a]\n    protect: [{}]\n", "p.yaml:5: projects[0].protect[0]: is empty"),
        (
            "projects:\n  - match: [a]\n    allowRepoRules: 'no'\n",
            "p.yaml:5: projects[0].allowRepoRules: must be true or false",
        ),
        ("project: []\n", "p.yaml:3: unknown key 'project'; did you mean 'projects'?"),
        ("", "p.yaml:1: missing `projects:`"),
        ("projects:\n  - &a {match: [a]}\n  - *a\n", "p.yaml:4: YAML anchors and aliases are not allowed here"),
    ],
)
def test_every_error_names_the_policy_file_and_line(body: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        policy.parse(HEAD + body, "p.yaml")
    assert str(raised.value).startswith(message), str(raised.value)
    assert "\n" not in str(raised.value)


def _render() -> list[manifests.Resource]:
    return manifests.parse(
        "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"
        "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: web\n  namespace: team-a\n"
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: web\n"
        "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n"
        "subjects: [{kind: ServiceAccount, name: web, namespace: team-a}]\n"
    )


def _tenant(text: str) -> rules.Ownership:
    return rules.parse(
        "apiVersion: chartshare/v1\nkind: ChartShare\n" + text, Path("chartshare.yaml"), "a/chartshare.yaml"
    )


APP = App("team-a-web", "web", "team-a")


def test_a_policy_rule_decides_before_the_apps_own_and_the_override_is_said_once() -> None:
    entry = policy.parse(EXAMPLE, "pol.yaml").entry_for("team-a")
    tenant = _tenant("unowned: keep\nrules:\n  - match: {kind: Namespace}\n    owner: team-a-web\n")
    outcome = process(_render(), tenant, APP, entry)
    assert [a.resource.kind for a in outcome.emitted] == ["ServiceAccount"]
    namespace = outcome.stripped[0]
    assert namespace.decision.policy is not None and namespace.decision.policy.place == "projects[1].rules[0]"
    assert namespace.decision.origin == "policy projects[1].rules[0]"
    said = [n for n in outcome.notices if "does not apply" in n]
    assert said == [
        "notice: the fleet policy decides Namespace team-a (pol.yaml:15: projects[1].rules[0]): the app's own "
        "a/chartshare.yaml:5: rules[0] does not apply to it; the platform team's policy comes first"
    ]


def test_forbid_strips_a_binding_of_the_apps_own_account_where_a_rule_could_not() -> None:
    tenant = _tenant("unowned: keep\nrules:\n  - match: {kind: ClusterRoleBinding}\n    owner: someone-else\n")
    from cmp.errors import RuleError

    with pytest.raises(RuleError, match="own ServiceAccount team-a/web"):
        process(_render(), tenant, APP)
    entry = policy.parse(HEAD + "projects:\n  - match: ['*']\n    forbid: [{kind: ClusterRoleBinding}]\n", "p.yaml")
    outcome = process(_render(), tenant, APP, entry.entry_for("team-a"))
    (binding,) = outcome.stripped
    assert binding.decision.action is Action.STRIP and binding.decision.origin == "policy projects[0].forbid[0]"
    assert any(
        "forbidden in this project by the fleet policy (p.yaml:5: projects[0].forbid[0])" in n for n in outcome.notices
    )


def test_without_a_chartshare_yaml_the_policy_decides_and_everything_else_passes_through() -> None:
    entry = policy.parse(HEAD + "projects:\n  - match: ['*']\n    forbid: [{kind: Namespace}]\n", "p.yaml")
    outcome = process(_render(), None, APP, entry.entry_for("x"))
    assert [a.resource.kind for a in outcome.emitted] == ["ServiceAccount", "ClusterRoleBinding"]
    assert not any(a.resource.changed for a in outcome.emitted)  # helm's bytes
    assert [a.resource.kind for a in outcome.stripped] == ["Namespace"]
