"""The lifecycle entries over generated fleets and edits: exactly the objects whose emitters changed (among
those still rendered), each with the emitters of both revisions, the event their difference implies, and
a fix exactly when it is unsafe.

A generated base fleet has a few apps claiming a few objects (emitted or stripped, protected or not, with
the resources finalizer or not); the edit removes apps, moves emitters, strips or adds claims, and may
give live objects under each tracking method.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID
from cmp.check.analysis.claims import AppClaims, Claim, by_object
from cmp.check.analysis.lifecycle import EVENTS, lifecycle
from cmp.check.analysis.live import METHODS, Tracking
from cmp.check.fleet.applications import Application, Lifetime
from cmp.model import ClusterResourceId

CLUSTER = "https://kubernetes.default.svc"
APPS = ("a", "b", "c", "d")
OBJECTS = (
    ("", "Namespace", "", "team"),
    ("rbac.authorization.k8s.io", "ClusterRole", "", "reader"),
    ("", "ConfigMap", "team", "settings"),
    ("apiextensions.k8s.io", "CustomResourceDefinition", "", "widgets.example.io"),
)
KEYS = [ClusterResourceId(CLUSTER, *obj) for obj in OBJECTS]


def _object(key: ClusterResourceId, options: str, tracker: str | None = None, method: str = "annotation") -> Any:
    annotations: dict[str, str] = {SYNC_OPTIONS: options} if options else {}
    labels: dict[str, str] = {}
    if tracker is not None and method != "label":
        annotations[TRACKING_ID] = f"{tracker}:{key.group}/{key.kind}:{key.namespace or 'team'}/{key.name}"
    if tracker is not None and method != "annotation":
        labels["app.kubernetes.io/instance"] = tracker
    metadata: dict[str, Any] = {"name": key.name, "annotations": annotations, "labels": labels}
    if key.namespace:
        metadata["namespace"] = key.namespace
    api = f"{key.group}/v1" if key.group else "v1"
    return {"apiVersion": api, "kind": key.kind, "metadata": metadata}


# per app: per object, None (not rendered), "emit" or "strip"; and the copy's sync-options
claim_state = st.sampled_from([None, "emit", "strip"])
fleets = st.dictionaries(
    st.sampled_from(APPS),
    st.tuples(
        st.lists(claim_state, min_size=len(KEYS), max_size=len(KEYS)),
        st.sampled_from(["", "Prune=false", "Prune=false,Delete=false", "Delete=false"]),
        st.booleans(),  # the resources finalizer
        st.booleans(),  # FailOnSharedResource=true
    ),
    max_size=len(APPS),
)


def _claims(fleet: dict[str, Any]) -> dict[str, AppClaims]:
    apps: dict[str, AppClaims] = {}
    for name, (states, options, finalizer, fail_on_shared) in sorted(fleet.items()):
        lifetime = Lifetime(finalizer=finalizer, fail_on_shared=fail_on_shared)
        result = AppClaims(Application(name, f"{name}.yaml", "default", CLUSTER, "team", (), lifetime))
        for key, state in zip(KEYS, states, strict=True):
            if state is not None:
                side = result.emitted if state == "emit" else result.stripped
                side[key] = Claim(key, _object(key, options))
        apps[name] = result
    return apps


@settings(max_examples=300, deadline=None)
@given(
    before=fleets,
    after=fleets,
    live=st.one_of(
        st.none(),
        st.tuples(
            st.sampled_from(METHODS),
            st.lists(st.tuples(st.sampled_from(range(len(KEYS))), st.sampled_from([*APPS, None]), st.booleans())),
        ),
    ),
)
def test_entries_are_the_objects_whose_emitters_changed(before: Any, after: Any, live: Any) -> None:
    base, now = _claims(before), _claims(after)
    how, live_objects = Tracking(), None
    if live is not None:
        how = Tracking(method=live[0])
        live_objects = [
            _object(KEYS[index], "Prune=false,Delete=false" if protected else "", tracker, live[0])
            for index, tracker, protected in live[1]
        ]
    entries = lifecycle(base, now, live_objects, how)
    emitted_before, emitted_now = by_object(base.values(), emitted=True), by_object(now.values(), emitted=True)
    rendered_before, rendered_now = by_object(base.values(), emitted=False), by_object(now.values(), emitted=False)
    changed = {
        key
        for key in KEYS
        if key in rendered_before and sorted(emitted_before.get(key, {})) != sorted(emitted_now.get(key, {}))
    }
    listed = {entry.id for entry in entries}
    assert listed <= changed
    assert changed & set(rendered_now) <= listed  # what some app still renders is always listed
    assert [entry.id for entry in entries] == sorted(listed)  # one entry each, in order
    for entry in entries:
        assert entry.before == tuple(sorted(emitted_before.get(entry.id, {})))
        assert entry.after == tuple(sorted(emitted_now.get(entry.id, {})))
        assert entry.event in EVENTS
        gone = [app for app in entry.before if app not in now]
        if gone:
            assert entry.event == "app-deleted"
        elif entry.event != "app-deleted":
            assert (entry.event == "orphaned") == (not entry.after)
        assert (entry.fix is None) == entry.safe
        if entry.id not in rendered_now:
            assert entry.safe  # only what protection (or no cascade) keeps alive is listed
        assert entry.reason
