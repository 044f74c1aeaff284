"""What a chartshare.yaml says, once loaded (rules.py loads it): the ownership, its rules, their matches
and the references it declares, and the choices each field allows."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from cmp.inputs.paths import is_glob
from cmp.manifests import Resource
from cmp.model import Action, RemoteChart
from cmp.postrender.fields import PostRender

API_VERSION = "chartshare/v1"
KIND = "ChartShare"
UNOWNED_CHOICES = ("fail", "keep", "strip")
CACHE_CHOICES = ("auto", "always", "never")  # the render cache: auto skips charts that render differently each time
OTHERS_CHOICES = ("strip", "keep", "rename", "fail")
PATCH_OPS = ("add", "remove", "replace", "move", "copy", "test")
PLACEHOLDERS = ("app", "release", "name", "namespace")
UNRENAMEABLE = {
    ("", "Namespace"): "a Namespace's name is its identity for everything inside it",
    ("apiextensions.k8s.io", "CustomResourceDefinition"): "a CRD's name is fixed by its spec",
    ("apiregistration.k8s.io", "APIService"): "an APIService's name is fixed by its spec (<version>.<group>)",
}


class Match(NamedTuple):
    """Selectors of a rule; every given field must match, strings are shell-style globs."""

    group: str | None = None
    version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    template: str | None = None

    def matches(self, resource: Resource, namespace: str | None = None) -> bool:
        """`namespace` is where the object lands (see decide.landing_namespace); default: its metadata."""
        if not (
            _fits(self.kind, resource.kind)  # the most telling field first: every rule meets every resource
            and _fits(self.group, resource.group)
            and _fits(self.version, resource.version)
            and _fits(self.name, resource.name)
            and _fits(self.namespace, resource.namespace if namespace is None else namespace)
            and _fits(self.template, resource.source)
        ):
            return False
        if not self.labels:
            return True  # reading labels may parse the resource's metadata
        labels = resource.labels
        return all(str(labels.get(key)) == value and key in labels for key, value in self.labels)


def _fits(pattern: str | None, value: str) -> bool:
    """A shell-style glob (or a plain string, compared as such) against a field; None matches anything."""
    if pattern is None or pattern == value:
        return True
    return is_glob(pattern) and fnmatch.fnmatchcase(value, pattern)


def owns(owners: Sequence[str], app: str) -> bool:
    """Whether one of the owner globs names the app (ARGOCD_APP_NAME as Argo CD sets it)."""
    return any(fnmatch.fnmatchcase(app, pattern) for pattern in owners)


class Rule(NamedTuple):
    """One entry of `rules:`; `position` and `line` locate it in every message."""

    position: int  # in `rules:`
    line: int
    match: Match
    owners: tuple[str, ...]
    others: Action
    protect: bool | None
    rename_to: str
    patch: tuple[dict[str, Any], ...]
    others_written: bool = False  # `others:` is in the file (not the default the owner implies)

    @property
    def label(self) -> str:
        return f"rules[{self.position}] (line {self.line})"


class ReferenceSpec(NamedTuple):
    """A user-declared name reference: `path` in objects of `from_kind` names an object of `kind`."""

    group: str | None  # None: whatever group the kind has in the render
    kind: str
    from_group: str | None  # None: the kind in any group
    from_kind: str
    path: str
    line: int


class Ownership(NamedTuple):
    """A validated chartshare.yaml."""

    path: Path
    chart: str | RemoteChart  # a folder (relative to this file), or a chart in a Helm repository or OCI registry
    owners: tuple[str, ...]
    unowned: Action
    allow_empty: bool
    rules: tuple[Rule, ...]
    references: tuple[ReferenceSpec, ...]
    cluster_scoped_kinds: tuple[str, ...]
    namespaced_kinds: tuple[str, ...]
    display: str = ""  # the file as messages name it (relative to the repository root)
    cache: str = "auto"  # one of CACHE_CHOICES
    post_render: PostRender = PostRender()  # kustomize's fields, applied to helm's output before the rules

    def says_strip(self, index: int | None) -> bool:
        """Whether rules[index] writes `others: strip` itself, rather than the default an owner implies: the
        app accepts the owner's copy as its own."""
        if index is None or not 0 <= index < len(self.rules):
            return False
        rule = self.rules[index]
        return rule.others_written and rule.others is Action.STRIP

    def rule_label(self, index: int | None) -> str:
        """`apps/x/chartshare.yaml:12: rules[1]`: where a message about a rule sends the reader."""
        if index is None or not 0 <= index < len(self.rules):
            return self.display or self.path.name
        return f"{self.display or self.path.name}:{self.rules[index].line}: rules[{index}]"
