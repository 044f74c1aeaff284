"""Decisions under the fleet policy: the platform's entry for the app's project decides first, the app's own
chartshare.yaml only what the policy leaves open.

Pure. In order: a `forbid` match strips the object (the platform decided, so no unbinding refusal holds);
else the first policy rule that matches decides it, whatever the app's file says (and a notice names the
app's rule it overrode); else the app's own rules. Whatever the app then emits that a `protect` match fits
is protected, `protect: false` in the app's file notwithstanding.
"""

from __future__ import annotations

from collections.abc import Sequence

from cmp.manifests import Resource
from cmp.model import Action, Decision, PolicyRef
from cmp.ownership.decide import by_rule, decide_one, landing_namespace, matching_rule
from cmp.ownership.policy import ProjectPolicy
from cmp.ownership.rules import Ownership
from cmp.ownership.scope import ScopeTable

FORBIDDEN = "forbidden in this project by the fleet policy"


def decide(
    resources: Sequence[Resource],
    ownership: Ownership,
    app: str,
    scopes: ScopeTable,
    namespace: str,
    policy: ProjectPolicy | None,
) -> list[Decision]:
    """One decision per resource, in order, the policy's entry (None: no policy for this app) first."""
    if policy is None:
        return [decide_one(resource, ownership, app, scopes, namespace) for resource in resources]
    return [_governed(resource, ownership, app, scopes, namespace, policy) for resource in resources]


def _governed(
    resource: Resource, ownership: Ownership, app: str, scopes: ScopeTable, namespace: str, policy: ProjectPolicy
) -> Decision:
    landing = landing_namespace(resource, scopes, namespace)
    for entry in policy.forbid:
        if entry.match.matches(resource, landing):
            ref = PolicyRef(f"{policy.place}.forbid[{entry.position}]", policy.at(entry.line), accepted=True)
            return Decision(Action.STRIP, FORBIDDEN, policy=ref)
    tenant = matching_rule(resource, ownership, scopes, namespace)
    overrode = ownership.rule_label(ownership.rules.index(tenant)) if tenant is not None else ""
    for rule in policy.rules:
        if rule.match.matches(resource, landing):
            decided = by_rule(resource, rule, app)
            accepted = rule.others_written and rule.others is Action.STRIP
            ref = PolicyRef(f"{policy.place}.rules[{rule.position}]", policy.at(rule.line), accepted, overrode)
            return decided._replace(rule=None, policy=ref)
    decided = decide_one(resource, ownership, app, scopes, namespace)
    if decided.action not in (Action.KEEP, Action.RENAME) or decided.protect:
        return decided
    for entry in policy.protect:
        if entry.match.matches(resource, landing):
            said_no = tenant is not None and tenant.protect is False
            ref = PolicyRef(
                f"{policy.place}.protect[{entry.position}]", policy.at(entry.line), overrode=overrode if said_no else ""
            )
            return decided._replace(protect=True, policy=ref)
    return decided


def override_notices(resources: Sequence[Resource], decisions: Sequence[Decision]) -> list[str]:
    """One notice per object whose policy entry overrode a rule of the app's own, and per forbidden object."""
    notices: list[str] = []
    for resource, decision in zip(resources, decisions, strict=True):
        ref = decision.policy
        if ref is None:
            continue
        if ".forbid[" in ref.place:
            notices.append(f"notice: stripped {resource.id}: {FORBIDDEN} ({ref.label}); the app may not emit it")
        elif ref.overrode and ".protect[" in ref.place:
            notices.append(
                f"notice: the fleet policy protects {resource.id} ({ref.label}): `protect: false` in the app's own "
                f"{ref.overrode} does not hold; the platform team's policy comes first"
            )
        elif ref.overrode:
            notices.append(
                f"notice: the fleet policy decides {resource.id} ({ref.label}): the app's own {ref.overrode} "
                "does not apply to it; the platform team's policy comes first"
            )
    return notices
