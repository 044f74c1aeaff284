"""Live objects: tracking-ids, the prunes that adopting the rules would cause, and the command that prevents them."""

from __future__ import annotations

from typing import Any

import pytest
from fleet_builders import analyse, app, claim, rendered

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID
from cmp.check.analysis import live
from cmp.check.fleet.applications import Skip
from cmp.check.sources.renders import Rendered
from cmp.model import ClusterResourceId, ResourceId


def _live(options: str | None = None, tracked_by: str = "a") -> dict[str, Any]:
    annotations = {TRACKING_ID: f"{tracked_by}:/Namespace:shoong/shoong"}
    if options:
        annotations[SYNC_OPTIONS] = options
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shoong", "annotations": annotations}}


def _handover_fleet() -> list[Rendered]:
    """a strips the Namespace its tracking-id names; b emits it, protected (the copies are the same)."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shoong"}}
    protected = {**namespace, "metadata": {"name": "shoong", "annotations": {SYNC_OPTIONS: "Prune=false"}}}
    return [
        rendered(app("a"), stripped=(claim("Namespace", "shoong", namespace, reason="rules[0]: owned by b"),)),
        rendered(app("b"), claim("Namespace", "shoong", protected)),
    ]


def test_an_app_that_stops_emitting_a_tracked_object_would_prune_it() -> None:
    report = analyse(_handover_fleet(), [], [_live("ServerSideApply=true")])
    assert report.prune_risks is not None
    assert [(r.id, r.app, r.fix) for r in report.prune_risks] == [
        (
            ClusterResourceId("https://k", "", "Namespace", "", "shoong"),
            "a",
            "kubectl annotate namespace/shoong "
            "argocd.argoproj.io/sync-options=ServerSideApply=true,Prune=false --overwrite",
        )
    ]
    assert [(w.app, w.message) for w in report.warnings] == [
        (
            "b",
            "the live Namespace shoong is tracked by a, which no longer emits it: annotate it first (see PRUNE "
            "RISKS), then sync b to take it over",
        )
    ]


@pytest.mark.parametrize("options", ["Prune=false", "Prune=confirm,ServerSideApply=true"])
def test_prune_false_or_confirm_on_the_live_object_makes_it_safe(options: str) -> None:
    report = analyse(_handover_fleet(), [], [_live(options)])
    assert report.prune_risks == ()
    assert [w.message for w in report.warnings] == [
        "the live Namespace shoong is tracked by a, which no longer emits it; it carries Prune=false, so nothing "
        "is deleted: sync b to take it over"
    ]


def test_no_prune_risk_is_claimed_for_an_app_with_a_skipped_source() -> None:
    """A skipped source may still emit the object: "no longer emits" cannot be trusted."""
    assert analyse(_handover_fleet(), [], [_live()]).prune_risks != ()
    skipped = [Skip("a", "sources[1]: chart x comes from elsewhere")]
    assert analyse(_handover_fleet(), skipped, [_live()]).prune_risks == ()


def test_an_object_tracked_by_an_app_outside_the_fleet_is_a_fight_not_a_prune() -> None:
    report = analyse(_handover_fleet(), [], [_live(tracked_by="legacy")])
    assert report.prune_risks == ()
    assert [w.message for w in report.warnings] == [
        "the live Namespace shoong is tracked by legacy, an app outside this fleet, and b emits it too: the two "
        "will fight over it unless legacy stops emitting it"
    ]


def test_an_object_its_tracker_still_emits_is_no_risk() -> None:
    fleet = [rendered(app("a"), claim("Namespace", "shoong"))]
    report = analyse(fleet, [], [_live()])
    assert report.prune_risks == () and report.warnings == ()


def test_a_tracking_id_copied_onto_another_object_is_ignored() -> None:
    copied = _live()
    copied["metadata"]["name"] = "copy"
    assert live.tracking(copied) is None
    assert live.tracking({"metadata": {"annotations": {TRACKING_ID: "broken"}}}) is None
    assert live.tracking(_live(tracked_by="team_a")) == ("team_a", ResourceId("", "Namespace", "", "shoong"))


def test_the_annotate_command_names_namespaced_objects_by_kind_group_and_namespace() -> None:
    resource = ResourceId("apps", "Deployment", "shoong", "order")
    assert live.annotate_command({}, resource) == (
        "kubectl annotate -n shoong deployment.apps/order argocd.argoproj.io/sync-options=Prune=false --overwrite"
    )
