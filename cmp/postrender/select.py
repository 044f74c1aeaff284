"""Which objects a patch is about, by kustomize's rules: a `target:` selects by anchored regular
expressions and label selectors, against an object's original or current name and namespace; a patch
without one names its object by its own apiVersion, kind, name and namespace (an unset namespace meaning
`default`, and none at all for a cluster-scoped kind)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from cmp import label_selectors
from cmp.label_selectors import DOES_NOT_EXIST, EXISTS, IN, NOT_IN, Requirement
from cmp.model import split_api_version
from cmp.postrender.fields import Target
from cmp.postrender.subject import Subject

ClusterScoped = Callable[[str, str], bool]  # (group, kind) -> whether kustomize knows the kind as cluster-scoped

_NOT_A_NAMESPACE = "_non_namespaceable_"  # kustomize's effective namespace of a cluster-scoped object


def effective_namespace(group: str, kind: str, namespace: str, cluster: ClusterScoped) -> str:
    if cluster(group, kind):
        return _NOT_A_NAMESPACE
    return namespace or "default"


def _anchored(pattern: str) -> re.Pattern[str] | None:
    return re.compile(f"^(?:{pattern})$") if pattern else None


def _fits(pattern: re.Pattern[str] | None, *values: str) -> bool:
    return pattern is None or any(pattern.match(value) for value in values)


def selected(target: Target, subjects: Iterable[Subject], cluster: ClusterScoped) -> list[Subject]:
    """The objects the target selects, in the render's order."""
    group, version, kind, name, namespace = (_anchored(part) for part in target[:5])
    labels = parse_selector(target.label_selector)
    annotations = parse_selector(target.annotation_selector)
    found = []
    for subject in subjects:
        if subject.deleted:
            continue
        origin_group, _, origin_kind, origin_name, origin_namespace = subject.origin
        if not _fits(
            namespace,
            effective_namespace(origin_group, origin_kind, origin_namespace, cluster),
            effective_namespace(subject.group, subject.kind, subject.namespace, cluster),
        ):
            continue
        if not (
            _fits(name, origin_name, subject.name)
            and _fits(group, subject.group)
            and _fits(version, subject.version)
            and _fits(kind, subject.kind)
        ):
            continue
        if labels and not _matches(labels, subject.tags("labels")):
            continue
        if annotations and not _matches(annotations, subject.tags("annotations")):
            continue
        found.append(subject)
    return found


def by_identity(document: dict[str, Any], subjects: Iterable[Subject], cluster: ClusterScoped) -> list[Subject]:
    """The objects a strategic merge patch without a target names (kustomize wants exactly one)."""
    group, version = split_api_version(str(document.get("apiVersion") or ""))
    kind = str(document.get("kind") or "")
    meta = document.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = str(meta.get("name") or "")
    namespace = effective_namespace(group, kind, str(meta.get("namespace") or ""), cluster)
    found = []
    for subject in subjects:
        if subject.deleted or (subject.kind, subject.group, subject.version) != (kind, group, version):
            continue
        origin_group, _, origin_kind, origin_name, origin_namespace = subject.origin
        ids = (
            (origin_name, effective_namespace(origin_group, origin_kind, origin_namespace, cluster)),
            (subject.name, effective_namespace(subject.group, subject.kind, subject.namespace, cluster)),
        )
        if (name, namespace) in ids:
            found.append(subject)
    return found


_TERM = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<nkey>[^\s,=!()]+)"
    r"|(?P<key>[^\s,=!()]+)\s*(?:(?P<op>==|=|!=)\s*(?P<value>[^\s,=!()]*)"
    r"|\s+(?P<set>in|notin)\s*\((?P<values>[^()]*)\))?)\s*(?:,|$)"
)


class SelectorError(ValueError):
    """A label selector kustomize (Kubernetes) cannot read."""


def parse_selector(text: str) -> tuple[Requirement, ...]:
    """A Kubernetes label selector (`app=web,tier!=db,env in (a,b),!legacy`) as requirements."""
    if not text.strip():
        return ()
    requirements: list[Requirement] = []
    position = 0
    while position < len(text):
        found = _TERM.match(text, position)
        if found is None or found.end() == position:
            raise SelectorError(f"cannot read the label selector {text!r} at {text[position:]!r}")
        position = found.end()
        if found["not"]:
            requirements.append((found["nkey"], DOES_NOT_EXIST, frozenset()))
        elif found["op"]:
            requirements.append((found["key"], NOT_IN if found["op"] == "!=" else IN, frozenset({found["value"]})))
        elif found["set"]:
            values = frozenset(value.strip() for value in found["values"].split(",") if value.strip())
            requirements.append((found["key"], IN if found["set"] == "in" else NOT_IN, values))
        else:
            requirements.append((found["key"], EXISTS, frozenset()))
    return tuple(requirements)


def _matches(requirements: tuple[Requirement, ...], tags: dict[str, Any]) -> bool:
    """The selector over an object's labels or annotations, their values read as strings."""
    return label_selectors.matches(requirements, {key: str(value) for key, value in tags.items()})
