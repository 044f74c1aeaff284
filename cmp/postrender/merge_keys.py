"""Strategic merge's knowledge of the built-in kinds: which lists merge, and by which keys.

Data, not code: the patch strategies and merge keys of the Kubernetes OpenAPI that kustomize 5 embeds
(v1.21.2), reduced to what a merge reads. A list merges element by element only where its field says
`x-kubernetes-patch-strategy: merge`; its keys are `x-kubernetes-list-map-keys` when given, else the
`x-kubernetes-patch-merge-key` (none: a list of scalars, merged as a set). Every other list, and every
field of a kind with no schema here (custom resources), is replaced whole, as kustomize does. Types that
lead to no merging list are left out: below them everything is replaced anyway; every type's `metadata`
is an ObjectMeta.
"""

from __future__ import annotations

from typing import NamedTuple


class Field(NamedTuple):
    """A field of a type: the merge keys when it is a merging list (None: replaced), and its type."""

    keys: tuple[str, ...] | None
    type: str | None


OBJECT_META = "ObjectMeta"

TYPES: dict[str, dict[str, Field]] = {
    "APIService": {"status": Field(None, "APIServiceStatus")},
    "APIServiceStatus": {"conditions": Field(("type",), None)},
    "CSINode": {"spec": Field(None, "CSINodeSpec")},
    "CSINodeSpec": {"drivers": Field(("name",), None)},
    "ComponentStatus": {"conditions": Field(("type",), None)},
    "Container": {
        "env": Field(("name",), None),
        "ports": Field(("containerPort", "protocol"), None),
        "volumeDevices": Field(("devicePath",), None),
        "volumeMounts": Field(("mountPath",), None),
    },
    "CronJob": {"spec": Field(None, "CronJobSpec")},
    "CronJobSpec": {"jobTemplate": Field(None, "JobTemplateSpec")},
    "DaemonSet": {"spec": Field(None, "DaemonSetSpec"), "status": Field(None, "DaemonSetStatus")},
    "DaemonSetSpec": {"template": Field(None, "PodTemplateSpec")},
    "DaemonSetStatus": {"conditions": Field(("type",), None)},
    "Deployment": {"spec": Field(None, "DeploymentSpec"), "status": Field(None, "DeploymentStatus")},
    "DeploymentSpec": {"template": Field(None, "PodTemplateSpec")},
    "DeploymentStatus": {"conditions": Field(("type",), None)},
    "EphemeralContainer": {
        "env": Field(("name",), None),
        "volumeDevices": Field(("devicePath",), None),
        "volumeMounts": Field(("mountPath",), None),
    },
    "Job": {"spec": Field(None, "JobSpec"), "status": Field(None, "JobStatus")},
    "JobSpec": {"template": Field(None, "PodTemplateSpec")},
    "JobStatus": {"conditions": Field(("type",), None)},
    "JobTemplateSpec": {"spec": Field(None, "JobSpec")},
    "MutatingWebhookConfiguration": {"webhooks": Field(("name",), None)},
    "Namespace": {"status": Field(None, "NamespaceStatus")},
    "NamespaceStatus": {"conditions": Field(("type",), None)},
    "Node": {"spec": Field(None, "NodeSpec"), "status": Field(None, "NodeStatus")},
    "NodeSpec": {"podCIDRs": Field((), None)},
    "NodeStatus": {"addresses": Field(("type",), None), "conditions": Field(("type",), None)},
    "ObjectMeta": {"finalizers": Field((), None), "ownerReferences": Field(("uid",), None)},
    "PersistentVolumeClaim": {"status": Field(None, "PersistentVolumeClaimStatus")},
    "PersistentVolumeClaimStatus": {"conditions": Field(("type",), None)},
    "Pod": {"spec": Field(None, "PodSpec"), "status": Field(None, "PodStatus")},
    "PodDisruptionBudget": {"status": Field(None, "PodDisruptionBudgetStatus")},
    "PodDisruptionBudgetStatus": {"conditions": Field(("type",), None)},
    "PodSpec": {
        "containers": Field(("name",), "Container"),
        "ephemeralContainers": Field(("name",), "EphemeralContainer"),
        "hostAliases": Field(("ip",), None),
        "imagePullSecrets": Field(("name",), None),
        "initContainers": Field(("name",), "Container"),
        "topologySpreadConstraints": Field(("topologyKey", "whenUnsatisfiable"), None),
        "volumes": Field(("name",), None),
    },
    "PodStatus": {"conditions": Field(("type",), None), "podIPs": Field(("ip",), None)},
    "PodTemplate": {"template": Field(None, "PodTemplateSpec")},
    "PodTemplateSpec": {"spec": Field(None, "PodSpec")},
    "ReplicaSet": {"spec": Field(None, "ReplicaSetSpec"), "status": Field(None, "ReplicaSetStatus")},
    "ReplicaSetSpec": {"template": Field(None, "PodTemplateSpec")},
    "ReplicaSetStatus": {"conditions": Field(("type",), None)},
    "ReplicationController": {
        "spec": Field(None, "ReplicationControllerSpec"),
        "status": Field(None, "ReplicationControllerStatus"),
    },
    "ReplicationControllerSpec": {"template": Field(None, "PodTemplateSpec")},
    "ReplicationControllerStatus": {"conditions": Field(("type",), None)},
    "Service": {"spec": Field(None, "ServiceSpec"), "status": Field(None, "ServiceStatus")},
    "ServiceAccount": {"secrets": Field(("name",), None)},
    "ServiceSpec": {"ports": Field(("port", "protocol"), None)},
    "ServiceStatus": {"conditions": Field(("type",), None)},
    "StatefulSet": {"spec": Field(None, "StatefulSetSpec"), "status": Field(None, "StatefulSetStatus")},
    "StatefulSetSpec": {
        "template": Field(None, "PodTemplateSpec"),
        "volumeClaimTemplates": Field(None, "PersistentVolumeClaim"),
    },
    "StatefulSetStatus": {"conditions": Field(("type",), None)},
    "ValidatingWebhookConfiguration": {"webhooks": Field(("name",), None)},
}

# The built-in kinds, by apiVersion; a kind with an entry in TYPES has that schema, the others ObjectMeta only.
KINDS: dict[str, str] = {
    "admissionregistration.k8s.io/v1": "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
    "admissionregistration.k8s.io/v1beta1": "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
    "apiextensions.k8s.io/v1": "CustomResourceDefinition",
    "apiextensions.k8s.io/v1beta1": "CustomResourceDefinition",
    "apiregistration.k8s.io/v1": "APIService",
    "apiregistration.k8s.io/v1beta1": "APIService",
    "apps/v1": "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet",
    "authentication.k8s.io/v1": "TokenRequest TokenReview",
    "authentication.k8s.io/v1beta1": "TokenReview",
    "authorization.k8s.io/v1": (
        "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview SubjectAccessReview"
    ),
    "authorization.k8s.io/v1beta1": (
        "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview SubjectAccessReview"
    ),
    "autoscaling/v1": "HorizontalPodAutoscaler Scale",
    "autoscaling/v2beta1": "HorizontalPodAutoscaler",
    "autoscaling/v2beta2": "HorizontalPodAutoscaler",
    "batch/v1": "CronJob Job",
    "batch/v1beta1": "CronJob",
    "certificates.k8s.io/v1": "CertificateSigningRequest",
    "certificates.k8s.io/v1beta1": "CertificateSigningRequest",
    "coordination.k8s.io/v1": "Lease",
    "coordination.k8s.io/v1beta1": "Lease",
    "discovery.k8s.io/v1": "EndpointSlice",
    "discovery.k8s.io/v1beta1": "EndpointSlice",
    "events.k8s.io/v1": "Event",
    "events.k8s.io/v1beta1": "Event",
    "extensions/v1beta1": "Ingress",
    "flowcontrol.apiserver.k8s.io/v1beta1": "FlowSchema PriorityLevelConfiguration",
    "networking.k8s.io/v1": "Ingress IngressClass NetworkPolicy",
    "networking.k8s.io/v1beta1": "Ingress IngressClass",
    "node.k8s.io/v1": "RuntimeClass",
    "node.k8s.io/v1beta1": "RuntimeClass",
    "policy/v1": "PodDisruptionBudget",
    "policy/v1beta1": "Eviction PodDisruptionBudget PodSecurityPolicy",
    "rbac.authorization.k8s.io/v1": "ClusterRole ClusterRoleBinding Role RoleBinding",
    "rbac.authorization.k8s.io/v1beta1": "ClusterRole ClusterRoleBinding Role RoleBinding",
    "scheduling.k8s.io/v1": "PriorityClass",
    "scheduling.k8s.io/v1beta1": "PriorityClass",
    "storage.k8s.io/v1": "CSIDriver CSINode StorageClass VolumeAttachment",
    "storage.k8s.io/v1beta1": "CSIDriver CSINode CSIStorageCapacity StorageClass VolumeAttachment",
    "v1": (
        "APIGroup APIVersions Binding ComponentStatus ConfigMap Endpoints Event LimitRange Namespace Node "
        "PersistentVolume PersistentVolumeClaim Pod PodTemplate ReplicationController ResourceQuota Secret "
        "Service ServiceAccount Status"
    ),
}

_BUILT_IN = {(api_version, kind) for api_version, kinds in KINDS.items() for kind in kinds.split()}


def root_type(api_version: str, kind: str) -> str | None:
    """The schema of an object of this kind: its TYPES entry, "" for a built-in kind with none (its
    metadata still merges as ObjectMeta), None for a kind kustomize has no schema for."""
    if (api_version, kind) not in _BUILT_IN:
        return None
    return kind if kind in TYPES else ""


def field_of(type_name: str | None, name: str) -> Field | None:
    """The field `name` of a type (None: no schema below it)."""
    if type_name is None:
        return None
    if name == "metadata":
        return Field(None, OBJECT_META)
    return TYPES.get(type_name, {}).get(name)
