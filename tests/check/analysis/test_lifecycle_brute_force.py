"""The lifecycle verdict equals a brute-force simulation of every order, on random small fleets.

The brute force here is its own code, written from DESIGN.md's rules rather than from the model: every
app of both revisions takes part (the model keeps only those that can touch the object), every
permutation of their events is played from every state the object may start in, and a removed app check
could not render at the new revision is played both ways (for an object it rendered at the base revision;
any other it is taken not to render; its unknown copy carries no annotations of its own). Safe means no
order deletes the object and, when an app of the fleet emits it now, every order ends with one of those
apps' tracking id on it; the model's trace must delete it exactly as soon as the quickest order does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import permutations, product
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_fleets import CRD, KEEP, ROLE, App, fleets, obj

from cmp.check.analysis.lifecycle import lifecycle
from cmp.check.analysis.live import ANNOTATION_TRACKING
from cmp.check.fleet.applications import Lifetime
from cmp.model import ClusterResourceId

NAMES = ("a", "b", "c")
OPTIONS = ("", "Prune=false", "Prune=false,Delete=false", "Delete=false", "Prune=confirm", "Delete=confirm", KEEP)
REMOVALS = ("root", "appset", "appset-keeps", "child", "child-never-pruned")


@dataclass(frozen=True)
class Spec:
    """One random app: what it does with the object at each revision and its settings."""

    base: str | None  # None: not in the fleet at the base revision; "absent": does not render the object
    now: str | None  # None: removed by the change
    base_options: str
    now_options: str
    last: str | None  # a removed app's last spec at the new revision: emit, strip, stuck, or None (not rendered)
    last_options: str
    finalizer: bool
    prune: str
    now_prune: str
    delete: str
    fail_on_shared: bool
    automated: bool
    removal: str


states = st.sampled_from([None, "absent", "emit", "strip"])
specs = st.builds(
    Spec,
    states,
    states,
    st.sampled_from(OPTIONS),
    st.sampled_from(OPTIONS),
    st.sampled_from(["emit", "strip", "stuck", None]),
    st.sampled_from(OPTIONS),
    st.booleans(),
    st.sampled_from(["", "false", "confirm"]),
    st.sampled_from(["", "false", "confirm"]),
    st.sampled_from(["", "false", "confirm"]),
    st.booleans(),
    st.booleans(),
    st.sampled_from(REMOVALS),
)
fleet_specs = st.dictionaries(st.sampled_from(NAMES), specs, min_size=1, max_size=3)
lives = st.one_of(st.none(), st.tuples(st.sampled_from([*NAMES, None, "stranger"]), st.sampled_from(OPTIONS)))


def _rendered(state: str | None, options: str, key: ClusterResourceId) -> dict[ClusterResourceId, str] | None:
    if state is None:
        return None
    return {} if state == "absent" else {key: f"{state}:{options}" if state == "emit" else "strip"}


def _apps(fleet: dict[str, Spec], key: ClusterResourceId) -> list[App]:
    apps = []
    for name, spec in sorted(fleet.items()):
        appset = "set" if spec.removal.startswith("appset") else ""
        lifetime = Lifetime(
            finalizer=spec.finalizer,
            fail_on_shared=spec.fail_on_shared,
            appset=appset,
            appset_keeps="create-only" if spec.removal == "appset-keeps" else "",
            prune=spec.prune,
            delete=spec.delete,
            automated=spec.automated,
            auto_prune=spec.automated,
            own_prune="false" if spec.removal == "child-never-pruned" else "",
        )
        last: Any = spec.last if spec.last in ("stuck", None) else _rendered(spec.last, spec.last_options, key)
        apps.append(
            App(
                name,
                _rendered(spec.base, spec.base_options, key),
                _rendered(spec.now, spec.now_options, key),
                last,
                lifetime,
                replace(lifetime, prune=spec.now_prune) if spec.now is not None and spec.base is not None else None,
                parent="parent" if spec.removal.startswith("child") else None,
            )
        )
    return apps


# --- the brute force -----------------------------------------------------------------------------------------


def _value(options: str, key: str) -> str:
    for option in options.split(","):
        if option.startswith(f"{key}="):
            return option[len(key) + 1 :]
    return ""


def _protected(values: tuple[str, str]) -> str:
    """A setting in force across the change: the same at both revisions, else (both protecting) confirm."""
    then, now = values
    if then == now:
        return now
    return "confirm" if then in ("false", "confirm") and now in ("false", "confirm") else ""


def brute_force(fleet: dict[str, Spec], live: Any, key: ClusterResourceId) -> tuple[bool, int | None]:
    """(safe, the fewest events after which some order has deleted it; None when none does)."""
    crd = key == CRD
    emitters = {name for name, spec in fleet.items() if spec.now == "emit"}
    if live is not None:
        starts = [(True, live[0], live[1])]
    else:
        emitting = sorted(name for name, spec in fleet.items() if spec.base == "emit")
        starts = [(True, None if crd else name, fleet[name].base_options) for name in emitting] or [(False, None, "")]
    events: list[tuple[str, str]] = []
    unknown: list[str] = []
    for name, spec in sorted(fleet.items()):
        if spec.now is not None:
            events.append(("sync", name))
            continue
        if spec.base is None:
            continue
        if spec.last != "stuck":
            events.append(("sync", name))
            # not rendered here: it may emit what it rendered at the base revision, or not; nothing else
            unknown += [name] if spec.last is None and spec.base != "absent" else []
        if spec.removal not in ("appset-keeps", "child-never-pruned"):
            events.append(("delete", name))
    safe, quickest = True, None
    for guesses in product(("emit", "strip"), repeat=len(unknown)):
        emits = {
            name: spec.now == "emit" if spec.now is not None else spec.last == "emit" for name, spec in fleet.items()
        }
        emits.update({name: guess == "emit" for name, guess in zip(unknown, guesses, strict=True)})
        for start in starts:
            for order in permutations(events):
                deleted_at, ended_well = _play(fleet, start, order, emits, emitters, crd)
                if deleted_at is not None:
                    safe = False
                    quickest = deleted_at if quickest is None else min(quickest, deleted_at)
                elif not ended_well:
                    safe = False
    return safe, quickest


def _play(
    fleet: dict[str, Spec],
    start: tuple[bool, str | None, str],
    order: tuple[tuple[str, str], ...],
    emits: dict[str, bool],
    emitters: set[str],
    crd: bool,
) -> tuple[int | None, bool]:
    exists, tracker, options = start
    gone: set[str] = set()
    for number, (action, name) in enumerate(order, 1):
        spec = fleet[name]
        removed = spec.now is None
        app_prune = spec.prune if removed or spec.base is None else _protected((spec.prune, spec.now_prune))
        if name in gone:
            continue
        if action == "delete":
            gone.add(name)
            if not (spec.finalizer and exists and tracker == name) or crd:
                continue
            delete = _value(options, "Delete") or spec.delete
            if delete == "false" or KEEP in options.split(","):
                continue
            if delete == "confirm" or (_value(options, "Prune") or app_prune) == "confirm":
                continue
            return number, False
        if emits[name]:
            if spec.fail_on_shared and exists and tracker not in (None, name):
                continue
            copy = spec.now_options if not removed else spec.last_options if spec.last is not None else ""
            exists, tracker, options = True, None if crd else name, copy
        elif exists and tracker == name:
            if (_value(options, "Prune") or app_prune) in ("false", "confirm"):
                continue
            return number, False
    ended_well = not emitters or (exists and (crd or tracker in emitters))
    return None, ended_well


@settings(max_examples=200, deadline=None)
@given(fleet=fleet_specs, live=lives, crd=st.booleans())
def test_the_verdict_is_the_brute_force_over_every_order(fleet: dict[str, Spec], live: Any, crd: bool) -> None:
    key = CRD if crd else ROLE
    before, after, last = fleets(_apps(fleet, key))
    live_objects = None if live is None else [obj(key, live[1], live[0])]
    entries = lifecycle(before, after, live_objects, ANNOTATION_TRACKING, (), last)
    safe, quickest = brute_force(fleet, live, key)
    was = {name for name, spec in fleet.items() if spec.base == "emit"}
    now = {name for name, spec in fleet.items() if spec.now == "emit"}
    rendered_before = any(spec.base in ("emit", "strip") for spec in fleet.values())
    rendered_now = any(spec.now in ("emit", "strip") for spec in fleet.values())
    listed = rendered_before and was != now and (rendered_now or safe)
    assert [entry.id for entry in entries] == ([key] if listed else [])
    for entry in entries:
        assert entry.safe == safe, (entry.reason, entry.trace)
        deleting = [number for number, step in enumerate(entry.trace, 1) if step.deletes]
        assert (deleting[0] if deleting else None) == quickest, entry.trace
