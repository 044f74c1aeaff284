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
from typing import Any

from cmp.model import GroupKind, split_api_version
from cmp.ownership.scope_kinds import (
    BUILTIN_CLUSTER_SCOPED,
    BUILTIN_NAMESPACED,
    CLUSTER_SCOPED_GROUPS,
    CRD_CLUSTER_SCOPED,
    CRD_NAMESPACED,
)


class Scope(enum.Enum):
    """Where an object of some kind lives."""

    CLUSTER = "Cluster"
    NAMESPACED = "Namespaced"
    UNKNOWN = "Unknown"


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
        if not isinstance(api_version, str) or split_api_version(api_version)[0] != "apiextensions.k8s.io":
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
