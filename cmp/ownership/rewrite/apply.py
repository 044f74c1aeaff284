"""The order of the steps, and the split between what an app emits and what it strips."""

from __future__ import annotations

from collections.abc import Sequence

from cmp.errors import RuleError
from cmp.manifests import Resource
from cmp.model import Action, App, Decision
from cmp.ownership.outcome import Applied, Fix
from cmp.ownership.rewrite.clashes import refuse_clashes
from cmp.ownership.rewrite.patch import patch
from cmp.ownership.rewrite.protect import protect
from cmp.ownership.rewrite.rename import Renamed, rename
from cmp.ownership.rules import Ownership
from cmp.ownership.scope import ScopeTable


def apply_decisions(
    resources: Sequence[Resource],
    decisions: Sequence[Decision],
    app: App,
    *,
    ownership: Ownership | None = None,
    scopes: ScopeTable | None = None,
) -> tuple[list[Applied], list[Applied]]:
    """(emitted, stripped), each in helm's order; raises RuleError for a `fail` decision or a rename,
    patch or resulting name clash that cannot be carried out."""
    scopes = scopes or ScopeTable()
    emitted: list[tuple[Resource, Decision]] = []
    stripped: list[Applied] = []
    for resource, decision in zip(resources, decisions, strict=True):
        if decision.action is Action.FAIL:
            raise RuleError(refusal(resource, decision, app))
        if decision.action is Action.STRIP:
            stripped.append(Applied(resource, decision))
        else:
            emitted.append((resource, decision))

    renamed_from: dict[int, str] = {}
    kept_names: set[int] = set()
    renames: list[Renamed] = []
    for resource, decision in emitted:
        if decision.action is not Action.RENAME or not resource.name:
            continue
        renamed = rename(resource, decision, app, ownership, scopes)
        if renamed is None:
            kept_names.add(resource.index)
            continue
        renamed_from[resource.index] = renamed.old
        renames.append(renamed)

    fixes: dict[int, list[Fix]] = {}
    if renames:
        from cmp.ownership.reference_fields import NAME_REFERENCES
        from cmp.ownership.rewrite.references import fix_references, user_rows

        rows = NAME_REFERENCES + user_rows(ownership.references if ownership else ())
        fixes = fix_references([resource for resource, _ in emitted], renames, rows, app, scopes, ownership)
    patched = {resource.index: patch(resource, decision, ownership) for resource, decision in emitted}
    refuse_clashes(emitted, renamed_from, patched, app, scopes, ownership)
    return [
        Applied(
            resource,
            decision,
            protected=decision.protect and protect(resource),
            renamed_from=renamed_from.get(resource.index),
            fixed=tuple(fixes.get(resource.index, ())),
            patched=patched[resource.index],
            kept_name=resource.index in kept_names,
        )
        for resource, decision in emitted
    ], stripped


def refusal(resource: Resource, decision: Decision, app: App) -> str:
    where = resource.template_note()
    if decision.rule is None and decision.policy is None:
        return (
            f"{resource.id}{where} is cluster-scoped and no rule or owner in chartshare.yaml covers it; "
            "add a rule with an owner, a top-level `owner:`, or set `unowned: keep` or `unowned: strip`"
        )
    return f"app {app.name} may not emit {resource.id}{where}: {decision.origin} says others: fail ({decision.reason})"
