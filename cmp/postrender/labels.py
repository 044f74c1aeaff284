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


def places(obj: dict[str, Any], specs: tuple[Spec, ...]) -> list[dict[str, Any]]:
    """The maps the specs name in the object (created on the way where a spec says so)."""
    found: list[dict[str, Any]] = []
    for spec in specs:
        _collect(obj, spec.path, spec.create, found)
    return found


def _collect(node: Any, path: tuple[str, ...], create: bool, found: list[dict[str, Any]]) -> None:
    if isinstance(node, list):
        for item in node:
            _collect(item, path, create, found)
        return
    if not isinstance(node, dict):
        return
    key = path[0]
    if node.get(key) is None:
        if not create:
            return
        node[key] = {}
    if len(path) > 1:
        _collect(node[key], path[1:], create, found)
    elif isinstance(node[key], dict):
        found.append(node[key])


class Setter:
    """Sets pairs as kustomize does, value nodes shared included: within one object, the places where
    one entry creates a key hold one node, and a later entry that sets that key where it exists writes
    into the node, so every place the first entry created it changes too (kustomize's observable
    behaviour when two `labels` entries set one key)."""

    def __init__(self) -> None:
        self._node: dict[tuple[int, str], int] = {}  # (id of a map, key) -> the node it holds
        self._members: dict[int, list[dict[str, Any]]] = {}
        self._next = 0

    def set(self, maps: list[dict[str, Any]], pairs: tuple[tuple[str, str], ...]) -> None:
        """Set the pairs in one object's maps (one entry's places in it)."""
        for key, value in sorted(pairs):
            self._next += 1
            created = self._next
            for place in maps:
                shared = self._node.get((id(place), key))
                if key in place and shared is not None:
                    for member in self._members[shared]:
                        member[key] = value
                elif key in place:
                    place[key] = value
                else:
                    place[key] = value
                    self._node[(id(place), key)] = created
                    self._members.setdefault(created, []).append(place)
