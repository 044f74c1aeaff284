from typing import Any

import pytest

from cmp.model import split_api_version
from cmp.ownership.scope import Scope, ScopeTable, builtin_scope, crd_scopes, parse_kind_entry
from cmp.ownership.scope_kinds import (
    BUILTIN_CLUSTER_SCOPED,
    BUILTIN_NAMESPACED,
    CLUSTER_SCOPED_GROUPS,
    CRD_CLUSTER_SCOPED,
    CRD_NAMESPACED,
)

BUILTINS_ONLY = ScopeTable()


def crd(group: str, kind: str, scope: Any, api_version: str = "apiextensions.k8s.io/v1") -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.lower()}s.{group}"},
        "spec": {"group": group, "names": {"kind": kind}, "scope": scope},
    }


# --- built-in tables --------------------------------------------------------


def test_namespace_is_cluster_scoped() -> None:
    assert BUILTINS_ONLY.of("", "Namespace") is Scope.CLUSTER


def test_configmap_is_namespaced() -> None:
    assert BUILTINS_ONLY.of("", "ConfigMap") is Scope.NAMESPACED


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("", "PersistentVolume"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
        ("networking.k8s.io", "IPAddress"),
        ("networking.k8s.io", "ServiceCIDR"),
        ("resource.k8s.io", "DeviceClass"),
        ("resource.k8s.io", "ResourceSlice"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("certificates.k8s.io", "ClusterTrustBundle"),
        ("internal.apiserver.k8s.io", "StorageVersion"),
        ("storagemigration.k8s.io", "StorageVersionMigration"),
        ("storage.k8s.io", "VolumeAttributesClass"),
    ],
)
def test_builtin_cluster_kinds_are_cluster_scoped(group: str, kind: str) -> None:
    assert BUILTINS_ONLY.of(group, kind) is Scope.CLUSTER


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("", "Secret"),
        ("", "ServiceAccount"),
        ("apps", "Deployment"),
        ("batch", "CronJob"),
        ("rbac.authorization.k8s.io", "RoleBinding"),
        ("networking.k8s.io", "Ingress"),
        ("policy", "PodDisruptionBudget"),
        ("coordination.k8s.io", "Lease"),
        ("resource.k8s.io", "ResourceClaimTemplate"),
        ("storage.k8s.io", "CSIStorageCapacity"),
    ],
)
def test_builtin_namespaced_kinds_are_namespaced(group: str, kind: str) -> None:
    assert BUILTINS_ONLY.of(group, kind) is Scope.NAMESPACED


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("cert-manager.io", "ClusterIssuer"),
        ("templates.gatekeeper.sh", "ConstraintTemplate"),
        ("kyverno.io", "ClusterPolicy"),
        ("wgpolicyk8s.io", "ClusterPolicyReport"),
        ("external-secrets.io", "ClusterSecretStore"),
        ("karpenter.sh", "NodePool"),
        ("karpenter.k8s.aws", "EC2NodeClass"),
        ("argoproj.io", "ClusterWorkflowTemplate"),
        ("cilium.io", "CiliumClusterwideNetworkPolicy"),
        ("crd.projectcalico.org", "GlobalNetworkPolicy"),
        ("projectcalico.org", "IPPool"),
        ("gateway.networking.k8s.io", "GatewayClass"),
        ("pkg.crossplane.io", "Provider"),
        ("apiextensions.crossplane.io", "Composition"),
        ("snapshot.storage.k8s.io", "VolumeSnapshotClass"),
        ("networking.internal.knative.dev", "ClusterDomainClaim"),
        ("tekton.dev", "ClusterTask"),
        ("kueue.x-k8s.io", "ClusterQueue"),
        ("keda.sh", "ClusterTriggerAuthentication"),
        ("aquasecurity.github.io", "ClusterVulnerabilityReport"),
    ],
)
def test_well_known_cluster_crds_are_cluster_scoped(group: str, kind: str) -> None:
    assert BUILTINS_ONLY.of(group, kind) is Scope.CLUSTER


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("cert-manager.io", "Certificate"),
        ("config.gatekeeper.sh", "Config"),
        ("kyverno.io", "Policy"),
        ("crd.projectcalico.org", "NetworkPolicy"),
        ("monitoring.coreos.com", "ServiceMonitor"),
        ("networking.istio.io", "VirtualService"),
        ("protection.crossplane.io", "Usage"),
    ],
)
def test_well_known_namespaced_crds_are_namespaced(group: str, kind: str) -> None:
    assert BUILTINS_ONLY.of(group, kind) is Scope.NAMESPACED


def test_gatekeeper_constraints_are_cluster_scoped_whatever_their_kind() -> None:
    assert BUILTINS_ONLY.of("constraints.gatekeeper.sh", "K8sRequiredLabels") is Scope.CLUSTER


def test_same_kind_name_in_another_group_is_not_confused() -> None:
    assert BUILTINS_ONLY.of("nvidia.com", "ClusterPolicy") is Scope.CLUSTER
    assert BUILTINS_ONLY.of("metallb.io", "BGPPeer") is Scope.NAMESPACED
    assert BUILTINS_ONLY.of("crd.projectcalico.org", "BGPPeer") is Scope.CLUSTER


def test_unknown_kind_stays_unknown() -> None:
    assert BUILTINS_ONLY.of("example.com", "Widget") is Scope.UNKNOWN


def test_builtin_kind_in_the_wrong_group_is_unknown() -> None:
    assert BUILTINS_ONLY.of("example.com", "Namespace") is Scope.UNKNOWN


def test_builtin_scope_matches_an_empty_table() -> None:
    assert builtin_scope("", "Node") is Scope.CLUSTER
    assert builtin_scope("apps", "StatefulSet") is Scope.NAMESPACED
    assert builtin_scope("example.com", "Widget") is Scope.UNKNOWN


# --- table consistency ------------------------------------------------------


def test_no_kind_is_in_both_a_cluster_and_a_namespaced_table() -> None:
    both = (BUILTIN_CLUSTER_SCOPED | CRD_CLUSTER_SCOPED) & (BUILTIN_NAMESPACED | CRD_NAMESPACED)
    assert both == frozenset()


def test_no_namespaced_entry_lives_in_an_all_cluster_group() -> None:
    assert {g for g, _ in BUILTIN_NAMESPACED | CRD_NAMESPACED} & CLUSTER_SCOPED_GROUPS == set()


def test_builtin_tables_hold_only_kubernetes_groups() -> None:
    for group, _kind in BUILTIN_CLUSTER_SCOPED | BUILTIN_NAMESPACED:
        assert group in {"", "apps", "batch", "autoscaling", "policy"} or group.endswith(".k8s.io")


def test_every_table_entry_is_a_valid_group_kind_entry() -> None:
    for group, kind in BUILTIN_CLUSTER_SCOPED | BUILTIN_NAMESPACED | CRD_CLUSTER_SCOPED | CRD_NAMESPACED:
        entry = f"{group}/{kind}" if group else kind
        assert parse_kind_entry(entry) == ((group or None), kind)


# --- precedence -------------------------------------------------------------


def test_crd_in_render_beats_builtin_table() -> None:
    table = ScopeTable.build(crd_scopes={("cert-manager.io", "ClusterIssuer"): "Namespaced"})
    assert table.of("cert-manager.io", "ClusterIssuer") is Scope.NAMESPACED


def test_crd_in_render_makes_an_unknown_kind_known() -> None:
    table = ScopeTable.build(crd_scopes={("example.com", "Widget"): "Cluster"})
    assert table.of("example.com", "Widget") is Scope.CLUSTER
    assert table.of("other.example.com", "Widget") is Scope.UNKNOWN


def test_user_declaration_beats_crd_in_render() -> None:
    table = ScopeTable.build(
        crd_scopes={("example.com", "Widget"): "Cluster"},
        namespaced_kinds=["example.com/Widget"],
    )
    assert table.of("example.com", "Widget") is Scope.NAMESPACED


def test_user_declaration_beats_builtin_table() -> None:
    table = ScopeTable.build(namespaced_kinds=["Namespace"])
    assert table.of("", "Namespace") is Scope.NAMESPACED


def test_bare_user_kind_beats_crd_in_render() -> None:
    table = ScopeTable.build(
        crd_scopes={("example.com", "Widget"): "Namespaced"},
        cluster_scoped_kinds=["Widget"],
    )
    assert table.of("example.com", "Widget") is Scope.CLUSTER


# --- bare Kind versus group/Kind --------------------------------------------


def test_bare_kind_matches_every_group() -> None:
    table = ScopeTable.build(cluster_scoped_kinds=["Widget"])
    assert table.of("example.com", "Widget") is Scope.CLUSTER
    assert table.of("other.example.org", "Widget") is Scope.CLUSTER
    assert table.of("", "Widget") is Scope.CLUSTER


def test_group_kind_entry_matches_only_its_group() -> None:
    table = ScopeTable.build(cluster_scoped_kinds=["example.com/Widget"])
    assert table.of("example.com", "Widget") is Scope.CLUSTER
    assert table.of("other.example.org", "Widget") is Scope.UNKNOWN


def test_group_kind_entry_beats_bare_kind_entry() -> None:
    table = ScopeTable.build(
        cluster_scoped_kinds=["Widget"],
        namespaced_kinds=["example.com/Widget"],
    )
    assert table.of("example.com", "Widget") is Scope.NAMESPACED
    assert table.of("other.example.org", "Widget") is Scope.CLUSTER


def test_kinds_are_case_sensitive() -> None:
    table = ScopeTable.build(cluster_scoped_kinds=["widget"])
    assert table.of("example.com", "Widget") is Scope.UNKNOWN


def test_same_entry_declared_both_ways_is_rejected() -> None:
    with pytest.raises(ValueError, match="both cluster-scoped and namespaced"):
        ScopeTable.build(cluster_scoped_kinds=["Widget"], namespaced_kinds=["Widget"])


def test_repeating_an_entry_on_one_side_is_fine() -> None:
    table = ScopeTable.build(cluster_scoped_kinds=["Widget", "Widget"])
    assert table.of("x.io", "Widget") is Scope.CLUSTER


def test_kind_list_given_as_one_string_is_rejected() -> None:
    with pytest.raises(TypeError, match="single string"):
        ScopeTable.build(cluster_scoped_kinds="Widget")


def test_crd_scope_other_than_cluster_or_namespaced_is_rejected() -> None:
    with pytest.raises(ValueError, match="expected 'Cluster' or 'Namespaced'"):
        ScopeTable.build(crd_scopes={("example.com", "Widget"): "cluster"})


# --- parse_kind_entry -------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("Widget", (None, "Widget")),
        ("example.com/Widget", ("example.com", "Widget")),
        ("cert-manager.io/ClusterIssuer", ("cert-manager.io", "ClusterIssuer")),
        ("apps/Deployment", ("apps", "Deployment")),
    ],
)
def test_well_formed_entries_parse(entry: str, expected: tuple[str | None, str]) -> None:
    assert parse_kind_entry(entry) == expected


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("", "empty kind entry"),
        (" Widget", "whitespace"),
        ("example.com/ Widget", "whitespace"),
        ("Cluster Issuer", "whitespace"),
        ("apps/v1/Deployment", "more than one '/'"),
        ("a/b/c/D", "more than one '/'"),
        ("/Widget", "empty group"),
        ("example.com/", "empty kind"),
        ("Example.COM/Widget", "invalid API group"),
        ("example.com/1Widget", "invalid kind"),
        ("Wid.get", "invalid kind"),
    ],
)
def test_malformed_entries_raise(entry: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_kind_entry(entry)


def test_malformed_entry_in_build_raises() -> None:
    with pytest.raises(ValueError, match="more than one '/'"):
        ScopeTable.build(namespaced_kinds=["apps/v1/Deployment"])


# --- crd_scopes -------------------------------------------------------------


def test_crd_scopes_reads_group_kind_and_scope() -> None:
    objects = [
        crd("example.com", "Widget", "Cluster"),
        crd("example.com", "Gadget", "Namespaced", api_version="apiextensions.k8s.io/v1beta1"),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
    ]
    assert crd_scopes(objects) == {
        ("example.com", "Widget"): "Cluster",
        ("example.com", "Gadget"): "Namespaced",
    }


@pytest.mark.parametrize(
    "obj",
    [
        crd("example.com", "Widget", "cluster"),
        crd("example.com", "Widget", None),
        crd("", "Widget", "Cluster"),
        crd("example.com", "", "Cluster"),
        crd("example.com", "Widget", "Cluster", api_version="example.com/v1"),
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "spec": []},
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "spec": {"group": "example.com", "names": "Widget", "scope": "Cluster"},
        },
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "spec": {"group": ["example.com"], "names": {"kind": "Widget"}, "scope": "Cluster"},
        },
    ],
)
def test_crd_scopes_ignores_malformed_crds(obj: dict[str, Any]) -> None:
    assert crd_scopes([obj]) == {}


def test_crd_scopes_skips_non_mapping_documents() -> None:
    objects: list[Any] = [None, "text", crd("example.com", "Widget", "Cluster")]
    assert crd_scopes(objects) == {("example.com", "Widget"): "Cluster"}


def test_crd_scopes_prefers_cluster_when_crds_disagree() -> None:
    objects = [
        crd("example.com", "Widget", "Namespaced"),
        crd("example.com", "Widget", "Cluster"),
        crd("example.com", "Widget", "Namespaced"),
    ]
    assert crd_scopes(objects) == {("example.com", "Widget"): "Cluster"}


def test_crd_scopes_output_builds_a_table() -> None:
    table = ScopeTable.build(crd_scopes=crd_scopes([crd("example.com", "Widget", "Cluster")]))
    assert table.of("example.com", "Widget") is Scope.CLUSTER


# --- the group of an apiVersion ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_version", "group"),
    [("v1", ""), ("apps/v1", "apps"), ("cert-manager.io/v1", "cert-manager.io")],
)
def test_the_group_is_taken_from_an_api_version(api_version: str, group: str) -> None:
    assert split_api_version(api_version)[0] == group
