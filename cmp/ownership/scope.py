"""Decide whether a rendered Kubernetes object is cluster-scoped.

Several Argo CD applications may render the same chart.  A cluster-scoped
object (a ClusterRole, a CRD, a StorageClass, ...) has no namespace, so every
application that renders it names the same object, and they would fight over
it.  Those objects are the contended ones: the ownership logic must pick one
application to emit each of them, and it has to know which objects they are
before it can.  Namespaced objects are left alone unless a rule names them.

A render does not carry that fact.  A manifest says ``apiVersion`` and
``kind``, never whether the kind is namespaced; only the API server's
discovery data knows, and a config-management plugin has no cluster to ask.
This module answers from data instead, in three layers, most trusted first:

1. kinds the user declared (``Kind`` for any group, or ``group/Kind``);
2. CustomResourceDefinitions found in the same render (their ``spec.scope``);
3. built-in tables: the Kubernetes API of 1.29 through 1.34, and the
   best-known CRDs of popular projects.

The answer is three-valued, like kustomize's openapi ``IsNamespaceScoped``,
which returns whether a kind is namespaced *and* whether it found the kind at
all.  Here the answer is `Scope.CLUSTER`, `Scope.NAMESPACED` or `Scope.UNKNOWN`.
Callers treat an unknown kind as namespaced, so that nothing is claimed for
arbitration by guesswork, and they report a notice naming the kind so the
user can declare it.

Everything here is plain data and lookups: no I/O and no third-party imports.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypeAlias

__all__ = [
    "BUILTIN_CLUSTER_SCOPED",
    "BUILTIN_NAMESPACED",
    "CLUSTER_SCOPED_GROUPS",
    "CRD_CLUSTER_SCOPED",
    "CRD_NAMESPACED",
    "GroupKind",
    "Scope",
    "ScopeTable",
    "builtin_scope",
    "crd_scopes",
    "group_of",
    "parse_kind_entry",
]

GroupKind: TypeAlias = tuple[str, str]
"""An API group and a kind; the core group is the empty string."""


class Scope(enum.Enum):
    """Where an object of some kind lives."""

    CLUSTER = "Cluster"
    NAMESPACED = "Namespaced"
    UNKNOWN = "Unknown"


def _group_kinds(group: str, *kinds: str) -> frozenset[GroupKind]:
    return frozenset((group, kind) for kind in kinds)


# ---------------------------------------------------------------------------
# Built-in Kubernetes kinds, 1.29 through 1.34.  A kind that was served in any
# of these releases (alpha APIs included) is listed; scope never changes
# between versions of a kind, so one row covers them all.
# ---------------------------------------------------------------------------

BUILTIN_CLUSTER_SCOPED: frozenset[GroupKind] = (
    # core/v1
    _group_kinds("", "ComponentStatus", "Namespace", "Node", "PersistentVolume")
    # admission control
    | _group_kinds(
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    )
    # API extension and aggregation
    | _group_kinds("apiextensions.k8s.io", "CustomResourceDefinition")
    | _group_kinds("apiregistration.k8s.io", "APIService")
    # authentication and authorization reviews (create-only, never stored)
    | _group_kinds("authentication.k8s.io", "TokenReview", "SelfSubjectReview")
    | _group_kinds(
        "authorization.k8s.io",
        "SubjectAccessReview",
        "SelfSubjectAccessReview",
        "SelfSubjectRulesReview",
    )
    # RBAC
    | _group_kinds("rbac.authorization.k8s.io", "ClusterRole", "ClusterRoleBinding")
    # certificates
    | _group_kinds("certificates.k8s.io", "CertificateSigningRequest", "ClusterTrustBundle")
    # API priority and fairness
    | _group_kinds("flowcontrol.apiserver.k8s.io", "FlowSchema", "PriorityLevelConfiguration")
    # storage-version bookkeeping of the API server
    | _group_kinds("internal.apiserver.k8s.io", "StorageVersion")
    | _group_kinds("storagemigration.k8s.io", "StorageVersionMigration")
    # networking
    | _group_kinds("networking.k8s.io", "IngressClass", "IPAddress", "ServiceCIDR")
    # nodes and scheduling
    | _group_kinds("node.k8s.io", "RuntimeClass")
    | _group_kinds("scheduling.k8s.io", "PriorityClass")
    # storage
    | _group_kinds(
        "storage.k8s.io",
        "CSIDriver",
        "CSINode",
        "StorageClass",
        "VolumeAttachment",
        "VolumeAttributesClass",
    )
    # dynamic resource allocation (ResourceClass: 1.29 and 1.30 only)
    | _group_kinds(
        "resource.k8s.io",
        "DeviceClass",
        "DeviceTaintRule",
        "ResourceClass",
        "ResourceSlice",
    )
)

BUILTIN_NAMESPACED: frozenset[GroupKind] = (
    # core/v1
    _group_kinds(
        "",
        "Binding",
        "ConfigMap",
        "Endpoints",
        "Event",
        "LimitRange",
        "PersistentVolumeClaim",
        "Pod",
        "PodTemplate",
        "ReplicationController",
        "ResourceQuota",
        "Secret",
        "Service",
        "ServiceAccount",
    )
    # workloads
    | _group_kinds(
        "apps",
        "ControllerRevision",
        "DaemonSet",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
    )
    | _group_kinds("batch", "CronJob", "Job")
    | _group_kinds("autoscaling", "HorizontalPodAutoscaler")
    | _group_kinds("policy", "PodDisruptionBudget")
    # RBAC and authorization
    | _group_kinds("rbac.authorization.k8s.io", "Role", "RoleBinding")
    | _group_kinds("authorization.k8s.io", "LocalSubjectAccessReview")
    # networking and service discovery
    | _group_kinds("networking.k8s.io", "Ingress", "NetworkPolicy")
    | _group_kinds("discovery.k8s.io", "EndpointSlice")
    # coordination and events
    | _group_kinds("coordination.k8s.io", "Lease", "LeaseCandidate")
    | _group_kinds("events.k8s.io", "Event")
    # storage and certificates
    | _group_kinds("storage.k8s.io", "CSIStorageCapacity")
    | _group_kinds("certificates.k8s.io", "PodCertificateRequest")
    # dynamic resource allocation (the last three: alpha APIs of 1.29 to 1.31)
    | _group_kinds(
        "resource.k8s.io",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "PodSchedulingContext",
        "ResourceClaimParameters",
        "ResourceClassParameters",
    )
)


# ---------------------------------------------------------------------------
# Well-known custom resources.  Each row matches the ``spec.scope`` of the
# project's own CRD manifest.  These only matter when a render uses a kind
# without shipping its CRD (the usual case: CRDs are installed once, apart).
#
# Projects whose CRDs are all namespaced, so they add nothing below: Argo CD,
# Flux, Istio, Linkerd, MetalLB, the Prometheus operator and Velero.
# Deliberately absent: Crossplane ``ProviderConfig``, whose group differs per
# provider and which is namespaced for Crossplane v2 providers.
# ---------------------------------------------------------------------------

CRD_CLUSTER_SCOPED: frozenset[GroupKind] = (
    # cert-manager and trust-manager
    _group_kinds("cert-manager.io", "ClusterIssuer")
    | _group_kinds("trust.cert-manager.io", "Bundle")
    | _group_kinds("trust-manager.io", "ClusterBundle")
    # OPA Gatekeeper (its ``Config`` is namespaced; constraints: see
    # CLUSTER_SCOPED_GROUPS)
    | _group_kinds("templates.gatekeeper.sh", "ConstraintTemplate")
    | _group_kinds("mutations.gatekeeper.sh", "Assign", "AssignImage", "AssignMetadata", "ModifySet")
    | _group_kinds("expansion.gatekeeper.sh", "ExpansionTemplate")
    | _group_kinds("externaldata.gatekeeper.sh", "Provider")
    | _group_kinds("syncset.gatekeeper.sh", "SyncSet")
    # Kyverno and the policy-report API it writes
    | _group_kinds(
        "kyverno.io",
        "ClusterPolicy",
        "ClusterCleanupPolicy",
        "GlobalContextEntry",
        "ClusterAdmissionReport",
        "ClusterBackgroundScanReport",
    )
    | _group_kinds(
        "policies.kyverno.io",
        "DeletingPolicy",
        "GeneratingPolicy",
        "ImageValidatingPolicy",
        "MutatingPolicy",
        "ValidatingPolicy",
    )
    | _group_kinds("reports.kyverno.io", "ClusterEphemeralReport")
    | _group_kinds("wgpolicyk8s.io", "ClusterPolicyReport")
    # External Secrets Operator
    | _group_kinds(
        "external-secrets.io",
        "ClusterExternalSecret",
        "ClusterPushSecret",
        "ClusterSecretStore",
    )
    | _group_kinds("generators.external-secrets.io", "ClusterGenerator")
    # Karpenter and its AWS and Azure providers (Provisioner, Machine and
    # AWSNodeTemplate are the pre-v1beta1 API)
    | _group_kinds("karpenter.sh", "NodePool", "NodeClaim", "NodeOverlay", "Provisioner", "Machine")
    | _group_kinds("karpenter.k8s.aws", "EC2NodeClass", "AWSNodeTemplate")
    | _group_kinds("karpenter.azure.com", "AKSNodeClass")
    # Argo Workflows and Argo Rollouts
    | _group_kinds("argoproj.io", "ClusterWorkflowTemplate", "ClusterAnalysisTemplate")
    # Cilium
    | _group_kinds(
        "cilium.io",
        "CiliumBGPAdvertisement",
        "CiliumBGPClusterConfig",
        "CiliumBGPNodeConfig",
        "CiliumBGPNodeConfigOverride",
        "CiliumBGPPeerConfig",
        "CiliumBGPPeeringPolicy",
        "CiliumCIDRGroup",
        "CiliumClusterwideEnvoyConfig",
        "CiliumClusterwideNetworkPolicy",
        "CiliumEgressGatewayPolicy",
        "CiliumEndpointSlice",
        "CiliumExternalWorkload",
        "CiliumIdentity",
        "CiliumL2AnnouncementPolicy",
        "CiliumLoadBalancerIPPool",
        "CiliumNode",
        "CiliumPodIPPool",
    )
    # Calico: the CRD group, the v3 API group, and the Tigera operator
    | _group_kinds(
        "crd.projectcalico.org",
        "BGPConfiguration",
        "BGPFilter",
        "BGPPeer",
        "BlockAffinity",
        "CalicoNodeStatus",
        "ClusterInformation",
        "FelixConfiguration",
        "GlobalNetworkPolicy",
        "GlobalNetworkSet",
        "HostEndpoint",
        "IPAMBlock",
        "IPAMConfig",
        "IPAMHandle",
        "IPPool",
        "IPReservation",
        "KubeControllersConfiguration",
        "StagedGlobalNetworkPolicy",
        "Tier",
    )
    | _group_kinds(
        "projectcalico.org",
        "BGPConfiguration",
        "BGPFilter",
        "BGPPeer",
        "BlockAffinity",
        "CalicoNodeStatus",
        "ClusterInformation",
        "FelixConfiguration",
        "GlobalNetworkPolicy",
        "GlobalNetworkSet",
        "HostEndpoint",
        "IPAMBlock",
        "IPAMConfiguration",
        "IPAMHandle",
        "IPPool",
        "IPReservation",
        "KubeControllersConfiguration",
        "StagedGlobalNetworkPolicy",
        "Tier",
    )
    | _group_kinds(
        "operator.tigera.io",
        "APIServer",
        "Goldmane",
        "ImageSet",
        "Installation",
        "ManagementClusterConnection",
        "TigeraStatus",
        "Whisker",
    )
    # Gateway API and the network-policy API of SIG Network
    | _group_kinds("gateway.networking.k8s.io", "GatewayClass")
    | _group_kinds(
        "policy.networking.k8s.io",
        "AdminNetworkPolicy",
        "BaselineAdminNetworkPolicy",
        "ClusterNetworkPolicy",
    )
    # Crossplane (ControllerConfig: v1 only; apiextensions Usage: v1 only)
    | _group_kinds(
        "pkg.crossplane.io",
        "Configuration",
        "ConfigurationRevision",
        "ControllerConfig",
        "DeploymentRuntimeConfig",
        "Function",
        "FunctionRevision",
        "ImageConfig",
        "Lock",
        "Provider",
        "ProviderRevision",
    )
    | _group_kinds(
        "apiextensions.crossplane.io",
        "CompositeResourceDefinition",
        "Composition",
        "CompositionRevision",
        "EnvironmentConfig",
        "ManagedResourceActivationPolicy",
        "ManagedResourceDefinition",
        "Usage",
    )
    | _group_kinds("protection.crossplane.io", "ClusterUsage")
    | _group_kinds("ops.crossplane.io", "CronOperation", "Operation", "WatchOperation")
    # CSI volume snapshots
    | _group_kinds("snapshot.storage.k8s.io", "VolumeSnapshotClass", "VolumeSnapshotContent")
    | _group_kinds(
        "groupsnapshot.storage.k8s.io",
        "VolumeGroupSnapshotClass",
        "VolumeGroupSnapshotContent",
    )
    # Knative
    | _group_kinds("networking.internal.knative.dev", "ClusterDomainClaim")
    # Tekton (ClusterTask was removed from Pipelines in 2024)
    | _group_kinds("tekton.dev", "ClusterTask")
    | _group_kinds("triggers.tekton.dev", "ClusterInterceptor", "ClusterTriggerBinding")
    # Kueue
    | _group_kinds(
        "kueue.x-k8s.io",
        "AdmissionCheck",
        "ClusterQueue",
        "Cohort",
        "MultiKueueCluster",
        "MultiKueueConfig",
        "ProvisioningRequestConfig",
        "ResourceFlavor",
        "Topology",
        "WorkloadPriorityClass",
    )
    # KEDA
    | _group_kinds("keda.sh", "ClusterTriggerAuthentication")
    | _group_kinds("eventing.keda.sh", "ClusterCloudEventSource")
    # Trivy operator
    | _group_kinds(
        "aquasecurity.github.io",
        "ClusterComplianceReport",
        "ClusterConfigAuditReport",
        "ClusterInfraAssessmentReport",
        "ClusterRbacAssessmentReport",
        "ClusterSbomReport",
        "ClusterVulnerabilityReport",
    )
    # KubeVirt
    | _group_kinds(
        "instancetype.kubevirt.io",
        "VirtualMachineClusterInstancetype",
        "VirtualMachineClusterPreference",
    )
    | _group_kinds("migrations.kubevirt.io", "MigrationPolicy")
    # NVIDIA GPU operator and Node Feature Discovery
    | _group_kinds("nvidia.com", "ClusterPolicy", "NVIDIADriver")
    | _group_kinds("nfd.k8s-sigs.io", "NodeFeatureRule")
    # Volcano
    | _group_kinds("scheduling.volcano.sh", "Queue")
    | _group_kinds("topology.volcano.sh", "HyperNode")
    # AWS Load Balancer Controller
    | _group_kinds("elbv2.k8s.aws", "IngressClassParams")
)

CLUSTER_SCOPED_GROUPS: frozenset[str] = frozenset(
    {
        # Gatekeeper generates one cluster-scoped kind per ConstraintTemplate.
        "constraints.gatekeeper.sh",
    }
)
"""API groups in which every kind is cluster-scoped, whatever its name."""

CRD_NAMESPACED: frozenset[GroupKind] = (
    # cert-manager
    _group_kinds("cert-manager.io", "Certificate", "CertificateRequest", "Issuer")
    | _group_kinds("acme.cert-manager.io", "Challenge", "Order")
    # OPA Gatekeeper
    | _group_kinds("config.gatekeeper.sh", "Config")
    # Kyverno and policy reports
    | _group_kinds("kyverno.io", "CleanupPolicy", "Policy", "PolicyException", "UpdateRequest")
    | _group_kinds(
        "policies.kyverno.io",
        "NamespacedDeletingPolicy",
        "NamespacedGeneratingPolicy",
        "NamespacedImageValidatingPolicy",
        "NamespacedMutatingPolicy",
        "NamespacedValidatingPolicy",
        "PolicyException",
    )
    | _group_kinds("reports.kyverno.io", "EphemeralReport")
    | _group_kinds("wgpolicyk8s.io", "PolicyReport")
    # External Secrets Operator
    | _group_kinds("external-secrets.io", "ExternalSecret", "PushSecret", "SecretStore")
    # Argo CD, Argo Workflows, Argo Rollouts
    | _group_kinds(
        "argoproj.io",
        "AnalysisRun",
        "AnalysisTemplate",
        "AppProject",
        "Application",
        "ApplicationSet",
        "CronWorkflow",
        "Experiment",
        "Rollout",
        "Workflow",
        "WorkflowEventBinding",
        "WorkflowTemplate",
    )
    # Cilium
    | _group_kinds(
        "cilium.io",
        "CiliumEndpoint",
        "CiliumEnvoyConfig",
        "CiliumLocalRedirectPolicy",
        "CiliumNetworkPolicy",
        "CiliumNodeConfig",
    )
    # Calico
    | _group_kinds(
        "crd.projectcalico.org",
        "NetworkPolicy",
        "NetworkSet",
        "StagedKubernetesNetworkPolicy",
        "StagedNetworkPolicy",
    )
    | _group_kinds(
        "projectcalico.org",
        "NetworkPolicy",
        "NetworkSet",
        "StagedKubernetesNetworkPolicy",
        "StagedNetworkPolicy",
    )
    # Gateway API
    | _group_kinds(
        "gateway.networking.k8s.io",
        "BackendTLSPolicy",
        "GRPCRoute",
        "Gateway",
        "HTTPRoute",
        "ReferenceGrant",
        "TCPRoute",
        "TLSRoute",
        "UDPRoute",
    )
    # Crossplane v2
    | _group_kinds("protection.crossplane.io", "Usage")
    # CSI volume snapshots
    | _group_kinds("snapshot.storage.k8s.io", "VolumeSnapshot")
    | _group_kinds("groupsnapshot.storage.k8s.io", "VolumeGroupSnapshot")
    # Istio
    | _group_kinds(
        "networking.istio.io",
        "DestinationRule",
        "EnvoyFilter",
        "Gateway",
        "ProxyConfig",
        "ServiceEntry",
        "Sidecar",
        "VirtualService",
        "WorkloadEntry",
        "WorkloadGroup",
    )
    | _group_kinds(
        "security.istio.io",
        "AuthorizationPolicy",
        "PeerAuthentication",
        "RequestAuthentication",
    )
    | _group_kinds("telemetry.istio.io", "Telemetry")
    | _group_kinds("extensions.istio.io", "WasmPlugin")
    # Prometheus operator
    | _group_kinds(
        "monitoring.coreos.com",
        "Alertmanager",
        "AlertmanagerConfig",
        "PodMonitor",
        "Probe",
        "Prometheus",
        "PrometheusAgent",
        "PrometheusRule",
        "ScrapeConfig",
        "ServiceMonitor",
        "ThanosRuler",
    )
    # KEDA
    | _group_kinds("keda.sh", "ScaledJob", "ScaledObject", "TriggerAuthentication")
    | _group_kinds("eventing.keda.sh", "CloudEventSource")
    # Kueue
    | _group_kinds("kueue.x-k8s.io", "LocalQueue", "Workload")
    # Tekton
    | _group_kinds(
        "tekton.dev",
        "CustomRun",
        "Pipeline",
        "PipelineRun",
        "StepAction",
        "Task",
        "TaskRun",
    )
    | _group_kinds(
        "triggers.tekton.dev",
        "EventListener",
        "Interceptor",
        "Trigger",
        "TriggerBinding",
        "TriggerTemplate",
    )
    # Trivy operator
    | _group_kinds(
        "aquasecurity.github.io",
        "ConfigAuditReport",
        "ExposedSecretReport",
        "InfraAssessmentReport",
        "RbacAssessmentReport",
        "SbomReport",
        "VulnerabilityReport",
    )
    # KubeVirt
    | _group_kinds("kubevirt.io", "KubeVirt", "VirtualMachine", "VirtualMachineInstance")
    | _group_kinds(
        "instancetype.kubevirt.io",
        "VirtualMachineInstancetype",
        "VirtualMachinePreference",
    )
    # Knative Serving
    | _group_kinds(
        "serving.knative.dev",
        "Configuration",
        "DomainMapping",
        "Revision",
        "Route",
        "Service",
    )
    # MetalLB
    | _group_kinds(
        "metallb.io",
        "BFDProfile",
        "BGPAdvertisement",
        "BGPPeer",
        "Community",
        "IPAddressPool",
        "L2Advertisement",
    )
    # Velero
    | _group_kinds(
        "velero.io",
        "Backup",
        "BackupStorageLocation",
        "Restore",
        "Schedule",
        "VolumeSnapshotLocation",
    )
)

_CLUSTER_TABLE: frozenset[GroupKind] = BUILTIN_CLUSTER_SCOPED | CRD_CLUSTER_SCOPED
_NAMESPACED_TABLE: frozenset[GroupKind] = BUILTIN_NAMESPACED | CRD_NAMESPACED


def builtin_scope(group: str, kind: str) -> Scope:
    """Scope of ``group``/``kind`` from the built-in tables alone."""
    key = (group, kind)
    if key in _CLUSTER_TABLE:
        return Scope.CLUSTER
    if key in _NAMESPACED_TABLE:
        return Scope.NAMESPACED
    if group in CLUSTER_SCOPED_GROUPS:
        return Scope.CLUSTER
    return Scope.UNKNOWN


def group_of(api_version: str) -> str:
    """The API group of an ``apiVersion``: ``"apps/v1"`` gives ``"apps"``, ``"v1"`` gives ``""``."""
    group, slash, _version = api_version.rpartition("/")
    return group if slash else ""


# ---------------------------------------------------------------------------
# User declarations
# ---------------------------------------------------------------------------

# An API group is a lowercase DNS subdomain.
_GROUP_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# A kind starts with a letter; Kubernetes compares kinds case-sensitively.
_KIND_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def parse_kind_entry(entry: str) -> tuple[str | None, str]:
    """Parse a user's ``Kind`` or ``group/Kind`` entry.

    Returns ``(group, kind)``; the group is None for a bare ``Kind``, which
    matches that kind in every API group.  Raises ValueError, naming the
    entry, when it is empty, holds whitespace, has more than one ``/``, or
    has an empty or ill-formed group or kind.
    """
    shown = repr(entry)
    if not entry:
        raise ValueError("empty kind entry: expected 'Kind' or 'group/Kind'")
    if any(ch.isspace() for ch in entry):
        raise ValueError(f"kind entry {shown} contains whitespace: expected 'Kind' or 'group/Kind'")
    parts = entry.split("/")
    if len(parts) > 2:
        raise ValueError(
            f"kind entry {shown} has more than one '/': expected 'Kind' or "
            "'group/Kind', without a version (write 'apps/Deployment', "
            "not 'apps/v1/Deployment')"
        )
    if len(parts) == 1:
        group: str | None = None
        kind = parts[0]
    else:
        group, kind = parts
        if not group:
            raise ValueError(f"kind entry {shown} has an empty group: write just the kind to match it in any group")
        if not _GROUP_RE.fullmatch(group):
            raise ValueError(
                f"kind entry {shown} has an invalid API group {group!r}: "
                "expected a lowercase DNS name such as 'cert-manager.io'"
            )
        if not kind:
            raise ValueError(f"kind entry {shown} has an empty kind after '/'")
    if not _KIND_RE.fullmatch(kind):
        raise ValueError(f"kind entry {shown} has an invalid kind {kind!r}: expected a name such as 'ClusterIssuer'")
    return group, kind


# ---------------------------------------------------------------------------
# CRDs found in a render
# ---------------------------------------------------------------------------

_CRD_SCOPE_VALUES: Mapping[str, Scope] = MappingProxyType({"Cluster": Scope.CLUSTER, "Namespaced": Scope.NAMESPACED})


def crd_scopes(objects: Iterable[Mapping[str, Any]]) -> dict[GroupKind, str]:
    """Collect ``{(group, kind): scope}`` from the CRDs among ``objects``.

    Only ``apiextensions.k8s.io`` CustomResourceDefinitions are read, from
    ``spec.group``, ``spec.names.kind`` and ``spec.scope`` (``"Cluster"`` or
    ``"Namespaced"``).  Anything else, and any CRD missing one of those
    fields or holding a value of the wrong shape, is skipped.  Should two
    CRDs disagree about one kind, ``"Cluster"`` is kept: calling a contended
    object namespaced could let two applications fight over it.
    """
    found: dict[GroupKind, str] = {}
    for obj in objects:
        if not isinstance(obj, Mapping):
            continue
        api_version = obj.get("apiVersion")
        if not isinstance(api_version, str) or group_of(api_version) != "apiextensions.k8s.io":
            continue
        if obj.get("kind") != "CustomResourceDefinition":
            continue
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            continue
        group = spec.get("group")
        names = spec.get("names")
        scope = spec.get("scope")
        if not isinstance(names, Mapping):
            continue
        kind = names.get("kind")
        if not (isinstance(group, str) and group and isinstance(kind, str) and kind):
            continue
        if not isinstance(scope, str) or scope not in _CRD_SCOPE_VALUES:
            continue
        key = (group, kind)
        if found.get(key) != Scope.CLUSTER.value:
            found[key] = scope
    return found


# ---------------------------------------------------------------------------
# The lookup table
# ---------------------------------------------------------------------------

_EMPTY_CRDS: Mapping[GroupKind, str] = MappingProxyType({})


_NO_GROUP_KINDS: Mapping[GroupKind, Scope] = MappingProxyType({})
_NO_KINDS: Mapping[str, Scope] = MappingProxyType({})


class ScopeTable:
    """Answers `Scope` for a group and kind, for one render.

    Build it once with `ScopeTable.build`; ``ScopeTable()`` knows only the
    built-in tables.  Precedence, first match wins:

    1. a user ``group/Kind`` declaration;
    2. a user bare ``Kind`` declaration (any group);
    3. a CRD found in the render;
    4. the built-in tables;

    and otherwise `Scope.UNKNOWN`.  A ``group/Kind`` declaration beating a
    bare one lets a user say "every ``Widget`` is cluster-scoped, except
    ``example.com/Widget``".
    """

    __slots__ = ("_answers", "crds", "declared", "declared_any_group")

    def __init__(
        self,
        declared: Mapping[GroupKind, Scope] = _NO_GROUP_KINDS,
        declared_any_group: Mapping[str, Scope] = _NO_KINDS,
        crds: Mapping[GroupKind, Scope] = _NO_GROUP_KINDS,
    ) -> None:
        self.declared = declared
        self.declared_any_group = declared_any_group
        self.crds = crds
        # answers already given: every stage asks for every resource, a render has few distinct kinds
        self._answers: dict[GroupKind, Scope] = {}

    @classmethod
    def build(
        cls,
        crd_scopes: Mapping[GroupKind, str] = _EMPTY_CRDS,
        cluster_scoped_kinds: Iterable[str] = (),
        namespaced_kinds: Iterable[str] = (),
    ) -> ScopeTable:
        """Make a table from CRD scopes and the user's declarations.

        ``crd_scopes`` maps ``(group, kind)`` to ``"Cluster"`` or
        ``"Namespaced"``, as `crd_scopes` returns it.  The two kind lists
        hold ``Kind`` or ``group/Kind`` entries (see `parse_kind_entry`).
        Raises ValueError for a malformed entry, for an entry declared both
        cluster-scoped and namespaced, or for a CRD scope other than those
        two values; TypeError if a kind list is given as one string.
        """
        declared: dict[GroupKind, Scope] = {}
        declared_any: dict[str, Scope] = {}
        for entries, scope in (
            (cluster_scoped_kinds, Scope.CLUSTER),
            (namespaced_kinds, Scope.NAMESPACED),
        ):
            if isinstance(entries, str):
                raise TypeError(
                    f"{scope.value.lower()} kinds must be a list of entries, not the single string {entries!r}"
                )
            for entry in entries:
                group, kind = parse_kind_entry(entry)
                earlier = declared_any.get(kind) if group is None else declared.get((group, kind))
                if earlier is not None and earlier is not scope:
                    raise ValueError(f"kind entry {entry!r} is declared both cluster-scoped and namespaced")
                if group is None:
                    declared_any[kind] = scope
                else:
                    declared[(group, kind)] = scope

        crds: dict[GroupKind, Scope] = {}
        for (group, kind), value in crd_scopes.items():
            crd_scope = _CRD_SCOPE_VALUES.get(value)
            if crd_scope is None:
                raise ValueError(f"CRD scope of {group}/{kind} is {value!r}: expected 'Cluster' or 'Namespaced'")
            crds[(group, kind)] = crd_scope

        return cls(
            declared=MappingProxyType(declared),
            declared_any_group=MappingProxyType(declared_any),
            crds=MappingProxyType(crds),
        )

    def of(self, group: str, kind: str) -> Scope:
        """The scope of ``kind`` in API ``group`` (``""`` for the core group)."""
        key = (group, kind)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self._look_up(key)
        return answer

    def _look_up(self, key: GroupKind) -> Scope:
        group, kind = key
        for found in (
            self.declared.get(key),
            self.declared_any_group.get(kind),
            self.crds.get(key),
        ):
            if found is not None:
                return found
        return builtin_scope(group, kind)
