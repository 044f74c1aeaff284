"""Every order of a change's events, explored over the model (model.py): the verdict DESIGN.md defines.

An object is safe when no order deletes it, and (when some app of the fleet emits it at the new
revision) every order ends with its tracking id naming one of those apps. The search goes breadth first
over the model's states (the object, and which events are done), so the first order found that breaks is a
shortest one; an app whose render at the new revision check could not make is explored both ways (it
emits the object, or not). The apps involved in one object are few; past `MAX_EVENTS` events the search
stops and says so rather than guess.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import product

from cmp.check.analysis.lifecycle.model import Case, Event, State, Step, events, starts, step

MAX_EVENTS = 12  # 2**12 sets of events done, times a few object states: a fraction of a second


@dataclass(frozen=True, slots=True)
class Verdict:
    """What exploring every order found."""

    safe: bool
    trace: tuple[Step, ...] = ()  # the shortest order that breaks; for a deletion, then the sync recreating it
    held: tuple[str, ...] = ()  # deletions some order holds for approval: what approving them would do
    overrides: tuple[str, ...] = ()  # prunes only app-level sync options stop
    events: int = 0
    too_large: bool = False
    kept_by: str = ""  # when no order deletes it but one ends with this app's tracking id on it


def explore(case: Case) -> Verdict:
    """The verdict over every order of the case's events, and over both guesses of each app check could
    not render at the new revision."""
    verdicts = [_explore(variant) for variant in variants(case)]
    broken = [verdict for verdict in verdicts if not verdict.safe]
    if broken:
        return min(broken, key=lambda verdict: (verdict.too_large, not _deletes(verdict), len(verdict.trace)))
    held = tuple(sorted({note for verdict in verdicts for note in verdict.held}))
    overrides = tuple(sorted({note for verdict in verdicts for note in verdict.overrides}))
    return Verdict(True, held=held, overrides=overrides, events=max(verdict.events for verdict in verdicts))


def variants(case: Case) -> Iterator[Case]:
    """The case once for each way the guessed apps may go: each emits the object at the new revision, or not."""
    guessed = [actor.name for actor in case.actors if actor.guessed]
    for choice in product((False, True), repeat=len(guessed)):
        emits = dict(zip(guessed, choice, strict=True))
        yield replace(case, actors=tuple(replace(a, emits=emits.get(a.name, a.emits)) for a in case.actors))


def settled(case: Case, state: State) -> bool:
    """Whether an order that ends in `state` ends well: the object tracked by an app of the fleet that emits
    it (a CRD, never tracked, only there), or nothing emits it."""
    if not case.emitters:
        return True
    return state.exists and (case.crd or state.tracker in case.emitters)


def _explore(case: Case) -> Verdict:
    order = events(case)
    if len(order) > MAX_EVENTS:
        return Verdict(False, events=len(order), too_large=True)
    everything = frozenset(order)
    held: set[str] = set()
    overrides: set[str] = set()
    seen: set[State] = set()
    queue: deque[tuple[State, tuple[Step, ...]]] = deque((state, ()) for state in starts(case))
    ending: tuple[State, tuple[Step, ...]] | None = None
    while queue:
        state, path = queue.popleft()
        if state in seen:
            continue
        seen.add(state)
        if state.done == everything:
            if ending is None and not settled(case, state):
                ending = state, path
            continue
        for event in _next(case, state, order):
            after, done = step(case, state, event)
            if done.deletes:
                return Verdict(False, (*path, done, *_recreated(case, after)), events=len(order))
            held.update([done.held] if done.held else [])
            overrides.update([done.override] if done.override else [])
            queue.append((after, (*path, done)))
    if ending is not None:
        return Verdict(False, ending[1], events=len(order), kept_by=ending[0].tracker or "")
    return Verdict(True, held=tuple(sorted(held)), overrides=tuple(sorted(overrides)), events=len(order))


def _next(case: Case, state: State, order: list[Event]) -> list[Event]:
    """The events that may come next; with a sync order (a fix) the first app's sync before all others."""
    left = [event for event in order if event not in state.done]
    first = Event("sync", case.first)
    return [first] if case.first and first in left else left


def _recreated(case: Case, state: State) -> tuple[Step, ...]:
    """The sync of an app of the fleet that brings a deleted object back, to show the outage's end."""
    for name in sorted(case.emitters):
        if name not in state.gone:
            return (step(case, state, Event("sync", name))[1],)
    return ()


def _deletes(verdict: Verdict) -> bool:
    return any(done.deletes for done in verdict.trace)
