"""Renames: the new name from `renameTo`, checked against what the API server accepts for the kind."""

from __future__ import annotations

import re
from typing import NamedTuple

from cmp.errors import RuleError
from cmp.manifests import Resource
from cmp.model import App, Decision
from cmp.ownership.decide import landing_namespace
from cmp.ownership.outcome import rule_label
from cmp.ownership.rules import PLACEHOLDERS, UNRENAMEABLE, Ownership
from cmp.ownership.scope import Scope, ScopeTable

_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


class Renamed(NamedTuple):
    """A rename, keyed the way references find their target: group, kind, landing namespace, old name."""

    group: str
    kind: str
    namespace: str  # "" for a cluster-scoped object
    old: str
    new: str
    cluster_scoped: bool


def placeholder_values(resource: Resource, app: App, scopes: ScopeTable) -> dict[str, str]:
    """What `{app}`, `{release}`, `{name}` and `{namespace}` stand for; `{namespace}` is where the object
    lands (the destination namespace for a cluster-scoped one)."""
    return {
        "app": app.dns_name,
        "release": app.release,
        "name": resource.name,
        "namespace": landing_namespace(resource, scopes, app.namespace) or app.namespace,
    }


def render_name(template: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda found: values[found.group(1)], template)


def has_renamed_form(name: str, template: str, values: dict[str, str]) -> bool:
    """Whether `name` is already what `template` gives for some name: renaming the output of a rename
    again must change nothing."""
    pattern = "".join(
        ("(.+)" if part == "name" else re.escape(values[part])) if position % 2 else re.escape(part)
        for position, part in enumerate(_PLACEHOLDER.split(template))
    )
    return re.fullmatch(pattern, name) is not None


def rename(
    resource: Resource, decision: Decision, app: App, ownership: Ownership | None, scopes: ScopeTable
) -> Renamed | None:
    label = rule_label(decision, ownership)
    where = resource.template_note()
    why = UNRENAMEABLE.get((resource.group, resource.kind))
    if why:
        raise RuleError(
            f"{label} renames {resource.id}{where}, but {why}; narrow the rule's match (e.g. give `kind:`) "
            "or use `others: strip` with one owner for it"
        )
    template = decision.rename_to or "{release}-{name}"
    values = placeholder_values(resource, app, scopes)
    if has_renamed_form(resource.name, template, values):
        return None
    new = render_name(template, values)
    from cmp import name_rules

    problem = name_rules.rule_for(resource.group, resource.kind).problem(new)
    if problem:
        empty = [f"{{{key}}}" for key in _PLACEHOLDER.findall(template) if not values[key]]
        hint = f" ({', '.join(empty)} is empty for this app)" if empty else ""
        raise RuleError(
            f"{label} renames {resource.id}{where} to {new!r} (renameTo {template!r}){hint}, which the API "
            f"server would reject: {problem}; choose a shorter or simpler renameTo, or narrow the rule's match"
        )
    metadata = resource.metadata  # the object's own mapping: a named object has one
    old = resource.name
    metadata["name"] = new
    resource.mark_changed(metadata_only=True)
    scope = scopes.of(resource.group, resource.kind)
    return Renamed(
        resource.group,
        resource.kind,
        landing_namespace(resource, scopes, app.namespace),
        old,
        new,
        cluster_scoped=scope is Scope.CLUSTER,
    )
