"""Which resources this app emits: rules + scope + app name -> one Decision per resource.

Pure: no I/O, no mutation. The first rule whose match fits wins. A rule with an owner gives the object to
the apps its globs name and applies `others` to everyone else; a rule without one applies `others` to every
app. Cluster-scoped objects no rule matches go to the top-level owner, else follow `unowned`.
"""

from __future__ import annotations

from collections.abc import Sequence

from cmp.manifests import Resource
from cmp.model import Action, Decision
from cmp.ownership.rules import Ownership, Rule, owns
from cmp.ownership.scope import Scope, ScopeTable

# Objects whose loss takes other objects with it: their owner's copy is protected from pruning by default.
PROTECTED_BY_DEFAULT = frozenset(
    {
        ("", "Namespace"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("", "PersistentVolume"),
    }
)


def decide(
    resources: Sequence[Resource], ownership: Ownership, app: str, scopes: ScopeTable, namespace: str = ""
) -> list[Decision]:
    """One decision per resource, in order; `namespace` is the app's destination namespace."""
    return [decide_one(resource, ownership, app, scopes, namespace) for resource in resources]


def landing_namespace(resource: Resource, scopes: ScopeTable, destination: str) -> str:
    """Where the object lands: its own namespace, else the destination for a namespaced (or unknown) kind,
    none for a cluster-scoped one. `match.namespace` is compared with this, so a rule can name the
    namespace of objects whose templates leave it to helm's --namespace."""
    if scopes.of(resource.group, resource.kind) is Scope.CLUSTER:
        return ""
    return resource.namespace or destination


def matching_rule(resource: Resource, ownership: Ownership, scopes: ScopeTable, namespace: str = "") -> Rule | None:
    """The first rule whose match fits, or None."""
    landing = landing_namespace(resource, scopes, namespace)
    return next((rule for rule in ownership.rules if rule.match.matches(resource, landing)), None)


def decide_one(resource: Resource, ownership: Ownership, app: str, scopes: ScopeTable, namespace: str = "") -> Decision:
    rule = matching_rule(resource, ownership, scopes, namespace)
    if rule is not None:
        return by_rule(resource, rule, app)
    if scopes.of(resource.group, resource.kind) is not Scope.CLUSTER:
        return Decision(Action.KEEP, "namespaced, no rule")
    if ownership.owners:
        if owns(ownership.owners, app):
            return Decision(Action.KEEP, "top-level owner", protect=_protected_kind(resource), owners=ownership.owners)
        return Decision(Action.STRIP, f"top-level owner is {_names(ownership.owners)}", owners=ownership.owners)
    if ownership.unowned is Action.FAIL:
        return Decision(Action.FAIL, "cluster-scoped and no rule or owner covers it (unowned: fail)")
    return Decision(ownership.unowned, f"cluster-scoped, unowned: {ownership.unowned.value}")


def by_rule(resource: Resource, rule: Rule, app: str) -> Decision:
    """What one rule that matches the resource says for this app (the fleet policy's rules are read so too)."""
    if rule.owners and owns(rule.owners, app):
        protect = rule.protect if rule.protect is not None else _protected_kind(resource)
        return Decision(Action.KEEP, "owner", rule.position, protect, patch=rule.patch, owners=rule.owners)
    reason = f"owned by {_names(rule.owners)}" if rule.owners else f"others: {rule.others.value}"
    emits = rule.others in (Action.KEEP, Action.RENAME)
    return Decision(
        rule.others,
        reason,
        rule.position,
        protect=bool(rule.protect) and emits,
        rename_to=rule.rename_to if rule.others is Action.RENAME else None,
        patch=rule.patch if emits else (),
        owners=rule.owners,
    )


def _protected_kind(resource: Resource) -> bool:
    return (resource.group, resource.kind) in PROTECTED_BY_DEFAULT


def _names(globs: Sequence[str]) -> str:
    return ", ".join(globs)
