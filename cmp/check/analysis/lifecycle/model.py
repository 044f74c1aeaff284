"""A small executable model of what Argo CD does to one object while a change rolls out (pure).

The state is the live object (whether it exists, the app its tracking id names, the protection its
annotations carry) and the events done so far; the events are each involved app's sync at the new
revision and each removed app's deletion. `step` is the one transition; search.py explores every order.
Each rule is what Argo CD's code does (argoproj/argo-cd, with gitops-engine inside it):
- a sync applies what the app emits and writes its tracking id; under `FailOnSharedResource=true` it fails
  instead while another app's tracking id is on the object (controller/sync.go, `hasSharedResourceCondition`);
- a sync with prune (automated, or by hand: check assumes someone syncs with prune) deletes what its
  tracking id names and it no longer emits (gitops-engine pkg/sync/sync_context.go `pruneObject`), unless
  `Prune=false` (`isPruningDisabled`) or `Prune=confirm` (`objRequiresPruneConfirmation`: held until
  approved) is on the object, else in the app's syncOptions (the operation's `WithDefaultPruneOption`);
- deleting an Application with a resources finalizer (`CascadedDeletion`) deletes each live object its
  tracking id names for which `shouldBeDeleted` holds (not a CRD, `Delete` not false on the object else in
  the app's syncOptions, no `helm.sh/resource-policy: keep`), and waits for approval where
  `isObjRequiresDeletionConfirmation` holds (`Delete=confirm` or `Prune=confirm`), all in
  controller/appcontroller.go `finalizeApplicationDeletion`; a deleted app syncs no more (`autoSync`:
  "deletion in progress");
- Argo CD never stamps a CRD (ARGOCD.md), so a sync leaves a CRD untracked.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple

FALSE, CONFIRM = "false", "confirm"
PROTECTIVE = (FALSE, CONFIRM)  # the option values that stop a prune or a cascade from deleting at once


@dataclass(frozen=True, slots=True)
class Guard:
    """The protection an object's annotations carry: the `Prune=` and `Delete=` values of its sync-options
    ("" when unset) and `helm.sh/resource-policy: keep`."""

    prune: str = ""
    delete: str = ""
    keep: bool = False

    def over(self, under: Guard) -> Guard:
        """These annotations added by hand to an object carrying `under` (kubectl annotate keeps the rest)."""
        return Guard(self.prune or under.prune, self.delete or under.delete, self.keep or under.keep)


@dataclass(frozen=True, slots=True)
class Actor:
    """One app involved in the object, as the model needs it. `removed`: gone from Git, it keeps syncing
    its last spec at the new revision until `deleter` deletes it ("" when nothing ever does)."""

    name: str
    emits: bool  # at the new revision
    syncs: bool = True  # it renders at the new revision (a removed app whose source does not cannot sync)
    removed: bool = False
    deleter: str = ""  # who deletes it, in words: "by hand", "its parent p's sync with prune", ...
    by_hand: bool = False  # a person deletes it (so a person can order that)
    never: str = ""  # why nothing deletes it (when removed and `deleter` is "")
    cascade: bool = False  # a resources finalizer
    prune: str = ""  # its syncOptions' Prune= (every object's default)
    delete: str = ""  # its syncOptions' Delete=
    fail_on_shared: bool = False
    automated: bool = False  # it syncs a new revision by itself (so no person can order its sync)
    auto_prune: bool = False
    copy: Guard = Guard()  # the protection its apply writes (its copy at the new revision)
    guessed: bool = False  # check could not render it at the new revision: `emits` is one of both guesses


@dataclass(frozen=True, slots=True)
class Start:
    """What the object may be before the change: the live object, or each base emitter's copy."""

    exists: bool
    tracker: str | None  # the app its tracking id names; None: none of this installation's
    guard: Guard
    said: str = ""  # where the guard was read, for the reason: "the live object", "a's copy at the base revision"


@dataclass(frozen=True, slots=True)
class Case:
    """Everything the model knows of one object, and the fixes applied to it (none at first)."""

    crd: bool
    actors: tuple[Actor, ...]
    starts: tuple[Start, ...]
    emitters: frozenset[str]  # the fleet's apps emitting it at the new revision
    hand: Guard = Guard()  # fix: protection annotated by hand before the change
    released: bool = False  # fix: the old tracking id taken off by hand
    first: str = ""  # fix: this app syncs before any other event
    absent: frozenset[str] = frozenset()  # fix: removed apps deleted without cascade before the change

    def actor(self, name: str) -> Actor:
        return next(actor for actor in self.actors if actor.name == name)


class Event(NamedTuple):
    action: str  # "sync" | "delete"
    app: str


@dataclass(frozen=True, slots=True)
class State:
    exists: bool
    tracker: str | None
    guard: Guard
    gone: frozenset[str] = frozenset()  # apps deleted so far
    done: frozenset[Event] = frozenset()


@dataclass(frozen=True, slots=True)
class Step:
    """What one event did to the object: DESIGN.md's trace entry, and what the search reads of it."""

    app: str
    action: str  # "sync" | "prune" | "delete" | "cascade"
    effect: str
    deletes: bool = False
    held: str = ""  # a deletion held for approval: what approving it would do
    override: str = ""  # the app's own syncOptions spared it: what a sync that sets its own options would do


def events(case: Case) -> list[Event]:
    """The change's events: each present app's sync (if it can render), then each removed app's deletion."""
    present = [actor for actor in case.actors if actor.name not in case.absent]
    syncs = [Event("sync", actor.name) for actor in present if actor.syncs]
    return syncs + [Event("delete", actor.name) for actor in present if actor.removed and actor.deleter]


def starts(case: Case) -> Iterator[State]:
    for start in case.starts:
        tracker = None if case.released else start.tracker
        guard = case.hand.over(start.guard) if start.exists else start.guard
        yield State(start.exists, tracker, guard)


def step(case: Case, state: State, event: Event) -> tuple[State, Step]:
    """The state after `event`, and what it did."""
    actor = case.actor(event.app)
    state = replace(state, done=state.done | {event})
    if actor.name in state.gone:
        return state, Step(actor.name, "sync", "is deleted: a deleted Application syncs no more")
    if event.action == "delete":
        return _delete(case, state, actor)
    if actor.emits:
        return _apply(case, state, actor)
    return _prune(state, actor)


def _syncs(actor: Actor) -> str:
    said = "keeps syncing its last spec at the new revision" if actor.removed else "syncs at the new revision"
    if actor.guessed:
        said += f" (check cannot render it here: if it {'still emits' if actor.emits else 'no longer emits'} it)"
    return said


def _apply(case: Case, state: State, actor: Actor) -> tuple[State, Step]:
    other = state.tracker not in (None, actor.name)
    if actor.fail_on_shared and state.exists and other:
        effect = f"{_syncs(actor)} and fails: FailOnSharedResource=true, and the tracking id names {state.tracker}"
        return state, Step(actor.name, "sync", effect)
    tracker = None if case.crd else actor.name
    after = replace(state, exists=True, tracker=tracker, guard=case.hand.over(actor.copy))
    if not state.exists:
        done = "creates it anew" if any(start.exists for start in case.starts) else "creates it"
    elif case.crd:
        done = "applies it (Argo CD never stamps a CRD with a tracking id)"
    elif other:
        done = f"applies it: its tracking id names {actor.name} instead of {state.tracker}"
    else:
        done = f"applies it: its tracking id names {actor.name}"
    if not state.exists and tracker:
        done += f", its tracking id naming {actor.name}"
    return after, Step(actor.name, "sync", f"{_syncs(actor)} and {done}")


def _prune(state: State, actor: Actor) -> tuple[State, Step]:
    if not state.exists or state.tracker != actor.name:
        on = f"names {state.tracker}" if state.tracker else "names no app"
        return state, Step(actor.name, "sync", f"{_syncs(actor)}; the tracking id on it {on}, so it leaves it")
    value, where = _option(state.guard.prune, actor.prune, actor.name)
    if value == FALSE:
        leaves = f"{_syncs(actor)} and leaves it: {where} Prune=false (OutOfSync, requires pruning)"
        override = "" if state.guard.prune else f"a sync of {actor.name} that sets its own sync options would prune it"
        return state, Step(actor.name, "sync", leaves, override=override)
    if value == CONFIRM:
        held = f"{_syncs(actor)} and holds its prune: {where} Prune=confirm, which waits for a person's approval"
        return state, Step(actor.name, "sync", held, held=f"approving {actor.name}'s held prune would delete it")
    how = "" if actor.auto_prune else " (a sync with prune: check assumes someone runs one)"
    effect = f"{_syncs(actor)}{how} and prunes it: its tracking id names {actor.name}, which no longer emits it"
    return replace(state, exists=False, tracker=None), Step(actor.name, "prune", effect, deletes=True)


def _delete(case: Case, state: State, actor: Actor) -> tuple[State, Step]:
    after = replace(state, gone=state.gone | {actor.name})
    deleted = f"is deleted ({actor.deleter})"
    if not actor.cascade:
        effect = f"{deleted}: without the resources finalizer it deletes none of its objects"
        return after, Step(actor.name, "delete", effect)
    if not state.exists or state.tracker != actor.name:
        on = f"names {state.tracker}" if state.tracker else "names no app"
        effect = f"{deleted}: its resources finalizer deletes what it tracks, and the tracking id on this one {on}"
        return after, Step(actor.name, "delete", effect)
    spared = _spared(case, state, actor)
    if spared:
        return after, Step(actor.name, "delete", f"{deleted}: its resources finalizer spares this one: {spared}")
    confirm = _confirm(state, actor)
    if confirm:
        effect = f"{deleted}: its resources finalizer waits for approval before deleting this one: {confirm}"
        return after, Step(actor.name, "delete", effect, held=f"approving the deletion of {actor.name} would delete it")
    effect = f"{deleted} and its resources finalizer deletes every live object whose tracking id names it: this one"
    return replace(after, exists=False, tracker=None), Step(actor.name, "cascade", effect, deletes=True)


def _spared(case: Case, state: State, actor: Actor) -> str:
    """Why `shouldBeDeleted` spares the object, or ""."""
    if case.crd:
        return "Argo CD never cascade-deletes a CRD"
    value, where = _option(state.guard.delete, actor.delete, actor.name)
    if value == FALSE:
        return f"{where} Delete=false"
    if state.guard.keep:
        return "the object carries helm.sh/resource-policy: keep"
    return ""


def _confirm(state: State, actor: Actor) -> str:
    """Why the cascade waits for approval (`isObjRequiresDeletionConfirmation`), or ""."""
    for value, where in (
        _option(state.guard.delete, actor.delete, actor.name, "Delete"),
        _option(state.guard.prune, actor.prune, actor.name, "Prune"),
    ):
        if value == CONFIRM:
            return where
    return ""


def _option(own: str, app_level: str, app: str, key: str = "") -> tuple[str, str]:
    """An option's value, the object's own first (it wins), else the app's syncOptions; and where it is."""
    if own:
        where = "the object carries"
        value = own
    else:
        where = f"{app}'s syncOptions hold"
        value = app_level
    return value, (f"{where} {key}={value}" if key else where)
