"""The per-team operator example: three apps render one operator chart; team-a owns the CRDs, every app
gets its own renamed copy of everything else cluster-scoped, and every reference resolves in its output.

Every rendered object of every example is validated against the Kubernetes 1.31 JSON schemas (strict mode,
the schemas ship inside the kubernetes-validate package, so this runs without network), and its name
against the kind's naming rule.
"""

from __future__ import annotations

import functools
import json
import socket
from typing import Any

import kubernetes_validate
import pytest

from cmp import manifests, name_rules
from cmp.manifests import Resource
from cmp.ownership.scope import Scope, ScopeTable
from conftest import ROOT, helm_template, named_objects, run_cli

EXAMPLE = ROOT / "examples" / "operator-teams"
TEAMS = ("team-a", "team-b", "team-c")
CRD_OWNER = "team-a"
KUBERNETES = "1.31"
SHOONG = ROOT / "examples" / "shoong-delivery"
SHOONG_SERVICES = ("order", "kitchen", "delivery", "notification", "batch")
SCOPES = ScopeTable()

Identity = tuple[str, str, str, str]


@functools.cache
def _team(team: str, helm: str) -> tuple[list[Resource], str]:
    """One render per team and helm binary; the tests only read it."""
    env = {
        "ARGOCD_APP_NAME": team,
        "ARGOCD_APP_NAMESPACE": team,
        "ARGOCD_APP_SOURCE_PATH": "examples/operator-teams/apps/teams",
        "CHARTSHARE_HELM": helm,
    }
    result = run_cli(["generate"], env=env, cwd=EXAMPLE / "apps" / "teams")
    assert result.exit_code == 0, result.stderr
    return manifests.parse(result.stdout), result.stderr


def _shoong(service: str, helm: str) -> list[Resource]:
    files = [f"/examples/shoong-delivery/values/{name}.yaml" for name in ("common", service)]
    env = {
        "ARGOCD_APP_NAME": f"dev-shoong-{service}",
        "ARGOCD_APP_NAMESPACE": "shoong",
        "ARGOCD_APP_SOURCE_PATH": f"examples/shoong-delivery/apps/dev/{service}",
        "ARGOCD_APP_PARAMETERS": json.dumps([{"name": "values-files", "array": files}]),
        "CHARTSHARE_HELM": helm,
    }
    result = run_cli(["generate"], env=env, cwd=SHOONG / "apps" / "dev" / service)
    assert result.exit_code == 0, result.stderr
    return manifests.parse(result.stdout)


def _landing(resource: Resource, destination: str) -> str:
    if SCOPES.of(resource.group, resource.kind) is Scope.CLUSTER:
        return ""
    return resource.namespace or destination


def _identity(resource: Resource, destination: str) -> Identity:
    return resource.group, resource.kind, _landing(resource, destination), resource.name


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a network connection fails the test: schema validation must work offline."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the schema validation tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def _validate(resources: list[Resource]) -> None:
    for resource in resources:
        try:
            kubernetes_validate.validate(resource.obj, KUBERNETES, strict=True)
        except kubernetes_validate.ValidationError as error:
            where = ".".join(str(part) for part in error.path)
            pytest.fail(f"{resource.id} is invalid for Kubernetes {KUBERNETES}: {where}: {error.message}")
        except kubernetes_validate.SchemaNotFoundError as error:
            pytest.fail(f"{resource.id}: {error.message}")
        problem = name_rules.rule_for(resource.group, resource.kind).problem(resource.name)
        assert problem is None, f"{resource.id}: {problem}"


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("team", TEAMS)
def test_every_object_of_every_team_passes_the_kubernetes_schemas(team: str, helm: str) -> None:
    resources, _ = _team(team, helm)
    _validate(resources)


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("service", SHOONG_SERVICES)
def test_every_object_of_the_shoong_example_passes_the_kubernetes_schemas(service: str, helm: str) -> None:
    _validate(_shoong(service, helm))


def test_no_two_teams_emit_the_same_object(helm: str) -> None:
    claims: dict[Identity, str] = {}
    for team in TEAMS:
        resources, _ = _team(team, helm)
        for resource in resources:
            other = claims.setdefault(_identity(resource, team), team)
            assert other == team, f"{resource.id} is emitted by {other} and {team}"


@pytest.mark.parametrize("team", TEAMS)
def test_only_team_a_emits_the_crds_and_protects_them(team: str, helm: str) -> None:
    resources, stderr = _team(team, helm)
    crds = [r for r in resources if r.kind == "CustomResourceDefinition"]
    if team == CRD_OWNER:
        assert sorted(r.name for r in crds) == ["widgetclasses.ops.example.io", "widgets.ops.example.io"]
        for crd in crds:
            assert crd.metadata["annotations"]["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"
    else:
        assert crds == []
        assert "stripped CustomResourceDefinition.apiextensions.k8s.io widgets.ops.example.io" in stderr


@pytest.mark.parametrize("team", TEAMS)
def test_every_cluster_scoped_object_but_the_crds_carries_the_team_name(team: str, helm: str) -> None:
    resources, _ = _team(team, helm)
    cluster_scoped = [
        r for r in resources if SCOPES.of(r.group, r.kind) is Scope.CLUSTER and r.kind != "CustomResourceDefinition"
    ]
    assert len(cluster_scoped) == 6
    assert all(r.name.startswith(f"{team}-") for r in cluster_scoped), [r.name for r in cluster_scoped]


@pytest.mark.parametrize("team", TEAMS)
def test_every_reference_resolves_within_the_teams_output(team: str, helm: str) -> None:
    resources, _ = _team(team, helm)
    present = {_identity(r, team) for r in resources}
    checked = 0
    for resource in resources:
        for target, pointer in named_objects(resource, _landing(resource, team)):
            assert target in present, f"{resource.id} {pointer} dangles"
            checked += 1
    assert checked >= 7  # roleRefs, subjects, priorityClassName, serviceAccountName, webhook service
    deployment = next(r for r in resources if r.kind == "Deployment")
    env = deployment.obj["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "WEBHOOK_CONFIGURATION", "value": f"{team}-widget-operator.ops.example.io"}]


@pytest.mark.parametrize("team", TEAMS)
def test_documents_no_rule_touched_are_byte_identical_to_helm(team: str, helm: str) -> None:
    resources, _ = _team(team, helm)
    raw = helm_template(
        helm,
        EXAMPLE / "charts" / "widget-operator",
        f"--name-template={team}",
        f"--namespace={team}",
        "--include-crds",
    )
    helm_text = {(r.kind, r.name): r.text for r in manifests.parse(raw)}
    untouched = [r for r in resources if r.kind in ("ServiceAccount", "Service", "Role", "RoleBinding")]
    assert len(untouched) == 4
    for resource in untouched:
        assert not resource.changed
        assert resource.text == helm_text[(resource.kind, resource.name)]


def test_the_report_names_the_aggregation_rule(helm: str) -> None:
    _, stderr = _team("team-b", helm)
    assert (
        "notice: ClusterRole.rbac.authorization.k8s.io team-b-widget-operator:widget-admin picks ClusterRoles by "
        "label (/aggregationRule/clusterRoleSelectors)"
    ) in stderr
