"""The lifecycle model held to Argo CD: each row a change, the verdict Argo CD's code implies, and the code
(argoproj/argo-cd, gitops-engine inside it) or document it rests on. An unsafe row names the order that
breaks it (the trace's apps and actions) and its fix must make every order safe when the model runs again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from lifecycle_fleets import CRD, KEEP, NAMESPACE, ROLE, App, fleets, obj

from cmp.check.analysis.lifecycle import lifecycle
from cmp.check.analysis.lifecycle.cases import case_of
from cmp.check.analysis.lifecycle.fixes import Fix, applied, smallest
from cmp.check.analysis.lifecycle.search import MAX_EVENTS, explore
from cmp.check.analysis.live import ANNOTATION_TRACKING
from cmp.check.fleet.applications import Lifetime
from cmp.model import ClusterResourceId

AUTO = Lifetime(automated=True, auto_prune=True)  # automated sync with prune, no finalizer
FINAL = Lifetime(finalizer=True, automated=True, auto_prune=True)
MANUAL = Lifetime()  # synced by hand only


def gives(old: str, new: str, key: ClusterResourceId = ROLE, copy: str = "", **old_app: Any) -> list[App]:
    """`old` emits the object at the base revision and strips it now; `new` the other way round."""
    return [
        App(old, {key: f"emit:{copy}"}, {key: "strip"}, **old_app),
        App(new, {key: "strip"}, {key: "emit"}, lifetime=old_app.get("lifetime", AUTO)),
    ]


def removed(old: str, new: str, last: Any, key: ClusterResourceId = ROLE, copy: str = "", **old_app: Any) -> list[App]:
    """`old` emits the object at the base revision and the change removes it (its last spec: `last`)."""
    return [
        App(old, {key: f"emit:{copy}"}, None, last=last, **old_app),
        App("b", {key: "strip"}, {key: "emit"}),
    ]


@dataclass
class Row:
    id: str
    apps: list[App]
    safe: bool
    rests_on: str  # the Argo CD code or document the verdict follows
    trace: list[tuple[str, str]] = field(default_factory=list)  # (app, action) of the order that breaks it
    said: list[str] = field(default_factory=list)  # what the reason or the fix must say
    live: list[dict[str, Any]] | None = None
    key: ClusterResourceId = ROLE


ROWS = [
    Row(
        "hand-over-unprotected",
        gives("a", "b"),
        False,
        "gitops-engine pkg/sync/sync_context.go pruneObject: a sync with prune deletes what the app tracks and no "
        "longer renders unless isPruningDisabled",
        [("a", "prune"), ("b", "sync")],
        ["sync-options=Prune=false --overwrite"],
    ),
    Row(
        "hand-over-protected",
        gives("a", "b", copy="Prune=false,Delete=false"),
        True,
        "gitops-engine pkg/sync/sync_context.go isPruningDisabled: Prune=false on the live object",
        said=["every order ends with its tracking id naming b"],
    ),
    Row(
        "hand-over-new-owner-syncs-last",
        gives("a", "b", lifetime=MANUAL),
        False,
        "controller/appcontroller.go getPermittedAppLiveObjects (GetManagedLiveObjs: what the tracking id names): "
        "a's sync before b's finds its own id on it",
        [("a", "prune"), ("b", "sync")],
        ["sync b first (argocd app sync b), before syncing or deleting a"],
    ),
    Row(
        "hand-over-new-owner-synced-first",
        gives("a", "b"),
        True,
        "controller/appcontroller.go getPermittedAppLiveObjects: once b's sync wrote b's tracking id, a's prune "
        "does not reach it",
        live=[obj(ROLE, tracker="b")],
        said=["the live object's tracking id names b"],
    ),
    Row(
        "root-removed-without-finalizer",  # the shoong case
        removed("a", "b", {ROLE: "strip"}, lifetime=AUTO),
        False,
        "ARGOCD.md 'An Application removed from Git is not gone'; controller/appcontroller.go autoSync syncs it "
        "until deleted",
        [("a", "prune"), ("b", "sync")],
        ["Prune=false --overwrite", "argocd app delete a --cascade=false"],
    ),
    Row(
        "root-removed-path-gone-without-finalizer",
        removed("a", "b", "stuck", lifetime=AUTO),
        True,
        "controller/appcontroller.go finalizeApplicationDeletion: no CascadedDeletion, nothing deleted; a spec "
        "that does not render cannot sync",
    ),
    Row(
        "root-removed-path-gone-with-finalizer",
        removed("a", "b", "stuck", lifetime=FINAL),
        False,
        "controller/appcontroller.go finalizeApplicationDeletion + shouldBeDeleted: the cascade deletes what "
        "its tracking id names",
        [("a", "cascade"), ("b", "sync")],
        ["Prune=false,Delete=false --overwrite", "argocd app delete a --cascade=false"],
    ),
    Row(
        "root-removed-prune-false-only",
        removed("a", "b", {ROLE: "strip"}, copy="Prune=false", lifetime=FINAL),
        False,
        "controller/appcontroller.go shouldBeDeleted reads Delete=, not Prune=",
        [("a", "cascade"), ("b", "sync")],
        ["Prune=false,Delete=false"],
    ),
    Row(
        "child-removed-with-finalizer",
        [App("p", {}, {}), *removed("c", "b", {ROLE: "strip"}, copy="Prune=false", lifetime=FINAL, parent="p")],
        False,
        "docs/user-guide/app_deletion.md (a child goes with its parent's prune); Application.CascadedDeletion",
        [("c", "cascade"), ("b", "sync")],
        ["its parent p's sync with prune"],
    ),
    Row(
        "child-removed-without-finalizer",
        [App("p", {}, {}), *removed("c", "b", {ROLE: "strip"}, copy="Prune=false", lifetime=AUTO, parent="p")],
        True,
        "controller/appcontroller.go finalizeApplicationDeletion: without a resources finalizer nothing cascades",
    ),
    Row(
        "child-its-parent-never-prunes",
        [
            App("p", {}, {}),
            *removed(
                "c",
                "b",
                {ROLE: "strip"},
                copy="Prune=false",
                lifetime=Lifetime(finalizer=True, own_prune="false"),
                parent="p",
            ),
        ],
        True,
        "gitops-engine isPruningDisabled: the parent's prune skips an Application object carrying Prune=false",
        said=["its parent p never prunes it"],
    ),
    *[
        Row(
            f"appset-element-removed-{policy}",
            removed(
                "s1",
                "b",
                {ROLE: "strip"},
                copy="Prune=false",
                lifetime=Lifetime(finalizer=True, appset="set", appset_keeps=keeps),
            ),
            safe,
            "applicationset ApplicationsSyncPolicy.AllowDelete (sync, create-delete) and applicationset/utils "
            "RenderTemplateParams (the finalizer added)",
            [] if safe else [("s1", "cascade"), ("b", "sync")],
            ["never deletes it"] if safe else ["its ApplicationSet set no longer generates it"],
        )
        for policy, keeps, safe in (
            ("sync", "", False),
            ("create-delete", "", False),
            ("create-only", "create-only", True),
            ("create-update", "create-update", True),
        )
    ],
    Row(
        "appset-create-only-keeps-an-emitter",
        [
            App(
                "s1",
                {ROLE: "emit:Prune=false"},
                None,
                last={ROLE: "emit:Prune=false"},
                lifetime=Lifetime(appset="set", appset_keeps="create-only", automated=True),
            ),
            App("b", {ROLE: "strip"}, {ROLE: "emit"}),
        ],
        False,
        "applicationset AllowDelete: create-only never deletes s1, which keeps applying it (tracking ids fight)",
        [("b", "sync"), ("s1", "sync")],
        ["argocd app delete s1 --cascade=false"],
    ),
    Row(
        "app-level-prune-false",
        gives("a", "b", lifetime=Lifetime(prune="false", automated=True, auto_prune=True)),
        True,
        "argo-cd PR #23370: controller/sync.go WithDefaultPruneOption(syncOp.SyncOptions) and gitops-engine "
        "isPruningDisabled(obj, defaultPruneOption)",
        said=["a sync of a that sets its own sync options would prune it"],
    ),
    Row(
        "app-level-prune-false-added-by-the-change",
        [
            App(
                "a",
                {ROLE: "emit"},
                {ROLE: "strip"},
                lifetime=AUTO,
                now_lifetime=Lifetime(prune="false", automated=True, auto_prune=True),
            ),
            App("b", {ROLE: "strip"}, {ROLE: "emit"}),
        ],
        False,
        "controller/appcontroller.go autoSync copies the Application's syncOptions as they are when it syncs: "
        "its spec may change after",
        [("a", "prune"), ("b", "sync")],
    ),
    Row(
        "app-level-delete-false",
        removed("a", "b", {ROLE: "strip"}, lifetime=Lifetime(finalizer=True, prune="false", delete="false")),
        True,
        "controller/appcontroller.go shouldBeDeleted: Delete= from app.Spec.SyncPolicy.SyncOptions",
    ),
    Row(
        "crd",
        removed("a", "b", {CRD: "strip"}, key=CRD, lifetime=FINAL),
        True,
        "controller/appcontroller.go shouldBeDeleted: !kube.IsCRD(obj); ARGOCD.md 3 (a CRD is never stamped)",
        key=CRD,
        said=["Argo CD never stamps a CRD"],
    ),
    Row(
        "prune-confirm",
        gives("a", "b", copy="Prune=confirm"),
        True,
        "gitops-engine pkg/sync/sync_context.go objRequiresPruneConfirmation: the prune waits for approval",
        said=["approving a's held prune would delete it"],
    ),
    Row(
        "delete-confirm",
        removed("a", "b", {ROLE: "strip"}, copy="Prune=false,Delete=confirm", lifetime=FINAL),
        True,
        "controller/state.go isObjRequiresDeletionConfirmation; appcontroller.go finalizeApplicationDeletion "
        "waits until IsDeletionConfirmed",
        said=["approving the deletion of a would delete it"],
    ),
    Row(
        "resource-policy-keep",
        removed("a", "b", {ROLE: "strip"}, copy=f"Prune=false,{KEEP}", lifetime=FINAL),
        True,
        "controller/appcontroller.go shouldBeDeleted: HasAnnotationOption(helm.sh/resource-policy, keep)",
    ),
    Row(
        "fail-on-shared",
        [
            App("a", {NAMESPACE: "emit:Prune=false"}, {NAMESPACE: "strip"}),
            App(
                "b",
                {NAMESPACE: "strip"},
                {NAMESPACE: "emit"},
                lifetime=Lifetime(fail_on_shared=True, automated=True, auto_prune=True),
            ),
        ],
        False,
        "controller/sync.go: FailOnSharedResource=true fails the sync while hasSharedResourceCondition",
        [("a", "sync"), ("b", "sync")],
        ["argocd.argoproj.io/tracking-id-", "then sync b"],
        key=NAMESPACE,
    ),
    Row(
        "not-rendered-here",
        removed("a", "b", None, lifetime=AUTO),
        False,
        "a removed app's last spec check cannot render: both ways explored (ARGOCD.md: it keeps syncing)",
        [("a", "prune"), ("b", "sync")],
        ["check cannot render at the new revision"],
    ),
]


def _run(row: Row) -> Any:
    before, after, last = fleets(row.apps)
    entries = lifecycle(before, after, row.live, ANNOTATION_TRACKING, (), last)
    [entry] = [entry for entry in entries if entry.id == row.key]
    return entry, case_of(row.key, before, after, last, row.live[0] if row.live else None, ANNOTATION_TRACKING)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_the_model_gives_the_verdict_argo_cd_implies(row: Row) -> None:
    assert row.rests_on
    entry, case = _run(row)
    assert entry.safe == row.safe, entry.reason
    assert [(step.app, step.action) for step in entry.trace] == row.trace, entry.trace
    for words in row.said:
        assert words in f"{entry.reason}\n{entry.fix}\n{[step.effect for step in entry.trace]}"
    assert (entry.fix is None) == entry.safe
    if not entry.safe:
        assert explore(case).trace == entry.trace
        for fix in smallest(case):  # every fix offered makes every order safe
            assert explore(applied(case, fix)).safe, fix


def test_the_new_owner_syncing_first_is_a_fix_only_where_a_person_orders_the_syncs() -> None:
    manual = _run(ROWS[2])[1]
    automated = _run(ROWS[0])[1]
    assert explore(applied(manual, [Fix("order", ("b",))])).safe
    assert "sync b first" in (_run(ROWS[2])[0].fix or "")
    assert "sync b first" not in (_run(ROWS[0])[0].fix or "")  # a syncs by itself: nobody can order it
    assert explore(applied(automated, [Fix("order", ("b",))])).safe  # the order itself is safe...


def test_a_case_past_the_bound_is_said_to_be_too_large_not_guessed() -> None:
    apps = [App(f"a{n}", {ROLE: "emit"}, None, last={ROLE: "strip"}, lifetime=FINAL) for n in range(7)]
    apps.append(App("b", {ROLE: "strip"}, {ROLE: "emit"}))
    before, after, last = fleets(apps)
    [entry] = lifecycle(before, after, None, ANNOTATION_TRACKING, (), last)
    assert not entry.safe and entry.fix is None and entry.trace == ()
    assert f"more than check explores ({MAX_EVENTS})" in entry.reason
