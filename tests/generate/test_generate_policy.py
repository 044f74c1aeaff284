"""`generate` under the fleet policy, run as Argo CD runs it (the real CLI, real helm of both majors), with
docs/rules.md's worked example (examples/fleet-policy): a platform project owns every team's Namespace and
the CRDs, each team's project is forbidden cluster RBAC.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmp import manifests
from conftest import ROOT, Result, run_cli

EXAMPLE = ROOT / "examples" / "fleet-policy"
POLICY = EXAMPLE / "chartshare-policy.yaml"
APPS = {  # app: (project, team, component), as examples/fleet-policy/argocd/apps.yaml has them
    "platform-team-a": ("platform", "team-a", "platform"),
    "platform-team-b": ("platform", "team-b", "platform"),
    "team-a-web": ("team-a", "team-a", "web"),
    "team-b-web": ("team-b", "team-b", "web"),
}


def generate(
    app: str, helm: str, *, policy: Path | None = POLICY, root: Path = EXAMPLE, env: dict[str, str] | None = None
) -> Result:
    project, team, component = APPS[app]
    values = ["--set", f"team={team}", "--set", f"component={component}"]
    return run_cli(
        ["generate", str(root / "apps" / app), "--repo-root", str(root), *values],
        env={
            "ARGOCD_APP_NAME": app,
            "ARGOCD_APP_NAMESPACE": team,
            "ARGOCD_APP_PROJECT_NAME": project,
            "CHARTSHARE_HELM": helm,
            **({"CHARTSHARE_POLICY": str(policy)} if policy is not None else {}),
            **(env or {}),
        },
    )


def kinds(result: Result) -> list[tuple[str, str]]:
    assert result.exit_code == 0, result.stderr
    return sorted((r.kind, r.name) for r in manifests.parse(result.stdout))


def test_a_tenant_claiming_the_shared_namespace_emits_nothing_of_it_and_says_why(helm: str) -> None:
    result = generate("team-a-web", helm)
    assert ("Namespace", "team-a") not in kinds(result)
    assert "stripped Namespace team-a (policy projects[1].rules[0]: owned by platform-*)" in result.stderr
    overridden = [line for line in result.stderr.splitlines() if "does not apply" in line]
    assert len(overridden) == 1  # once per object
    assert "chartshare-policy.yaml:15: projects[1].rules[0]" in overridden[0]
    assert "apps/team-a-web/chartshare.yaml:6: rules[0]" in overridden[0]
    without = generate("team-a-web", helm, policy=None)  # the tenant's own rule, as it wrote it
    assert ("Namespace", "team-a") in kinds(without)


def test_the_platform_app_owns_and_protects_the_namespace_and_the_crd(helm: str) -> None:
    result = generate("platform-team-a", helm)
    objects = {(r.kind, r.name): r for r in manifests.parse(result.stdout)}
    for key in (("Namespace", "team-a"), ("CustomResourceDefinition", "widgets.platform.example.io")):
        options = objects[key].obj["metadata"]["annotations"]["argocd.argoproj.io/sync-options"]
        assert options == "Prune=false,Delete=false"


def test_a_forbidden_kind_is_stripped_with_a_notice_even_a_binding_of_the_apps_own_account(helm: str) -> None:
    result = generate("team-b-web", helm)
    assert kinds(result) == [("ConfigMap", "web-settings"), ("ServiceAccount", "web")]
    notices = [line for line in result.stderr.splitlines() if "forbidden in this project" in line and "notice" in line]
    assert len(notices) == 2
    assert any("ClusterRoleBinding.rbac.authorization.k8s.io team-b-web-nodes" in line for line in notices)
    assert "projects[1].forbid[1]" in result.stderr


def test_protect_holds_where_the_tenant_writes_protect_false(helm: str, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects:\n"
        "  - match: ['team-*']\n    protect:\n      - {kind: Namespace}\n"
    )
    result = generate("team-a-web", helm, policy=policy)
    namespace = next(r for r in manifests.parse(result.stdout) if r.kind == "Namespace")
    assert namespace.obj["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"
    assert "protected Namespace team-a (rules[0]: owner; protected by policy projects[0].protect[0])" in result.stderr
    assert "the fleet policy protects Namespace team-a" in result.stderr
    assert "`protect: false` in the app's own" in result.stderr
    plain = generate("team-a-web", helm, policy=None)
    assert "sync-options" not in plain.stdout


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects:\n  - match: [x]\n    forbd: []\n", 5, "forbid"),
        ("apiVersion: chartshare/v1\nkind: ChartShare\nprojects: []\n", 2, "ChartSharePolicy"),
        (
            "apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects:\n  - {match: x, allowRepoRules: 1}\n",
            4,
            "true",
        ),
        ("apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects: [\n", 4, "not valid YAML"),
        ("", 1, "empty"),
    ],
)
def test_a_malformed_policy_fails_every_render_with_one_line(
    helm: str, tmp_path: Path, text: str, line: int, words: str
) -> None:
    policy = tmp_path / "chartshare-policy.yaml"
    policy.write_text(text)
    for app in APPS:  # every project's apps, the ones no entry names too
        result = generate(app, helm, policy=policy)
        assert result.exit_code == 1
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"chartshare: error: {policy}:{line}: ")
        assert words in lines[0]


def test_a_policy_path_that_names_no_file_fails_and_the_default_path_missing_means_none(
    helm: str, tmp_path: Path
) -> None:
    missing = generate("team-a-web", helm, policy=tmp_path / "nowhere.yaml")
    assert (missing.exit_code, missing.stdout) == (1, "")
    assert missing.stderr.startswith(f"chartshare: error: {tmp_path / 'nowhere.yaml'}: ")
    assert len(missing.stderr.splitlines()) == 1
    assert generate("team-a-web", helm, policy=None).exit_code == 0  # no CHARTSHARE_POLICY: the default path


def test_allow_repo_rules_false_refuses_an_app_file_with_rules(helm: str, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects:\n  - match: [platform]\n"
        "  - match: ['team-*']\n    allowRepoRules: false\n"
    )
    refused = generate("team-a-web", helm, policy=policy)
    assert (refused.exit_code, refused.stdout) == (1, "")
    assert "apps/team-a-web/chartshare.yaml:6: rules:" in refused.stderr
    assert f"{policy}:5: projects[1]" in refused.stderr
    assert generate("platform-team-a", helm, policy=policy).exit_code == 0  # its file has no rules


def test_no_project_means_project_default(helm: str, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects:\n"
        "  - match: [default]\n    forbid: [{kind: ConfigMap}]\n"
    )
    result = generate("team-a-web", helm, policy=policy, env={"ARGOCD_APP_PROJECT_NAME": ""})
    assert ("ConfigMap", "web-settings") not in kinds(result)


def test_the_render_cache_never_serves_a_render_made_under_another_policy(helm: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY.read_text())
    cache = {"CHARTSHARE_CACHE": str(tmp_path / "cache"), "CHARTSHARE_RENDER_CACHE": "on"}

    def run(project: str | None = None) -> Result:
        extra = {**cache, **({"ARGOCD_APP_PROJECT_NAME": project} if project else {})}
        return generate("team-a-web", helm, policy=policy, root=repo, env=extra)

    first = run()
    assert "(cached)" not in first.stderr
    again = run()
    assert "(cached)" in again.stderr and again.stdout == first.stdout
    policy.write_text(POLICY.read_text().replace("      - {group: rbac.authorization.k8s.io, kind: ClusterRole}\n", ""))
    edited = run()
    assert "(cached)" not in edited.stderr
    assert ("ClusterRole", "team-a-web-nodes") in kinds(edited)
    moved = tmp_path / "elsewhere.yaml"
    moved.write_text(policy.read_text())  # the same content under another path: the same key
    same = generate("team-a-web", helm, policy=moved, root=repo, env=cache)
    assert "(cached)" in same.stderr and same.stdout == edited.stdout
    other_project = run("platform")  # another entry of the same policy
    assert "(cached)" not in other_project.stderr
    assert ("Namespace", "team-a") not in kinds(edited)
    assert kinds(other_project) != kinds(edited)
    none = generate("team-a-web", helm, policy=None, root=repo, env=cache)
    assert "(cached)" not in none.stderr and ("Namespace", "team-a") in kinds(none)
