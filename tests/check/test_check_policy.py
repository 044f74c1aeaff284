"""`check --policy` over docs/rules.md's worked example (examples/fleet-policy: three AppProjects, platform,
team-a and team-b), with the real CLI and real helm of both majors: each Application renders under the entry
of its spec.project, as generate renders it under ARGOCD_APP_PROJECT_NAME.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cmp import manifests
from cmp.ownership.scope import ScopeTable, crd_scopes
from conftest import ROOT, Result, run_cli

EXAMPLE = ROOT / "examples" / "fleet-policy"
POLICY = EXAMPLE / "chartshare-policy.yaml"
FLEET = EXAMPLE / "argocd"
GITOPS = "https://git.example.com/platform/gitops.git"


def check(helm: str, *extra: str, policy: Path | None = POLICY, fleet: Path = FLEET) -> Result:
    given = ["--policy", str(policy)] if policy is not None else []
    mapped = ["--repo", f"{GITOPS}={ROOT}"]  # the fleet's repoURL, which a clone's own remote is not
    return run_cli(
        ["check", str(fleet), "--repo-root", str(ROOT), *mapped, "--helm", helm, "--no-cache", *given, *extra]
    )


def applications() -> list[dict[str, Any]]:
    return list(yaml.safe_load_all((FLEET / "apps.yaml").read_text()))


def generated(app: dict[str, Any], helm: str) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
    """(emitted, stripped) identities of one Application's generate, run as the sidecar runs it."""
    spec = app["spec"]
    parameters = spec["source"]["plugin"]["parameters"]
    result = run_cli(
        ["generate", str(ROOT / spec["source"]["path"]), "--repo-root", str(ROOT)],
        env={
            "ARGOCD_APP_NAME": app["metadata"]["name"],
            "ARGOCD_APP_NAMESPACE": spec["destination"]["namespace"],
            "ARGOCD_APP_PROJECT_NAME": spec["project"],
            "ARGOCD_APP_PARAMETERS": json.dumps(parameters),
            "CHARTSHARE_HELM": helm,
            "CHARTSHARE_POLICY": str(POLICY),
        },
    )
    assert result.exit_code == 0, result.stderr
    emitted = manifests.parse(result.stdout)
    scopes = ScopeTable.build(crd_scopes(r.identity() for r in emitted), (), ())
    namespace = spec["destination"]["namespace"]

    def identity(group: str, kind: str, name: str, in_namespace: str) -> tuple[str, ...]:
        landing = "" if scopes.of(group, kind).name == "CLUSTER" else in_namespace or namespace
        return (group, kind, landing, name)

    kept = {identity(r.group, r.kind, r.name, r.namespace) for r in emitted}
    stripped = set()
    for line in result.stderr.splitlines():
        if line.startswith("chartshare:   stripped "):
            kind_group, name = line.split()[2:4]
            kind, _, group = kind_group.partition(".")
            stripped.add(identity(group, kind, name, ""))
    return kept, stripped


def test_generate_and_check_agree_app_by_app_on_a_fleet_of_three_projects(helm: str) -> None:
    document = check(helm, "--shard", "1/1")
    assert document.exit_code == 0, document.stderr
    claims = {entry["name"]: entry for entry in json.loads(document.stdout)["applications"]}
    projects = {app["spec"]["project"] for app in applications()}
    assert projects == {"platform", "team-a", "team-b"}
    for app in applications():
        name = app["metadata"]["name"]
        emitted, stripped = generated(app, helm)
        assert {tuple(c["id"][1:]) for c in claims[name]["emitted"]} == emitted, name
        assert {tuple(c["id"][1:]) for c in claims[name]["stripped"]} == stripped, name
        entry = "projects[0]" if app["spec"]["project"] == "platform" else "projects[1]"
        assert claims[name]["policy"] == entry


def test_json_names_each_apps_entry_and_what_decided_each_shared_object(helm: str) -> None:
    result = check(helm, "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert {a["name"]: a["policy"] for a in report["applications"]} == {
        "platform-team-a": "projects[0]",
        "platform-team-b": "projects[0]",
        "team-a-web": "projects[1]",
        "team-b-web": "projects[1]",
    }
    assert report["conflicts"] == []
    namespace = next(d for d in report["policy_decisions"] if (d["kind"], d["name"]) == ("Namespace", "team-a"))
    assert namespace["emitted_by"] == ["platform-team-a"]
    assert [(e["entry"], e["apps"]) for e in namespace["entries"]] == [
        ("projects[0].rules[0]", ["platform-team-a"]),
        ("projects[1].rules[0]", ["team-a-web"]),
    ]
    assert namespace["entries"][1]["at"].endswith("chartshare-policy.yaml:15")
    codes = sorted((w["app"], w["code"], w["kind"]) for w in report["warnings"])
    assert codes == [
        ("team-a-web", "policy-forbidden", "ClusterRole"),
        ("team-a-web", "policy-forbidden", "ClusterRoleBinding"),
        ("team-a-web", "policy-override", "Namespace"),
        ("team-b-web", "policy-forbidden", "ClusterRole"),
        ("team-b-web", "policy-forbidden", "ClusterRoleBinding"),
        ("team-b-web", "policy-override", "Namespace"),
    ]
    override = next(w for w in report["warnings"] if w["code"] == "policy-override" and w["app"] == "team-a-web")
    assert "chartshare-policy.yaml:15: projects[1].rules[0]" in override["message"]  # both lines
    assert "apps/team-a-web/chartshare.yaml:6: rules[0]" in override["message"]


def test_text_names_the_entry_beside_each_shared_object(helm: str) -> None:
    result = check(helm)
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "POLICY (objects several apps render, decided by the fleet policy)" in text
    assert "  Namespace team-a  emitted by platform-team-a\n    projects[0].rules[0] (" in text
    assert "chartshare-policy.yaml:15): team-a-web\n" in text
    assert "RESOURCES  POLICY" in text and "[policy-forbidden]" in text and "[policy-override]" in text
    assert "[nobody-emits]" not in text  # a forbidden object's own warning says why nobody emits it


def test_without_policy_the_tenants_claims_fight_and_reports_are_as_before(helm: str) -> None:
    result = check(helm, "--format", "json", policy=None)
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert "policy_decisions" not in report and all("policy" not in a for a in report["applications"])
    assert {(c["kind"], c["name"]) for c in report["conflicts"]} >= {("Namespace", "team-a"), ("Namespace", "team-b")}


def test_shards_merged_give_the_single_runs_report(helm: str, tmp_path: Path) -> None:
    parts = []
    for shard in ("1/2", "2/2"):
        part = check(helm, "--shard", shard)
        assert part.exit_code == 0, part.stderr
        parts.append(tmp_path / f"{shard.replace('/', '-')}.json")
        parts[-1].write_text(part.stdout)
    merged = run_cli(["check", "--merge", *map(str, parts), "--format", "json"])
    assert merged.stdout == check(helm, "--format", "json").stdout


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects:\n  - match: [a]\n    forbid: [{knd: X}]\n", 5),
        ("apiVersion: chartshare/v1\nkind: ChartSharePolicy\nprojects: {}\n", 3),
    ],
)
def test_a_malformed_policy_is_bad_input_naming_file_and_line(helm: str, tmp_path: Path, text: str, line: int) -> None:
    policy = tmp_path / "chartshare-policy.yaml"
    policy.write_text(text)
    result = check(helm, policy=policy)
    assert (result.exit_code, result.stdout) == (2, "")
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"chartshare: error: {policy}:{line}: "), result.stderr
    missing = check(helm, policy=tmp_path / "nowhere.yaml")
    assert (missing.exit_code, missing.stdout) == (2, "")


def test_html_names_the_entry_in_each_cell_the_policy_decided(helm: str) -> None:
    result = check(helm, "--format", "html")
    assert result.exit_code == 0, result.stderr
    assert "policy projects[1].rules[0] (chartshare-policy.yaml:15)" in result.stdout  # team-a-web's Namespace
    assert "policy projects[0].rules[1] (chartshare-policy.yaml:8)" in result.stdout  # the platform's CRD


def test_sarif_locates_policy_findings_in_the_repository_not_the_sidecars_policy_file(
    helm: str, tmp_path: Path
) -> None:
    outside = tmp_path / "chartshare-policy.yaml"  # as a ConfigMap's source outside the checkout
    outside.write_text(POLICY.read_text())
    result = check(helm, "--format", "sarif", policy=outside)
    assert result.exit_code == 0, result.stderr
    (run,) = json.loads(result.stdout)["runs"]
    uris = {
        location["physicalLocation"]["artifactLocation"]["uri"]
        for finding in run["results"]
        for location in finding["locations"]
    }
    assert uris == {"examples/fleet-policy/argocd/apps.yaml"}
    assert {finding["ruleId"] for finding in run["results"]} == {"policy-forbidden", "policy-override"}
