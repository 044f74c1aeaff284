"""Which fields of which objects name another object: the table a rename fixes references from.

When an app renames its copy of an object, every field in its output that names the old object must name
the new one, or the renamed ClusterRole is bound by nobody and the Deployment asks for a PriorityClass
that no longer exists. Which field points at which kind is knowledge about the Kubernetes API, so it is
data here (as in kustomize's namereference table), and users add rows for their CRDs with `references:`
in chartshare.yaml. The walking is generic: a path with `*` for "every item of this list", conditions on
sibling fields (`roleRef.kind` must say ClusterRole), and a rule saying where the target lives.

A field is rewritten only when the group, kind and namespace of the target all match the renamed object:
a RoleBinding subject names a ServiceAccount in the subject's own `namespace`, a webhook names a Service
in `clientConfig.service.namespace`, a pod names a ConfigMap in the pod's namespace.

Pure data and lookups: no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from cmp.model import GroupKind
from cmp.pointers import pointer_parts, token


class Where(enum.Enum):
    """Where the named object lives, seen from the object holding the reference."""

    CLUSTER = "cluster"  # the target kind is cluster-scoped
    SAME = "same"  # the referrer's namespace
    SIBLING = "sibling"  # the `namespace` key beside the name; the referrer's namespace when it is absent
    SCOPE = "scope"  # user rows: the referrer's namespace, or none when the renamed object is cluster-scoped


ABSENT = ""
"""In a condition, the empty string stands for "missing or empty" (the core group is written as nothing)."""


class NameReference(NamedTuple):
    """One row: in objects of `sources`, the string at `path` names an object of `target`.

    `sources` pairs each referring kind with its path (pod templates sit at different depths in a Pod, a
    Deployment and a CronJob). `when` lists sibling keys of the name field and the values they must hold.
    """

    id: str
    target: tuple[str | None, str]  # (group, kind); group None: the kind in any group (user rows only)
    sources: tuple[tuple[str | None, str, str], ...]  # (group, kind, path); group None: any group
    where: Where
    when: tuple[tuple[str, tuple[str, ...]], ...] = ()


class SelectorReference(NamedTuple):
    """A list of label selectors (at each source's path) that pick objects of `target`: a rename cannot
    break them, but they are worth a line in the report, because they also pick up every other app's
    copies that carry the same labels."""

    id: str
    target: GroupKind
    sources: tuple[tuple[str, str, str], ...]

    @property
    def path(self) -> str:
        return ", ".join(sorted({path for _, _, path in self.sources}))


# Where each kind that runs pods keeps its pod spec.
POD_SPECS: tuple[tuple[str, str, str], ...] = (
    ("", "Pod", "/spec"),
    ("", "PodTemplate", "/template/spec"),
    ("", "ReplicationController", "/spec/template/spec"),
    ("apps", "Deployment", "/spec/template/spec"),
    ("apps", "ReplicaSet", "/spec/template/spec"),
    ("apps", "StatefulSet", "/spec/template/spec"),
    ("apps", "DaemonSet", "/spec/template/spec"),
    ("batch", "Job", "/spec/template/spec"),
    ("batch", "CronJob", "/spec/jobTemplate/spec/template/spec"),
)

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def in_pod_specs(*fields: str) -> tuple[tuple[str, str, str], ...]:
    """`(group, kind, path)` for a field of the pod spec, in every kind that carries one."""
    return tuple((group, kind, prefix + field) for group, kind, prefix in POD_SPECS for field in fields)


def in_containers(field: str) -> tuple[tuple[str, str, str], ...]:
    """A field of every container, init container and ephemeral container."""
    return in_pod_specs(*(f"/{containers}/*{field}" for containers in CONTAINER_LISTS))


RBAC = "rbac.authorization.k8s.io"
BINDINGS = ((RBAC, "ClusterRoleBinding"), (RBAC, "RoleBinding"))
WEBHOOKS = (
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
)

NAME_REFERENCES: tuple[NameReference, ...] = (
    # --- RBAC ---------------------------------------------------------------------------------------------
    NameReference(
        "binding-roleref-clusterrole",
        (RBAC, "ClusterRole"),
        tuple((group, kind, "/roleRef/name") for group, kind in BINDINGS),
        Where.CLUSTER,
        when=(("kind", ("ClusterRole",)), ("apiGroup", (RBAC,))),
    ),
    NameReference(
        "rolebinding-roleref-role",
        (RBAC, "Role"),
        ((RBAC, "RoleBinding", "/roleRef/name"),),
        Where.SAME,
        when=(("kind", ("Role",)), ("apiGroup", (RBAC,))),
    ),
    NameReference(
        "binding-subject-serviceaccount",
        ("", "ServiceAccount"),
        tuple((group, kind, "/subjects/*/name") for group, kind in BINDINGS),
        Where.SIBLING,
        when=(("kind", ("ServiceAccount",)), ("apiGroup", (ABSENT,))),
    ),
    # --- pod templates ------------------------------------------------------------------------------------
    NameReference(
        "pod-priorityclassname",
        ("scheduling.k8s.io", "PriorityClass"),
        in_pod_specs("/priorityClassName"),
        Where.CLUSTER,
    ),
    NameReference(
        "pod-runtimeclassname", ("node.k8s.io", "RuntimeClass"), in_pod_specs("/runtimeClassName"), Where.CLUSTER
    ),
    NameReference("pod-serviceaccountname", ("", "ServiceAccount"), in_pod_specs("/serviceAccountName"), Where.SAME),
    # The deprecated alias of serviceAccountName: both must keep naming the same account.
    NameReference("pod-serviceaccount", ("", "ServiceAccount"), in_pod_specs("/serviceAccount"), Where.SAME),
    NameReference("pod-volume-configmap", ("", "ConfigMap"), in_pod_specs("/volumes/*/configMap/name"), Where.SAME),
    NameReference("pod-volume-secret", ("", "Secret"), in_pod_specs("/volumes/*/secret/secretName"), Where.SAME),
    NameReference(
        "pod-volume-persistentvolumeclaim",
        ("", "PersistentVolumeClaim"),
        in_pod_specs("/volumes/*/persistentVolumeClaim/claimName"),
        Where.SAME,
    ),
    NameReference(
        "pod-projected-configmap",
        ("", "ConfigMap"),
        in_pod_specs("/volumes/*/projected/sources/*/configMap/name"),
        Where.SAME,
    ),
    NameReference(
        "pod-projected-secret", ("", "Secret"), in_pod_specs("/volumes/*/projected/sources/*/secret/name"), Where.SAME
    ),
    NameReference(
        "pod-ephemeral-storageclass",
        ("storage.k8s.io", "StorageClass"),
        in_pod_specs("/volumes/*/ephemeral/volumeClaimTemplate/spec/storageClassName"),
        Where.CLUSTER,
    ),
    NameReference(
        "pod-envfrom-configmap", ("", "ConfigMap"), in_containers("/envFrom/*/configMapRef/name"), Where.SAME
    ),
    NameReference("pod-envfrom-secret", ("", "Secret"), in_containers("/envFrom/*/secretRef/name"), Where.SAME),
    NameReference(
        "pod-env-configmapkeyref", ("", "ConfigMap"), in_containers("/env/*/valueFrom/configMapKeyRef/name"), Where.SAME
    ),
    NameReference(
        "pod-env-secretkeyref", ("", "Secret"), in_containers("/env/*/valueFrom/secretKeyRef/name"), Where.SAME
    ),
    NameReference("pod-imagepullsecrets", ("", "Secret"), in_pod_specs("/imagePullSecrets/*/name"), Where.SAME),
    # --- storage ------------------------------------------------------------------------------------------
    NameReference(
        "storageclassname",
        ("storage.k8s.io", "StorageClass"),
        (
            ("", "PersistentVolumeClaim", "/spec/storageClassName"),
            ("", "PersistentVolume", "/spec/storageClassName"),
            ("apps", "StatefulSet", "/spec/volumeClaimTemplates/*/spec/storageClassName"),
        ),
        Where.CLUSTER,
    ),
    NameReference(
        "volumename",
        ("", "PersistentVolume"),
        (
            ("", "PersistentVolumeClaim", "/spec/volumeName"),
            ("apps", "StatefulSet", "/spec/volumeClaimTemplates/*/spec/volumeName"),
        ),
        Where.CLUSTER,
    ),
    # --- networking ---------------------------------------------------------------------------------------
    NameReference(
        "ingress-ingressclassname",
        ("networking.k8s.io", "IngressClass"),
        (("networking.k8s.io", "Ingress", "/spec/ingressClassName"),),
        Where.CLUSTER,
    ),
    NameReference(
        "ingress-backend-service",
        ("", "Service"),
        (
            ("networking.k8s.io", "Ingress", "/spec/defaultBackend/service/name"),
            ("networking.k8s.io", "Ingress", "/spec/rules/*/http/paths/*/backend/service/name"),
        ),
        Where.SAME,
    ),
    NameReference(
        "ingress-tls-secret", ("", "Secret"), (("networking.k8s.io", "Ingress", "/spec/tls/*/secretName"),), Where.SAME
    ),
    NameReference(
        "statefulset-servicename", ("", "Service"), (("apps", "StatefulSet", "/spec/serviceName"),), Where.SAME
    ),
    NameReference(
        "serviceaccount-imagepullsecrets",
        ("", "Secret"),
        (("", "ServiceAccount", "/imagePullSecrets/*/name"),),
        Where.SAME,
    ),
    # --- API extension ------------------------------------------------------------------------------------
    NameReference(
        "webhook-service",
        ("", "Service"),
        tuple((group, kind, "/webhooks/*/clientConfig/service/name") for group, kind in WEBHOOKS),
        Where.SIBLING,
    ),
    NameReference(
        "validatingadmissionpolicybinding-policyname",
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        (("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "/spec/policyName"),),
        Where.CLUSTER,
    ),
    NameReference(
        "mutatingadmissionpolicybinding-policyname",
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
        (("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding", "/spec/policyName"),),
        Where.CLUSTER,
    ),
    NameReference(
        "apiservice-service",
        ("", "Service"),
        (("apiregistration.k8s.io", "APIService", "/spec/service/name"),),
        Where.SIBLING,
    ),
)

SELECTOR_REFERENCES: tuple[SelectorReference, ...] = (
    SelectorReference(
        "clusterrole-aggregationrule",
        (RBAC, "ClusterRole"),
        ((RBAC, "ClusterRole", "/aggregationRule/clusterRoleSelectors"),),
    ),
)


class Slot(NamedTuple):
    """One name field found in an object: where it is, what it says and where its target lives."""

    parent: Any  # the mapping holding the name, or the list, for a list of names
    key: Any  # str for a mapping, int for a list
    pointer: str  # concrete JSON Pointer, e.g. /subjects/1/name
    name: str
    sibling_namespace: str | None  # the `namespace` beside the name, if any


def walk(obj: Any, path: str) -> Iterator[tuple[Any, Any, str]]:
    """Every `(container, key, concrete pointer)` that `path` reaches in `obj`: the container is a mapping
    (key a string) or, for a path ending in `*` or an index, a list (key an int). `*` steps into every
    item of a list. Paths that lead nowhere yield nothing."""
    parts = pointer_parts(path)
    if not parts:
        return

    def step(node: Any, rest: list[str], prefix: str) -> Iterator[tuple[Any, Any, str]]:
        head, tail = rest[0], rest[1:]
        if isinstance(node, list):
            if head == "*":
                indexes: range | list[int] = range(len(node))
            elif head.isdigit() and int(head) < len(node):
                indexes = [int(head)]
            else:
                return
            for index in indexes:
                if tail:
                    yield from step(node[index], tail, f"{prefix}/{index}")
                else:
                    yield node, index, f"{prefix}/{index}"
            return
        if not isinstance(node, dict) or head not in node:
            return
        if not tail:
            yield node, head, f"{prefix}/{token(head)}"
        else:
            yield from step(node[head], tail, f"{prefix}/{token(head)}")

    yield from step(obj, parts, "")


def _holds(value: Any, allowed: tuple[str, ...]) -> bool:
    text = "" if value is None else value
    return isinstance(text, str) and text in allowed


def reads(row: NameReference | SelectorReference, group: str, kind: str) -> bool:
    """Whether objects of `group`/`kind` hold any field of this row: asked before an object is parsed."""
    return any(source_kind == kind and source_group in (None, group) for source_group, source_kind, _ in row.sources)


def name_slots(obj: Mapping[str, Any], row: NameReference, group: str, kind: str) -> Iterator[Slot]:
    """The fields of `obj` (of `group`/`kind`) that this row says name a target."""
    for source_group, source_kind, path in row.sources:
        if source_kind != kind or source_group not in (None, group):
            continue
        for parent, key, pointer in walk(obj, path):
            value = parent[key]
            if not isinstance(value, str) or not value:
                continue
            siblings: Mapping[str, Any] = parent if isinstance(parent, dict) else {}
            if not all(_holds(siblings.get(field), allowed) for field, allowed in row.when):
                continue
            namespace = siblings.get("namespace") if row.where is Where.SIBLING else None
            yield Slot(parent, key, pointer, value, namespace if isinstance(namespace, str) and namespace else None)


def selectors(obj: Mapping[str, Any], row: SelectorReference, group: str, kind: str) -> list[dict[str, Any]]:
    """The label selectors of `obj` that this row describes (its path leads to a list of them)."""
    found: list[dict[str, Any]] = []
    for source_group, source_kind, path in row.sources:
        if (source_group, source_kind) != (group, kind):
            continue
        for parent, key, _ in walk(obj, path):
            items = parent[key] if isinstance(parent[key], list) else []
            found += [item for item in items if isinstance(item, dict)]
    return found


def selects(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Kubernetes label-selector semantics (matchLabels and matchExpressions); an empty selector selects
    everything, as the API server reads it."""
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        return False
    if any(str(labels.get(key)) != str(value) or key not in labels for key, value in match_labels.items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        if not isinstance(expression, dict):
            return False
        key, operator = str(expression.get("key")), expression.get("operator")
        values = [str(value) for value in expression.get("values") or []]
        present = key in labels
        if operator == "In" and not (present and str(labels[key]) in values):
            return False
        if operator == "NotIn" and present and str(labels[key]) in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True
