"""What the model needs of one object, read from both revisions' claims (pure): model.py's Case.

The apps involved are those that may hold the object's tracking id before the change (the live object's
tracker, or without `--live` each app emitting it at the base revision) and those that emit it at the new
revision, including a removed app's last spec, which keeps syncing the new revision until something
deletes it. An app in the fleet at both revisions counts a protection in its own syncOptions only when
both revisions have it (its Application may be updated before or after it syncs), and
`FailOnSharedResource=true` when either has it. A removed app is read as the base revision defines it: its
finalizers, its syncOptions, and what deletes it (ARGOCD.md "Deleting an Application"): its parent's sync
with prune (unless the parent's copy of it, or the parent, carries `Prune=false|confirm`), its
ApplicationSet (unless `applicationsSync` is `create-only` or `create-update`: applicationset
`AllowDelete`), or a person for an Application read from a file. A removed app whose last spec check
could not render here is tried both emitting and not emitting each object it rendered at the base
revision (its copy, unknown, with no annotations of its own), and taken not to render any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from cmp.annotations import SYNC_OPTIONS
from cmp.check.analysis.claims import AppClaims, Claim, mapping_at
from cmp.check.analysis.findings import is_crd
from cmp.check.analysis.lifecycle.model import CONFIRM, PROTECTIVE, Actor, Case, Guard, Start
from cmp.check.analysis.live import Tracking, tracking
from cmp.check.fleet.applications import Lifetime, option_value
from cmp.model import ClusterResourceId

RESOURCE_POLICY = "helm.sh/resource-policy"


@dataclass(frozen=True, slots=True)
class LastSpecs:
    """The removed apps' last specs rendered at the new revision: what each emits while it keeps syncing.
    `stuck` are those Argo CD cannot render there (their source path is gone, or the render fails), which
    therefore never sync; a removed app in neither was not rendered here, and the model tries both ways."""

    rendered: Mapping[str, AppClaims] = field(default_factory=dict)
    stuck: Mapping[str, str] = field(default_factory=dict)


def guard(obj: Mapping[str, Any]) -> Guard:
    """The protection an object's annotations carry, read as Argo CD reads them (the first `Prune=` and
    `Delete=` of the sync-options; `keep` among helm.sh/resource-policy's values)."""
    annotations = mapping_at(obj, "metadata", "annotations")
    options = str(annotations.get(SYNC_OPTIONS) or "").split(",")
    policies = [value.strip() for value in str(annotations.get(RESOURCE_POLICY) or "").split(",")]
    return Guard(option_value(options, "Prune"), option_value(options, "Delete"), "keep" in policies)


def case_of(
    key: ClusterResourceId,
    before: Mapping[str, AppClaims],
    after: Mapping[str, AppClaims],
    last: LastSpecs,
    live_object: Mapping[str, Any] | None,
    how: Tracking,
) -> Case:
    """The model's case for one object."""
    starts = _starts(key, before, live_object, how)
    trackers = {start.tracker for start in starts if start.tracker}
    emitters = frozenset(name for name, result in after.items() if key in result.emitted)
    lasting = {name for name, result in last.rendered.items() if name not in after and key in result.emitted}
    rendered_before = {name for name, result in before.items() if key in result.emitted or key in result.stripped}
    unknown = {
        name
        for name in rendered_before - set(after) - set(last.stuck)
        if name not in last.rendered or not last.rendered[name].complete
    }
    involved = sorted((trackers | emitters | lasting | unknown) & ({*before, *after}))
    actors = tuple(_actor(name, key, before, after, last) for name in involved)
    return Case(is_crd(key), actors, starts, emitters)


def _starts(
    key: ClusterResourceId, before: Mapping[str, AppClaims], live_object: Mapping[str, Any] | None, how: Tracking
) -> tuple[Start, ...]:
    """The live object as it is, or, without it, each base emitter's copy as the object it last applied
    (a CRD untracked: Argo CD never stamps one)."""
    if live_object is not None:
        found = tracking(live_object, how)
        return (Start(True, found[0] if found else None, guard(live_object), "the live object"),)
    copies = sorted((name, result.emitted[key]) for name, result in before.items() if key in result.emitted)
    if not copies:
        return (Start(False, None, Guard()),)
    if is_crd(key):  # never stamped: no app's tracking id is on it
        return (Start(True, None, guard(copies[0][1].obj), f"{copies[0][0]}'s copy at the base revision"),)
    return tuple(Start(True, name, guard(claim.obj), f"{name}'s copy at the base revision") for name, claim in copies)


def _actor(
    name: str,
    key: ClusterResourceId,
    before: Mapping[str, AppClaims],
    after: Mapping[str, AppClaims],
    last: LastSpecs,
) -> Actor:
    if name in after:
        now = after[name]
        then = before[name].app.lifetime if name in before else now.app.lifetime
        return _spec(name, now.app.lifetime, then, _emits(now, key))
    app = before[name].app
    rendered = last.rendered.get(name)
    emits = _emits(rendered, key) if rendered is not None else (None, Guard())
    actor = _spec(name, app.lifetime, app.lifetime, emits, removed=True, syncs=name not in last.stuck)
    deleter, by_hand, never = deleted_by(app.lifetime, app.parent, before)
    return replace(actor, deleter=deleter, by_hand=by_hand, never=never, cascade=app.lifetime.finalizer)


def _emits(result: AppClaims | None, key: ClusterResourceId) -> tuple[bool | None, Guard]:
    """Whether the app emits the object at the new revision (None: cannot tell, a source not rendered), and
    the protection its copy carries."""
    if result is None:
        return None, Guard()
    claim: Claim | None = result.emitted.get(key)
    if claim is not None:
        return True, guard(claim.obj)
    return (False if result.complete else None), Guard()


def _spec(
    name: str,
    now: Lifetime,
    then: Lifetime,
    emits: tuple[bool | None, Guard],
    *,
    removed: bool = False,
    syncs: bool = True,
) -> Actor:
    return Actor(
        name,
        bool(emits[0]),
        syncs=syncs,
        removed=removed,
        prune=both(then.prune, now.prune),
        delete=both(then.delete, now.delete),
        fail_on_shared=then.fail_on_shared or now.fail_on_shared,
        automated=then.automated or now.automated,
        auto_prune=now.auto_prune,
        copy=emits[1],
        guessed=emits[0] is None,
    )


def both(then: str, now: str) -> str:
    """An app-level option as it protects across the change: its value when both revisions agree; when
    they differ, `confirm` if both protect (either may be in force), else unset."""
    if then == now:
        return now
    return CONFIRM if then in PROTECTIVE and now in PROTECTIVE else ""


def deleted_by(lifetime: Lifetime, parent: str | None, before: Mapping[str, AppClaims]) -> tuple[str, bool, str]:
    """Who deletes a removed app, in words ("" when nothing does), whether that is a person, and (when
    nothing does) why."""
    if lifetime.appset:
        if lifetime.appset_keeps:
            keeps = lifetime.appset_keeps
            return "", False, f"its ApplicationSet {lifetime.appset} has applicationsSync {keeps}: it never deletes it"
        return f"its ApplicationSet {lifetime.appset} no longer generates it", False, ""
    if parent is not None:
        if lifetime.own_prune in PROTECTIVE:
            return "", False, f"its parent {parent} never prunes it: its Application carries Prune={lifetime.own_prune}"
        parents = before[parent].app.lifetime.prune if parent in before else ""
        if parents in PROTECTIVE:
            return "", False, f"its parent {parent} never prunes it: {parent}'s syncOptions hold Prune={parents}"
        return f"its parent {parent}'s sync with prune", False, ""
    return "by hand: an Application read from a file, removed from Git", True, ""
