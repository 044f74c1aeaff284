"""What a change does to every shared object before it merges: the fleet at a base revision against the
fleet as checked out, object by object (pure, over the two revisions' claims).

An object is listed when the set of apps emitting it changed and some app still renders it now, or when
only protection keeps it alive after its last emitter let go (a leak made visible). Its event:
- `app-deleted`: an app that emitted it is gone. Argo CD deletes the Application (its parent's prune, by
  hand, or its ApplicationSet, unless applicationsSync create-only/create-update), and with the resources
  finalizer deletes every live object whose tracking id names it, unless `shouldBeDeleted` spares it (a
  CRD, `Delete=false`, `helm.sh/resource-policy: keep`; controller/appcontroller.go).
- `orphaned`: no app emits it any more: its last tracker's next sync with prune deletes it, unless
  `Prune=false` or `Prune=confirm` is on the live object (gitops-engine's sync context).
- `hand-over`: other apps emit it than before: an app that stops emitting it prunes it if it still tracks
  it when it syncs, unless protected; the new owner's sync rewrites the tracking id, and fails instead
  under `FailOnSharedResource=true` while another app's tracking id is on it (controller/sync.go).
What decides `safe` is the live object when given (its sync-options and tracking id), else the copy the
app emitted at the base revision (chartshare's protection writes `Prune=false,Delete=false` there).
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID, prune_safe, sync_options
from cmp.check.analysis.claims import AppClaims, ByObject, by_object, mapping_at
from cmp.check.analysis.findings import is_crd, match_flow
from cmp.check.analysis.live import ANNOTATION_TRACKING, Tracking, tracking
from cmp.check.fleet.applications import Application
from cmp.model import ClusterResourceId, ResourceId, split_api_version

EVENTS = ("hand-over", "orphaned", "app-deleted")
RESOURCE_POLICY = "helm.sh/resource-policy"


@dataclass(frozen=True, slots=True)
class Entry:
    """One object whose emitters change, what Argo CD will do to it, and (when unsafe) how to prevent it."""

    id: ClusterResourceId
    event: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    safe: bool
    reason: str
    fix: str | None


@dataclass(frozen=True, slots=True)
class _Copy:
    """The object that decides: the live one, or an app's copy at the base revision."""

    annotations: Mapping[str, Any]
    tracker: str | None  # the app the live tracking id names; None for a copy at the base revision
    said: str  # how the reason names it


def lifecycle(
    before: Mapping[str, AppClaims],
    after: Mapping[str, AppClaims],
    live_objects: Sequence[Mapping[str, Any]] | None = None,
    how: Tracking = ANNOTATION_TRACKING,
    unsure: Collection[str] = (),
) -> list[Entry]:
    """The entries, sorted by object. An object whose change involves an app that did not render whole at
    either revision (incomplete, or named in `unsure`: skipped sources) is left out: what such an app no
    longer emits cannot be told from what was not rendered, nor its deletion from its skip."""
    emitted_before, emitted_now = by_object(before.values(), emitted=True), by_object(after.values(), emitted=True)
    rendered_now = by_object(after.values(), emitted=False)
    entries: list[Entry] = []
    for key in sorted(changed_ids(before, after, unsure)):
        was, now = sorted(emitted_before.get(key, {})), sorted(emitted_now.get(key, {}))
        found = _live(key, live_objects, how, {**before, **after})
        entry = _judge(key, tuple(was), tuple(now), before, after, found, how, rendered_now, set(unsure))
        if entry is not None:
            entries.append(entry)
    return entries


def changed_ids(
    before: Mapping[str, AppClaims], after: Mapping[str, AppClaims], unsure: Collection[str] = ()
) -> set[ClusterResourceId]:
    """The objects some app rendered at the base revision whose emitting apps differ now, where every app
    in the difference rendered whole at both revisions."""
    emitted_before, emitted_now = by_object(before.values(), emitted=True), by_object(after.values(), emitted=True)
    rendered_before = by_object(before.values(), emitted=False)
    unsure = {*unsure, *(name for apps in (before, after) for name, result in apps.items() if not result.complete)}
    return {
        key
        for key in set(emitted_before) | set(emitted_now)
        if key in rendered_before
        and set(was := emitted_before.get(key, {})) != set(now := emitted_now.get(key, {}))
        and not unsure & (set(was) ^ set(now))
    }


def _judge(
    key: ClusterResourceId,
    was: tuple[str, ...],
    now: tuple[str, ...],
    before: Mapping[str, AppClaims],
    after: Mapping[str, AppClaims],
    live_object: Mapping[str, Any] | None,
    how: Tracking,
    rendered_now: ByObject,
    unsure: set[str],
) -> Entry | None:
    gone = [app for app in was if app not in after]
    tracker = _tracker(live_object, how)
    if tracker and tracker in before and tracker not in after and tracker not in gone and tracker not in unsure:
        gone.append(tracker)  # it stripped the object at the base revision, but the live tracking id names it
    losers = [app for app in was if app not in now and app in after]
    copies = {app: _copy(key, app, before, live_object, how) for app in losers}
    if gone:
        entry = _app_deleted(key, was, now, gone, before, after, live_object, how, key in rendered_now)
        return _with_prune(entry, losers, copies, live_object, how, key in rendered_now)
    if not now:
        return _orphaned(key, was, copies, live_object, how, key in rendered_now)
    return _hand_over(key, was, now, losers, copies, after, live_object, how)


def _hand_over(
    key: ClusterResourceId,
    was: tuple[str, ...],
    now: tuple[str, ...],
    losers: list[str],
    copies: Mapping[str, _Copy],
    after: Mapping[str, AppClaims],
    live_object: Mapping[str, Any] | None,
    how: Tracking,
) -> Entry:
    def entry(safe: bool, reason: str, fix: str | None = None) -> Entry:
        return Entry(key, "hand-over", was, now, safe, reason, None if safe else fix)

    gainers = [app for app in now if app not in was] or list(now)
    owners = _names(gainers)
    blockers = [app for app in gainers if after[app].app.lifetime.fail_on_shared]
    tracker = _tracker(live_object, how)
    if not losers:
        keeping = _names(was) if was else "no app"
        return entry(
            True,
            f"{keeping} still {_verb(was, 'emits')} it and {owners} now {_verb(gainers, 'emits')} it too: nothing "
            "prunes or deletes it, but the apps take its tracking id from each other on every sync (see CONFLICTS)"
            if was
            else f"no app emitted it before (every app stripped it); {owners}'s next sync adopts it and its tracking "
            f"id names {owners} afterwards",
        )
    if live_object is not None and tracker not in losers:
        held = f"names {tracker}" if tracker else "names no app"
        reason = (
            f"the live object's tracking id {held}, not {_names(losers)}: no prune by an app that stops emitting it "
            f"touches it; {owners}'s next sync writes its tracking id"
        )
        if blockers and tracker and tracker not in gainers:
            return entry(
                False,
                f"{reason}, but {_names(blockers)} {_verb(blockers, 'syncs')} with FailOnSharedResource=true and "
                f"fails while {tracker}'s tracking id is on it",
                _release(key, live_object, how, then=gainers),
            )
        return entry(True, reason)
    protected = all(prune_safe(copy.annotations) for copy in copies.values())
    said = _said(copies)
    order = (
        f"{_names(losers)} {_verb(losers, 'stops')} emitting it and {owners} {_verb(gainers, 'takes')} it over: "
        f"until {owners} syncs, its tracking id names {_names(losers)}"
    )
    if protected and not blockers:
        return entry(
            True,
            f"{order}; {said} carries Prune=false, so a sync of {_names(losers)} leaves it in place (OutOfSync, "
            f"requires pruning) and {owners}'s sync writes its tracking id: it is never deleted, and the tracking id "
            f"names {owners} afterwards",
        )
    if blockers:
        prune = "is protected from prune" if protected else "is pruned by their next sync with prune"
        return entry(
            False,
            f"{order}; {_names(blockers)} {_verb(blockers, 'syncs')} with FailOnSharedResource=true and fails while "
            f"{_names(losers)}'s tracking id is on it, and meanwhile it {prune}",
            _release(key, live_object, how, then=gainers),
        )
    return entry(
        False,
        f"{order}; {said} has no Prune=false: if {_names(losers)} syncs with prune before {owners}, Argo CD deletes "
        f"it (its tracking id still names {_names(losers)}, which no longer emits it), and {owners} creates it anew "
        f"on its next sync; only if {owners} syncs first does the tracking id move and the prune leave it",
        f"{_annotate(key, live_object, ('Prune=false',))}, then sync {owners} before {_names(losers)}",
    )


def _orphaned(
    key: ClusterResourceId,
    was: tuple[str, ...],
    copies: Mapping[str, _Copy],
    live_object: Mapping[str, Any] | None,
    how: Tracking,
    rendered: bool,
) -> Entry | None:
    tracker = _tracker(live_object, how)
    untracked = live_object is not None and tracker not in was
    protected = untracked or all(prune_safe(copy.annotations) for copy in copies.values())
    if not protected and not rendered:
        return None  # an ordinary removal
    stops = f"no app emits it any more ({_names(was)} {_verb(was, 'stops')})"
    if protected:
        why = (
            f"the live object's tracking id names {tracker or 'no app'}"
            if untracked
            else f"{_said(copies)} carries Prune=false"
        )
        return Entry(
            key,
            "orphaned",
            was,
            (),
            True,
            f"{stops}; {why}, so no sync deletes it: it stays in the cluster, emitted by no app"
            + ("" if untracked else f" (its tracking id still names {_names(was)}, OutOfSync, requires pruning)")
            + f"; to delete it on purpose: {_delete(key)}",
            None,
        )
    return Entry(
        key,
        "orphaned",
        was,
        (),
        False,
        f"{stops} while it is still rendered and stripped everywhere; {_said(copies)} has no Prune=false, so the "
        f"next sync with prune of {_names(was)} deletes it",
        f"{_annotate(key, live_object, ('Prune=false',))}, or give it an owner in chartshare.yaml: "
        f"- match: {match_flow(key, name=True)} owner: {was[0]}",
    )


def _app_deleted(
    key: ClusterResourceId,
    was: tuple[str, ...],
    now: tuple[str, ...],
    gone: list[str],
    before: Mapping[str, AppClaims],
    after: Mapping[str, AppClaims],
    live_object: Mapping[str, Any] | None,
    how: Tracking,
    rendered: bool,
) -> Entry | None:
    tracker = _tracker(live_object, how)
    blockers = [app for app in now if app not in was and after[app].app.lifetime.fail_on_shared]
    deleting: list[str] = []  # gone apps whose deletion deletes the object
    kept: list[str] = []  # gone apps ArgoCD never deletes: they keep syncing their last spec
    said: list[str] = []
    for app in gone:
        application = before[app].app
        copy = _copy(key, app, before, live_object, how)
        fate, deletes = _fate(application, key, copy, tracker)
        said.append(fate)
        if application.lifetime.appset_keeps:
            kept.append(app)
        elif deletes:
            deleting.append(app)
    owners = _names(now) if now else ""
    if deleting:
        if not rendered:
            return None  # an ordinary removal
        follow = (
            f"; {owners} creates it anew on its next sync, unless it synced first and its tracking id names {owners}"
            if now
            else "; every app left strips it, so nothing brings it back"
        )
        orphaning = "; ".join(_orphan_delete(before[app].app) for app in deleting)
        fix = (
            f"{_annotate(key, live_object, ('Prune=false', 'Delete=false'))} before the change merges, or delete "
            f"{_names(deleting)} without cascade first ({orphaning})"
        )
        if now:
            fix += f", then sync {owners}"
        return Entry(key, "app-deleted", was, now, False, "; ".join(said) + follow, fix)
    if kept and now:
        return Entry(
            key,
            "app-deleted",
            was,
            now,
            False,
            "; ".join(said) + f"; it and {owners} then take its tracking id from each other on every sync",
            f"delete {_names(kept)} without cascade ({'; '.join(_orphan_delete(before[app].app) for app in kept)}), "
            f"then sync {owners}",
        )
    if not now:
        return Entry(
            key,
            "app-deleted",
            was,
            now,
            True,
            "; ".join(said)
            + f"; no app emits it now, so it stays in the cluster: to delete it on purpose: {_delete(key)}",
            None,
        )
    stale = tracker if tracker is not None else _names(gone)
    if blockers and (live_object is None or (tracker and tracker not in now)):
        return Entry(
            key,
            "app-deleted",
            was,
            now,
            False,
            "; ".join(said)
            + f"; {_names(blockers)} {_verb(blockers, 'syncs')} with FailOnSharedResource=true and fails while "
            f"{stale}'s tracking id is on it",
            _release(key, live_object, how, then=list(now)),
        )
    return Entry(
        key,
        "app-deleted",
        was,
        now,
        True,
        "; ".join(said) + f"; {owners}'s next sync adopts it and its tracking id names {owners} afterwards",
        None,
    )


def _with_prune(
    entry: Entry | None,
    losers: list[str],
    copies: Mapping[str, _Copy],
    live_object: Mapping[str, Any] | None,
    how: Tracking,
    rendered: bool,
) -> Entry | None:
    """A deleted app's entry, made unsafe when an app still in the fleet that stops emitting the object
    can prune it too (its tracking id may be the one on it); dropped when no app renders it any more,
    as that prune is then an ordinary removal."""
    tracker = _tracker(live_object, how)
    pruning = [
        app for app in losers if not prune_safe(copies[app].annotations) and (live_object is None or tracker == app)
    ]
    if entry is None or not pruning or not entry.safe:
        return entry
    if not rendered:
        return None
    reason = (
        f"{entry.reason}; but {_names(pruning)} also {_verb(pruning, 'stops')} emitting it and "
        f"{copies[pruning[0]].said} has no Prune=false: a sync with prune of {_names(pruning)} deletes it while "
        "its tracking id is on it"
    )
    return replace(entry, safe=False, reason=reason, fix=_annotate(entry.id, live_object, ("Prune=false",)))


def _fate(application: Application, key: ClusterResourceId, copy: _Copy, tracker: str | None) -> tuple[str, bool]:
    """What deleting a gone app does to the object, in words, and whether it deletes it."""
    app, lifetime = application.name, application.lifetime
    if lifetime.appset_keeps:
        return (
            f"{app} is no longer generated, but its ApplicationSet {lifetime.appset} has applicationsSync "
            f"{lifetime.appset_keeps}: Argo CD never deletes the Application, which keeps syncing its last spec",
            False,
        )
    if lifetime.appset:
        how = f"its ApplicationSet {lifetime.appset} deletes the Application {app} it no longer generates"
    else:
        how = f"{app}'s Application is gone from Git: Argo CD deletes it when its parent syncs with prune (or by hand)"
    if not lifetime.finalizer:
        return f"{how}; without the resources finalizer that deletes none of its objects", False
    spared = _spared(key, copy)
    if spared:
        return f"{how}; its resources finalizer deletes what it tracks, but spares this one: {spared}", False
    if copy.tracker is not None and tracker != app:
        return (
            f"{how}; its resources finalizer deletes what it tracks, and the live tracking id names "
            f"{tracker or 'no app'}",
            False,
        )
    return (
        f"{how}, and its resources finalizer then deletes every live object whose tracking id names {app}: this one",
        True,
    )


def _spared(key: ClusterResourceId, copy: _Copy) -> str:
    """Why a cascade leaves the object (shouldBeDeleted), or "" when it deletes it."""
    if is_crd(key):
        return "Argo CD never cascade-deletes a CRD"
    for option in ("Delete=false", "Delete=confirm"):  # confirm: the deletion waits for a person's approval
        if option in sync_options(copy.annotations):
            return f"{copy.said} carries {option}"
    if str(copy.annotations.get(RESOURCE_POLICY) or "").strip() == "keep":
        return f"{copy.said} carries {RESOURCE_POLICY}: keep"
    return ""


# --- what decides, and the commands --------------------------------------------------------------------------


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


def _copy(
    key: ClusterResourceId,
    app: str,
    before: Mapping[str, AppClaims],
    live_object: Mapping[str, Any] | None,
    how: Tracking,
) -> _Copy:
    if live_object is not None:
        return _Copy(
            mapping_at(live_object, "metadata", "annotations"), _tracker(live_object, how) or "", "the live object"
        )
    claim = before[app].emitted[key]
    return _Copy(mapping_at(claim.obj, "metadata", "annotations"), None, f"{app}'s copy at the base revision")


def _tracker(live_object: Mapping[str, Any] | None, how: Tracking) -> str | None:
    if live_object is None:
        return None
    found = tracking(live_object, how)
    return found[0] if found is not None else ""


def _said(copies: Mapping[str, _Copy]) -> str:
    names = list(dict.fromkeys(copy.said for copy in copies.values()))
    return " and ".join(names) if names else "the object"


def _names(apps: Sequence[str]) -> str:
    return ", ".join(apps)


def _verb(apps: Sequence[str], verb: str) -> str:
    """`verb` agreeing with one app or several (`emits` -> `emit`)."""
    return verb if len(apps) == 1 else verb[:-1]


def _kubectl_target(key: ClusterResourceId) -> list[str]:
    kind = key.kind.lower() + (f".{key.group}" if key.group else "")
    return [*(["-n", key.namespace] if key.namespace else []), f"{kind}/{key.name}"]


def _annotate(key: ClusterResourceId, live_object: Mapping[str, Any] | None, wanted: tuple[str, ...]) -> str:
    """`kubectl annotate` adding `wanted` to the object's sync-options, keeping the others it has live."""
    have = sync_options(mapping_at(live_object, "metadata", "annotations")) if live_object is not None else []
    prefixes = tuple(option.split("=")[0] + "=" for option in wanted)
    options = [option for option in have if not option.startswith(prefixes)] + list(wanted)
    words = ["kubectl", "annotate", *_kubectl_target(key), f"{SYNC_OPTIONS}={','.join(options)}", "--overwrite"]
    return " ".join(shlex.quote(word) for word in words)


def _release(key: ClusterResourceId, live_object: Mapping[str, Any] | None, how: Tracking, then: Sequence[str]) -> str:
    """Protect the object, take the old tracking off it (each mark the tracking method reads), then sync."""
    marks: list[str] = []
    target = " ".join(shlex.quote(word) for word in _kubectl_target(key))
    if how.method != "label":
        marks.append(f"kubectl annotate {target} {TRACKING_ID}-")
    if how.method != "annotation":
        marks.append(f"kubectl label {target} {shlex.quote(how.label_key)}-")
    return f"{_annotate(key, live_object, ('Prune=false',))}; {'; '.join(marks)}; then sync {_names(then)}"


def _delete(key: ClusterResourceId) -> str:
    return " ".join(shlex.quote(word) for word in ["kubectl", "delete", *_kubectl_target(key)])


def _orphan_delete(application: Application) -> str:
    """The non-cascading delete of an Application (its objects stay)."""
    namespace, _, name = application.name.rpartition("_")
    return f"argocd app delete {shlex.quote(f'{namespace}/{name}' if namespace else name)} --cascade=false"


def unsafe_apps(entries: Sequence[Entry]) -> Iterator[tuple[str, Entry]]:
    """(app, entry) for every app an unsafe entry names, before or after."""
    for entry in entries:
        if not entry.safe:
            for app in sorted({*entry.before, *entry.after}):
                yield app, entry
