"""Carrying out decisions: strip, rename (fixing every reference), patch and protect what one app emits.

The steps run in a fixed order. Renames first; then every reference to a renamed object, from the table in
references.py plus the file's `references:`; then the rules' JSON patches, so that they see the final
names; then the protective annotation, last, so that no patch can take it away (a patch may still set
Prune=confirm, which protection keeps). Only resources a step really changed are marked changed, and a
change confined to `metadata` is marked as such; a patch of plain keys elsewhere is carried out on helm's
text (textpatch.py); everything else keeps helm's bytes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from cmp.annotations import PROTECTION, SYNC_OPTIONS, sync_options
from cmp.errors import RuleError
from cmp.manifests import Resource, searchable, surely_lacks
from cmp.model import Action, App, Decision, ResourceId
from cmp.ownership.decide import landing_namespace
from cmp.ownership.rules import PLACEHOLDERS, UNRENAMEABLE, Ownership, ReferenceSpec, pointer_parts
from cmp.ownership.scope import Scope, ScopeTable

if TYPE_CHECKING:  # the reference table, name rules and text patches load only when a rule needs them
    from cmp.ownership.references import NameReference, Slot, Where

_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


class Fix(NamedTuple):
    """One reference field rewritten to follow a rename."""

    pointer: str
    old: str
    new: str


class Applied(NamedTuple):
    """A resource this app emits, with the decision that shaped it and what was actually done."""

    resource: Resource
    decision: Decision
    protected: bool = False
    renamed_from: str | None = None  # the name helm gave it, when this app emits it under another
    fixed: tuple[Fix, ...] = ()
    patched: int = 0  # JSON Patch operations applied
    kept_name: bool = False  # a rename was asked for, but the name already has the form renameTo gives


class Renamed(NamedTuple):
    """A rename, keyed the way references find their target: group, kind, landing namespace, old name."""

    group: str
    kind: str
    namespace: str  # "" for a cluster-scoped object
    old: str
    new: str
    cluster_scoped: bool


def apply(
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
            raise RuleError(_refusal(resource, decision, app))
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
        rename = _rename(resource, decision, app, ownership, scopes)
        if rename is None:
            kept_names.add(resource.index)
            continue
        renamed_from[resource.index] = rename.old
        renames.append(rename)

    fixes: dict[int, list[Fix]] = {}
    if renames:
        from cmp.ownership.references import NAME_REFERENCES

        rows = NAME_REFERENCES + user_rows(ownership.references if ownership else ())
        fixes = fix_references([resource for resource, _ in emitted], renames, rows, app, scopes, ownership)
    patched = {resource.index: _patch(resource, decision, ownership) for resource, decision in emitted}
    _refuse_clashes(emitted, renamed_from, patched, app, scopes, ownership)
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


def preload(ownership: Ownership | None) -> None:
    """Import the modules this app's rules will need (renames, text patches) while helm renders, rather
    than after it, when every millisecond adds to the render's time."""
    rules = ownership.rules if ownership is not None else ()
    if any(rule.others is Action.RENAME for rule in rules):
        from cmp.ownership import references  # noqa: F401
    if any(rule.patch for rule in rules):
        from cmp.manifests import textpatch  # noqa: F401


# --- renames -------------------------------------------------------------------------------------------------


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


def _rename(
    resource: Resource, decision: Decision, app: App, ownership: Ownership | None, scopes: ScopeTable
) -> Renamed | None:
    label = _rule_label(decision, ownership)
    where = _where(resource)
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
    from cmp import naming

    problem = naming.rule_for(resource.group, resource.kind).problem(new)
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


# --- references ----------------------------------------------------------------------------------------------


def user_rows(specs: Iterable[ReferenceSpec]) -> tuple[NameReference, ...]:
    """`references:` entries as table rows; the target's namespace follows its scope."""
    from cmp.ownership.references import NameReference, Where

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
    from cmp.ownership import references

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
            readers[group_kind] = [row for row in rows if references.reads(row, *group_kind)]
        for row in readers[group_kind]:
            if surely_lacks(resource, words[row.target[1]]):
                continue  # no old name anywhere in its text: nothing to fix, nothing to parse
            if referrer is None:
                referrer = landing_namespace(resource, scopes, app.namespace)
            for slot in references.name_slots(resource.obj, row, resource.group, resource.kind):
                target = _target(slot, row, referrer, renames, resource, ownership)
                if target is None:
                    continue
                slot.parent[slot.key] = target.new
                resource.mark_changed(metadata_only=slot.pointer.startswith("/metadata/"))
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
    from cmp.ownership.references import Where

    if where is Where.CLUSTER:
        return ""
    if where is Where.SIBLING:
        return slot.sibling_namespace or referrer
    if where is Where.SCOPE and rename.cluster_scoped:
        return ""
    return referrer


# --- patches -------------------------------------------------------------------------------------------------


def _patch(resource: Resource, decision: Decision, ownership: Ownership | None) -> int:
    """Apply the rule's RFC 6902 operations in order; returns how many were applied."""
    if not decision.patch:
        return 0
    if _text_patched(resource, decision.patch):
        return len(decision.patch)
    import jsonpatch  # only apps whose rules patch pay for the import
    import jsonpointer

    label = _rule_label(decision, ownership)
    before = resource.obj
    try:  # copying and comparing recurse: a document nested hundreds deep exhausts Python's stack
        work: Any = copy.deepcopy(before)
        for position, operation in enumerate(decision.patch):
            try:
                work = jsonpatch.JsonPatch([operation]).apply(work, in_place=True)
            except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as error:
                raise RuleError(
                    f"{label}: patch[{position}] ({_operation(operation)}) fails on {resource.id}"
                    f"{_where(resource)}: {_cause(error, operation)}; fix the operation or narrow the rule's match"
                ) from None
        touched = {key for key in {*before, *work} if before.get(key) != work.get(key)}
    except RecursionError:
        raise RuleError(f"{label}: {resource.id}{_where(resource)} is nested too deeply to patch") from None
    problem = _incomplete(work)
    if problem:
        raise RuleError(
            f"{label}: patch leaves {resource.id}{_where(resource)} {problem}, which Argo CD rejects; "
            "fix the operations"
        )
    if touched:
        resource.obj = work
        resource.mark_changed(metadata_only=touched == {"metadata"})
    return len(decision.patch)


def _text_patched(resource: Resource, operations: Sequence[dict[str, Any]]) -> bool:
    from cmp.manifests import textpatch  # only apps whose rules patch load it

    return textpatch.patch_resource(resource, operations)


def _operation(operation: dict[str, Any]) -> str:
    text = f"{operation['op']} {operation['path'] or '/'}"
    return f"{text} from {operation['from']}" if "from" in operation else text


def _cause(error: Exception, operation: dict[str, Any]) -> str:
    """The library's reason without the dump of the document it carries (it may hold secrets)."""
    import jsonpatch

    if isinstance(error, jsonpatch.JsonPatchTestFailed):
        return f"the value at {operation['path']} is not the tested value"
    message = re.sub(r" in [\[{].*$", "", str(error), flags=re.S)
    if operation["op"] == "add" and "not found" in message:
        message += " (`add` needs the parent to exist: add the parent first, e.g. with value {})"
    return message


def _incomplete(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return "not an object"
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            return f"without `{key}`"
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or not (metadata.get("name") or metadata.get("generateName")):
        return "without `metadata.name`"
    return None


# --- name clashes --------------------------------------------------------------------------------------------


def _refuse_clashes(
    emitted: Sequence[tuple[Resource, Decision]],
    renamed_from: dict[int, str],
    patched: dict[int, int],
    app: App,
    scopes: ScopeTable,
    ownership: Ownership | None,
) -> None:
    """A rename or patch must not give two emitted objects one identity: Argo CD tracks only one."""
    seen: dict[ResourceId, tuple[Resource, Decision]] = {}
    for resource, decision in emitted:
        if not resource.name:
            continue
        identity = ResourceId(
            resource.group, resource.kind, landing_namespace(resource, scopes, app.namespace), resource.name
        )
        first = seen.setdefault(identity, (resource, decision))
        if first[0] is resource:
            continue
        culprit = next(
            (pair for pair in (first, (resource, decision)) if pair[0].index in renamed_from or patched[pair[0].index]),
            (resource, decision),
        )
        raise RuleError(
            f"{_rule_label(culprit[1], ownership)}: after renames and patches, two objects would both be {identity} "
            f"(templates {first[0].source or '?'} and {resource.source or '?'}); Argo CD can track only one: "
            "change renameTo or the rule's match"
        )


# --- protection ----------------------------------------------------------------------------------------------


def protect(resource: Resource) -> bool:
    """Merge Prune=false,Delete=false into the sync-options annotation, keeping any Prune=/Delete= already
    set (Prune=confirm stays). Returns whether the object changed."""
    metadata = resource.mutable_metadata()
    if metadata is None:
        return False
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
    options = sync_options(annotations)
    present = {option.partition("=")[0] for option in options}
    missing = [option for option in PROTECTION if option.partition("=")[0] not in present]
    if not missing:
        return False
    annotations[SYNC_OPTIONS] = ",".join(options + missing)
    metadata["annotations"] = annotations
    resource.mark_changed(metadata_only=True)
    return True


# --- the report ----------------------------------------------------------------------------------------------


def describe(applied: Applied) -> str | None:
    """One stderr line for a resource this app changed beyond protection (None otherwise): what was done,
    first naming the object, then each further step."""
    decision = applied.decision
    subject = applied.resource.id
    steps: list[tuple[str, str]] = []  # (the step naming the object, the same step after a first one)
    if applied.renamed_from is not None:
        old = subject._replace(name=applied.renamed_from)
        text = f"renamed {old} to {subject.name} ({decision.origin}: {decision.reason})"
        steps.append((text, text))
    elif applied.kept_name:
        text = f"kept the name of {subject}: it already has the form renameTo gives ({decision.origin})"
        steps.append((text, text))
    if applied.fixed:
        fixes = ", ".join(f"{fix.pointer} {fix.old} -> {fix.new}" for fix in applied.fixed)
        steps.append((f"fixed {subject}: {fixes}", f"fixed {fixes}"))
    if applied.patched:
        count = f"{applied.patched} operation{'s' if applied.patched > 1 else ''}"
        steps.append((f"patched {subject} by {decision.origin} ({count})", f"patched by {decision.origin} ({count})"))
    if not steps:
        return None
    if applied.protected:
        steps.append(("", "protected"))
    return "; ".join([steps[0][0]] + [later for _, later in steps[1:]])


def aggregation_notices(emitted: Sequence[Applied]) -> list[str]:
    """ClusterRole aggregationRule selectors pick roles by label, so a rename leaves them as they are; say so
    wherever this app renamed a ClusterRole such a selector picks, or renamed the aggregating role itself."""
    notices: list[str] = []
    if all(applied.renamed_from is None for applied in emitted):
        return notices
    from cmp.ownership import references

    for row in references.SELECTOR_REFERENCES:
        group, kind = row.target
        renamed_targets = [
            applied.resource
            for applied in emitted
            if applied.renamed_from is not None and (applied.resource.group, applied.resource.kind) == (group, kind)
        ]
        if not renamed_targets:
            continue
        fields = searchable({pointer_parts(path)[0] for _, _, path in row.sources})
        for applied in emitted:
            resource = applied.resource
            if not references.reads(row, resource.group, resource.kind) or surely_lacks(resource, fields):
                continue
            found = references.selectors(resource.obj, row, resource.group, resource.kind)
            if not found:
                continue
            picked = sorted(
                {t.name for t in renamed_targets for selector in found if references.selects(selector, t.labels)}
            )
            if picked:
                notices.append(
                    f"notice: {resource.id} picks {kind}s by label ({row.path}), and renames leave selectors as "
                    f"they are: it picks the renamed {', '.join(picked)} and every other app's copies with the same "
                    "labels; if each app's copy should pick only its own, give the copies an app-specific label "
                    "in the chart and select on it"
                )
            elif applied.renamed_from is not None:
                notices.append(
                    f"notice: {resource.id} picks {kind}s by label ({row.path}); renames leave selectors as they "
                    "are, so every app's copy picks the same objects"
                )
    return notices


# --- helpers -------------------------------------------------------------------------------------------------


def _rule_label(decision: Decision, ownership: Ownership | None) -> str:
    return ownership.rule_label(decision.rule) if ownership is not None else decision.origin


def _where(resource: Resource) -> str:
    return f" (template {resource.source})" if resource.source else ""


def _refusal(resource: Resource, decision: Decision, app: App) -> str:
    where = _where(resource)
    if decision.rule is None:
        return (
            f"{resource.id}{where} is cluster-scoped and no rule or owner in chartshare.yaml covers it; "
            "add a rule with an owner, a top-level `owner:`, or set `unowned: keep` or `unowned: strip`"
        )
    return f"app {app.name} may not emit {resource.id}{where}: {decision.origin} says others: fail ({decision.reason})"
