"""The lifecycle entries: which objects a change moves, and each one's verdict from the model (pure).

An object is listed when the set of apps emitting it changed between the base revision and the new one
and some app still renders it now, or when no order deletes it after its last emitter let go (a leak made
visible). Its event names what the change does (`app-deleted` when an app that emitted it, or that its live
tracking id names, is gone; else `orphaned` when no app emits it now; else `hand-over`); whether it is safe,
the trace and the fix come from cases.py, search.py and fixes.py, and nothing else.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cmp.check.analysis.claims import AppClaims, by_object, mapping_at
from cmp.check.analysis.lifecycle import fixes
from cmp.check.analysis.lifecycle.cases import LastSpecs, case_of
from cmp.check.analysis.lifecycle.model import Step
from cmp.check.analysis.lifecycle.reasons import reason
from cmp.check.analysis.lifecycle.search import explore
from cmp.check.analysis.live import ANNOTATION_TRACKING, Tracking, tracking
from cmp.check.fleet.applications import Skip
from cmp.model import ClusterResourceId, ResourceId, split_api_version

EVENTS = ("hand-over", "orphaned", "app-deleted")
NO_LAST_SPECS = LastSpecs()


@dataclass(frozen=True, slots=True)
class Entry:
    """One object whose emitters change, what Argo CD will do to it, and (when unsafe) the order that breaks
    it and how to prevent it."""

    id: ClusterResourceId
    event: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    safe: bool
    reason: str
    fix: str | None
    trace: tuple[Step, ...] = ()


def lifecycle(
    before: Mapping[str, AppClaims],
    after: Mapping[str, AppClaims],
    live_objects: Sequence[Mapping[str, Any]] | None = None,
    how: Tracking = ANNOTATION_TRACKING,
    unsure: Collection[str] = (),
    last: LastSpecs = NO_LAST_SPECS,
) -> list[Entry]:
    """The entries, sorted by object. An object whose change involves an app that did not render whole at
    either revision (incomplete, or named in `unsure`: skipped sources) is left out, and so is one whose
    live tracking id names such an app: what it no longer emits cannot be told from what was not rendered.
    `last` are the removed apps' last specs rendered at the new revision."""
    emitted_before, emitted_now = by_object(before.values(), emitted=True), by_object(after.values(), emitted=True)
    rendered_now = by_object(after.values(), emitted=False)
    doubtful = _unsure(before, after, unsure)
    entries: list[Entry] = []
    for key in sorted(changed_ids(before, after, unsure)):
        was, now = tuple(sorted(emitted_before.get(key, {}))), tuple(sorted(emitted_now.get(key, {})))
        live_object = _live(key, live_objects, how, {**before, **after})
        found = tracking(live_object, how) if live_object is not None else None
        if found is not None and found[0] in doubtful:
            continue
        case = case_of(key, before, after, last, live_object, how)
        verdict = explore(case)
        if not verdict.safe and key not in rendered_now:
            continue  # an ordinary removal: no app renders it any more, and the change deletes it
        tracker = found[0] if found is not None else ""
        gone = any(app not in after for app in was) or (tracker in before and tracker not in after)
        event = "app-deleted" if gone else "orphaned" if not now else "hand-over"
        fix = None
        if not verdict.safe and not verdict.too_large:
            found_fixes = fixes.smallest(case)
            fix = ", or ".join(fixes.said(chosen, case, key, live_object, how) for chosen in found_fixes) or None
        said = reason(case, verdict, fixes.delete_command(key), was)
        entries.append(Entry(key, event, was, now, verdict.safe, said, fix, () if verdict.safe else verdict.trace))
    return entries


def changed_ids(
    before: Mapping[str, AppClaims], after: Mapping[str, AppClaims], unsure: Collection[str] = ()
) -> set[ClusterResourceId]:
    """The objects some app rendered at the base revision whose emitting apps differ now, where every app
    in the difference rendered whole at both revisions."""
    emitted_before, emitted_now = by_object(before.values(), emitted=True), by_object(after.values(), emitted=True)
    rendered_before = by_object(before.values(), emitted=False)
    doubtful = _unsure(before, after, unsure)
    return {
        key
        for key in set(emitted_before) | set(emitted_now)
        if key in rendered_before
        and set(was := emitted_before.get(key, {})) != set(now := emitted_now.get(key, {}))
        and not doubtful & (set(was) ^ set(now))
    }


def unjudged(skipped_before: Sequence[Skip], current: Collection[str]) -> list[Skip]:
    """The apps the change deletes whose sources were not all rendered at the base revision: what deleting
    them does to their objects cannot be told, so they are listed rather than left out."""
    reasons: dict[str, list[str]] = {}
    for skip in skipped_before:
        if skip.app not in current:
            reasons.setdefault(skip.app, []).append(skip.reason)
    return [
        Skip(app, f"deleted by the change, and not rendered at the base revision ({'; '.join(said)})")
        for app, said in sorted(reasons.items())
    ]


def unsafe_apps(entries: Sequence[Entry]) -> Iterator[tuple[str, Entry]]:
    """(app, entry) for every app an unsafe entry names, before or after."""
    for entry in entries:
        if not entry.safe:
            for app in sorted({*entry.before, *entry.after}):
                yield app, entry


def _unsure(before: Mapping[str, AppClaims], after: Mapping[str, AppClaims], unsure: Collection[str]) -> set[str]:
    return {*unsure, *(name for apps in (before, after) for name, result in apps.items() if not result.complete)}


def _live(
    key: ClusterResourceId,
    live_objects: Sequence[Mapping[str, Any]] | None,
    how: Tracking,
    apps: Mapping[str, AppClaims],
) -> Mapping[str, Any] | None:
    """The live object of this identity on this cluster: one tracked by an app of this cluster (of either
    revision), else an untracked or foreign-tracked one (a live dump does not say its cluster)."""
    if not live_objects:
        return None
    candidates = [obj for obj in live_objects if _identity(obj) == key.resource or _loose(obj, key)]
    for obj in candidates:
        found = tracking(obj, how)
        if found is not None and found[0] in apps and apps[found[0]].app.cluster == key.cluster:
            return obj
    for obj in candidates:
        found = tracking(obj, how)
        if found is None or found[0] not in apps:
            return obj
    return None


def _identity(obj: Mapping[str, Any]) -> ResourceId:
    group, _ = split_api_version(str(obj.get("apiVersion") or ""))
    metadata = mapping_at(obj, "metadata")
    return ResourceId(
        group, str(obj.get("kind") or ""), str(metadata.get("namespace") or ""), str(metadata.get("name"))
    )


def _loose(obj: Mapping[str, Any], key: ClusterResourceId) -> bool:
    """A live object without a namespace is the same object as a claim check gave one (a kind of unknown scope)."""
    found = _identity(obj)
    return not found.namespace and (found.group, found.kind, found.name) == (key.group, key.kind, key.name)
