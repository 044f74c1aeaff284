"""`labels`, `commonLabels` and `commonAnnotations`: kustomize's field specs, where each pair is set.

`metadata` always (created when missing); pod templates' metadata with `includeTemplates`; with
`includeSelectors` (and `commonLabels`), the selectors too, some created when missing (a Service's, a
Deployment's) and some only where they exist (affinity terms, policies).
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Spec(NamedTuple):
    """A place a pair goes: the path, whether to create it, and the kinds it is for (empty: any)."""

    path: tuple[str, ...]
    create: bool
    group: str | None = None
    version: str | None = None
    kind: str | None = None


def _specs(rows: str) -> tuple[Spec, ...]:
    """Rows of `path create [kind] [group] [version]` (`-` for any)."""
    found = []
    for row in rows.strip().splitlines():
        path, create, kind, group, version = [*row.split(), "-", "-", "-"][:5]
        found.append(
            Spec(
                tuple(path.split("/")),
                create == "create",
                None if group == "-" else group,
                None if version == "-" else version,
                None if kind == "-" else kind,
            )
        )
    return tuple(found)


METADATA_LABELS = _specs("metadata/labels create")
TEMPLATE_LABELS = METADATA_LABELS + _specs(
    """
spec/template/metadata/labels create ReplicationController - v1
spec/template/metadata/labels create Deployment
spec/template/metadata/labels create ReplicaSet
spec/template/metadata/labels create DaemonSet
spec/template/metadata/labels create StatefulSet apps
spec/template/metadata/labels create Job batch
spec/jobTemplate/metadata/labels create CronJob batch
spec/jobTemplate/spec/template/metadata/labels create CronJob batch
"""
)
_AFFINITY = (
    "podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm",
    "podAffinity/requiredDuringSchedulingIgnoredDuringExecution",
    "podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm",
    "podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution",
)
_POD_SELECTORS = "\n".join(
    [f"spec/template/spec/affinity/{term}/labelSelector/matchLabels keep {{kind}} apps" for term in _AFFINITY]
    + ["spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels keep {kind} apps"]
)
SELECTOR_LABELS = (
    _specs(
        "spec/selector create Service - v1\n"
        "spec/selector create ReplicationController - v1\n"
        "spec/selector/matchLabels create Deployment\n"
        + _POD_SELECTORS.format(kind="Deployment")
        + "\nspec/selector/matchLabels create ReplicaSet\n"
        "spec/selector/matchLabels create DaemonSet\n"
        "spec/selector/matchLabels create StatefulSet apps\n"
        + _POD_SELECTORS.format(kind="StatefulSet")
        + """
spec/selector/matchLabels keep Job batch
spec/jobTemplate/spec/selector/matchLabels keep CronJob batch
spec/selector/matchLabels keep PodDisruptionBudget policy
spec/podSelector/matchLabels keep NetworkPolicy networking.k8s.io
spec/ingress/from/podSelector/matchLabels keep NetworkPolicy networking.k8s.io
spec/egress/to/podSelector/matchLabels keep NetworkPolicy networking.k8s.io
"""
    )
    + TEMPLATE_LABELS
)
ANNOTATIONS = _specs(
    """
metadata/annotations create
spec/template/metadata/annotations create ReplicationController - v1
spec/template/metadata/annotations create Deployment
spec/template/metadata/annotations create ReplicaSet
spec/template/metadata/annotations create DaemonSet
spec/template/metadata/annotations create StatefulSet
spec/template/metadata/annotations create Job batch
spec/jobTemplate/metadata/annotations create CronJob batch
spec/jobTemplate/spec/template/metadata/annotations create CronJob batch
"""
)


def specs_for(specs: tuple[Spec, ...], group: str, version: str, kind: str) -> tuple[Spec, ...]:
    return tuple(
        spec
        for spec in specs
        if (spec.kind is None or spec.kind == kind)
        and (spec.group is None or spec.group == group)
        and (spec.version is None or spec.version == version)
    )


def set_pairs(obj: dict[str, Any], pairs: tuple[tuple[str, str], ...], specs: tuple[Spec, ...]) -> None:
    """Set the pairs at every place the specs name in the object."""
    for spec in specs:
        _set(obj, spec.path, spec.create, pairs)


def _set(node: Any, path: tuple[str, ...], create: bool, pairs: tuple[tuple[str, str], ...]) -> None:
    if isinstance(node, list):
        for item in node:
            _set(item, path, create, pairs)
        return
    if not isinstance(node, dict):
        return
    key = path[0]
    if node.get(key) is None:
        if not create:
            return
        node[key] = {}
    if len(path) > 1:
        _set(node[key], path[1:], create, pairs)
    elif isinstance(node[key], dict):
        node[key].update(pairs)
