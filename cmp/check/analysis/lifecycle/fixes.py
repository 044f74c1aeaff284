"""The smallest change that makes every order safe, found by running the model again with it applied.

A fix is one of four kinds, tried alone first and then together: a sync order (the new owner syncs
before anything else: only when every other event waits for a person, since an automated sync or a
controller's deletion cannot be ordered), protection annotated on the live object before the change
merges (`Prune=false`, then with `Delete=false`), deleting the removed apps without cascade before the
change merges (`argocd app delete --cascade=false`), and, where a `FailOnSharedResource=true` owner must
take the object, protection with the old tracking id taken off. Every kind that works alone is offered
(joined by ", or "); else the first pair, then all of them, that works.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID, sync_options
from cmp.check.analysis.claims import mapping_at
from cmp.check.analysis.lifecycle.model import FALSE, Case, Event, Guard, events
from cmp.check.analysis.lifecycle.search import explore
from cmp.check.analysis.live import Tracking
from cmp.model import ClusterResourceId

KINDS = ("order", "protect", "orphan", "release")
PROTECTION = ("Prune=false", "Delete=false")


@dataclass(frozen=True, slots=True)
class Fix:
    kind: str  # one of KINDS
    apps: tuple[str, ...] = ()  # order: the app to sync first; orphan: the apps to delete without cascade
    options: tuple[str, ...] = ()  # protect: the sync options to annotate


def applied(case: Case, fixes: Sequence[Fix]) -> Case:
    """The case as it is once the fixes are done."""
    for fix in fixes:
        if fix.kind == "order":
            case = replace(case, first=fix.apps[0])
        elif fix.kind == "orphan":
            case = replace(case, absent=case.absent | set(fix.apps))
        else:
            delete = FALSE if "Delete=false" in fix.options else case.hand.delete
            released = case.released or fix.kind == "release"
            case = replace(case, hand=Guard(FALSE, delete, case.hand.keep), released=released)
    return case


def candidates(case: Case) -> dict[str, list[Fix]]:
    """Each kind's fixes, smallest first."""
    present = [actor for actor in case.actors if actor.removed and _acts(case, actor.name)]
    exists = any(start.exists for start in case.starts)
    found: dict[str, list[Fix]] = {kind: [] for kind in KINDS}
    found["order"] = [Fix("order", (name,)) for name in sorted(case.emitters) if _orderable(case, name)]
    if exists:
        found["protect"] = [Fix("protect", options=options) for options in (("Prune=false",), PROTECTION)]
        found["release"] = [Fix("release", options=("Prune=false",))]
    singles = [Fix("orphan", (actor.name,)) for actor in present]
    found["orphan"] = singles + ([Fix("orphan", tuple(actor.name for actor in present))] if len(present) > 1 else [])
    return found


def smallest(case: Case) -> list[list[Fix]]:
    """The working fixes: each kind's smallest that works alone, or the first combination that works."""
    found = candidates(case)
    alone: list[list[Fix]] = []
    for kind in KINDS:
        working = next((fix for fix in found[kind] if explore(applied(case, [fix])).safe), None)
        if working is not None and not (kind == "release" and alone):
            alone.append([working])
    if alone:
        return alone
    largest = [fixes[-1] for fixes in found.values() if fixes]
    for combination in _pairs(largest):
        if explore(applied(case, combination)).safe:
            return [combination]
    return [largest] if largest and explore(applied(case, largest)).safe else []


def _pairs(fixes: Sequence[Fix]) -> Iterator[list[Fix]]:
    for first, one in enumerate(fixes):
        for other in fixes[first + 1 :]:
            yield [one, other]


def _acts(case: Case, name: str) -> bool:
    return any(event.app == name for event in events(case))


def _orderable(case: Case, name: str) -> bool:
    """Whether a person can make `name` sync first: every other event waits for a person."""
    if Event("sync", name) not in events(case):
        return False
    for event in events(case):
        actor = case.actor(event.app)
        if event.app != name and (actor.automated if event.action == "sync" else not actor.by_hand):
            return False
    return True


# --- the commands --------------------------------------------------------------------------------------------


def said(
    fixes: Sequence[Fix], case: Case, key: ClusterResourceId, live_object: Mapping[str, Any] | None, how: Tracking
) -> str:
    """One fix (a combination) as the commands a person runs."""
    parts = []
    for fix in fixes:
        if fix.kind == "order":
            first, others = fix.apps[0], sorted({event.app for event in events(case)} - {fix.apps[0]})
            command = f"argocd app sync {shlex.quote(first)}"
            parts.append(f"sync {first} first ({command}), before syncing or deleting {', '.join(others)}")
        elif fix.kind == "protect":
            parts.append(
                f"{annotate(key, live_object, fix.options)} before the change merges (or protect it in a commit of "
                "its own that syncs first)"
            )
        elif fix.kind == "orphan":
            commands = "; ".join(orphan_delete(app) for app in fix.apps)
            parts.append(f"delete {', '.join(fix.apps)} without cascade before the change merges ({commands})")
        else:
            parts.append(release(key, live_object, how, sorted(case.emitters)))
    return ", and ".join(parts)


def kubectl_target(key: ClusterResourceId) -> list[str]:
    kind = key.kind.lower() + (f".{key.group}" if key.group else "")
    return [*(["-n", key.namespace] if key.namespace else []), f"{kind}/{key.name}"]


def annotate(key: ClusterResourceId, live_object: Mapping[str, Any] | None, wanted: Sequence[str]) -> str:
    """`kubectl annotate` adding `wanted` to the object's sync-options, keeping the others it has live."""
    have = sync_options(mapping_at(live_object, "metadata", "annotations")) if live_object is not None else []
    prefixes = tuple(option.split("=")[0] + "=" for option in wanted)
    options = [option for option in have if not option.startswith(prefixes)] + list(wanted)
    words = ["kubectl", "annotate", *kubectl_target(key), f"{SYNC_OPTIONS}={','.join(options)}", "--overwrite"]
    return " ".join(shlex.quote(word) for word in words)


def release(key: ClusterResourceId, live_object: Mapping[str, Any] | None, how: Tracking, then: Sequence[str]) -> str:
    """Protect the object, take the old tracking off it (each mark the tracking method reads), then sync."""
    marks: list[str] = []
    target = " ".join(shlex.quote(word) for word in kubectl_target(key))
    if how.method != "label":
        marks.append(f"kubectl annotate {target} {TRACKING_ID}-")
    if how.method != "annotation":
        marks.append(f"kubectl label {target} {shlex.quote(how.label_key)}-")
    return f"{annotate(key, live_object, ('Prune=false',))}; {'; '.join(marks)}; then sync {', '.join(then)}"


def delete_command(key: ClusterResourceId) -> str:
    return " ".join(shlex.quote(word) for word in ["kubectl", "delete", *kubectl_target(key)])


def orphan_delete(app: str) -> str:
    """The non-cascading delete of an Application (its objects stay)."""
    namespace, _, name = app.rpartition("_")
    return f"argocd app delete {shlex.quote(f'{namespace}/{name}' if namespace else name)} --cascade=false"
