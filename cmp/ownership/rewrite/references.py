"""References that follow a rename: every field of the app's output that names a renamed object."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cmp.errors import RuleError
from cmp.manifests import Resource, names, searchable, surely_lacks
from cmp.model import App
from cmp.ownership import reference_fields
from cmp.ownership.decide import landing_namespace
from cmp.ownership.outcome import Fix
from cmp.ownership.reference_fields import NameReference, Slot, Where
from cmp.ownership.rewrite.rename import Renamed
from cmp.ownership.rules import Ownership, ReferenceSpec
from cmp.ownership.scope import ScopeTable


def user_rows(specs: Iterable[ReferenceSpec]) -> tuple[NameReference, ...]:
    """`references:` entries as table rows; the target's namespace follows its scope."""
    return tuple(
        NameReference(
            f"references[{position}]",
            (spec.group, spec.kind),
            ((spec.from_group, spec.from_kind, spec.path),),
            Where.SCOPE,
        )
        for position, spec in enumerate(specs)
    )


def fix_references(
    emitted: Sequence[Resource],
    renames: Sequence[Renamed],
    rows: Sequence[NameReference],
    app: App,
    scopes: ScopeTable,
    ownership: Ownership | None = None,
) -> dict[int, list[Fix]]:
    """Point every reference field of the emitted resources that names a renamed object at its new name;
    returns the fixes by resource index."""
    if not renames:
        return {}
    old_names: dict[str, set[str]] = {}  # renamed kind -> the names it had
    for rename in renames:
        old_names.setdefault(rename.kind, set()).add(rename.old)
    rows = [row for row in rows if row.target[1] in old_names]
    words = {kind: searchable(names) for kind, names in old_names.items()}
    readers: dict[tuple[str, str], list[NameReference]] = {}  # (group, kind) -> the rows it may hold fields of
    fixes: dict[int, list[Fix]] = {}
    for resource in emitted:
        referrer = None
        group_kind = (resource.group, resource.kind)
        if group_kind not in readers:
            readers[group_kind] = [row for row in rows if reference_fields.reads(row, *group_kind)]
        for row in readers[group_kind]:
            if surely_lacks(resource, words[row.target[1]]):
                continue  # no old name anywhere in its text: nothing to fix, nothing to parse
            if referrer is None:
                referrer = landing_namespace(resource, scopes, app.namespace)
            view = names.fields(resource, (path for _, _, path in row.sources))
            for slot in reference_fields.name_slots(view, row, resource.group, resource.kind):
                target = _target(slot, row, referrer, renames, resource, ownership)
                if target is None:
                    continue
                names.replace_name(resource, slot.pointer, target.old, target.new)
                fixes.setdefault(resource.index, []).append(Fix(slot.pointer, target.old, target.new))
    return fixes


def _target(
    slot: Slot,
    row: NameReference,
    referrer: str,
    renames: Sequence[Renamed],
    resource: Resource,
    ownership: Ownership | None,
) -> Renamed | None:
    group, kind = row.target
    found = {
        (rename.group, rename.new): rename
        for rename in renames
        if rename.kind == kind
        and group in (None, rename.group)
        and rename.old == slot.name
        and rename.namespace == _expected_namespace(row.where, slot, referrer, rename)
    }
    if len(found) > 1:
        groups = ", ".join(sorted(group or "core" for group, _ in found))
        where = ownership.display if ownership else "chartshare.yaml"
        raise RuleError(
            f"{where}: {row.id}: {slot.pointer} of {resource.id} names {kind} {slot.name!r}, which is renamed "
            f"differently in groups {groups}; give the reference a `group:`"
        )
    return next(iter(found.values()), None)


def _expected_namespace(where: Where, slot: Slot, referrer: str, rename: Renamed) -> str:
    if where is Where.CLUSTER:
        return ""
    if where is Where.SIBLING:
        return slot.sibling_namespace or referrer
    if where is Where.SCOPE and rename.cluster_scoped:
        return ""
    return referrer
