"""Comparing two apps' copies of an object: what counts as a difference, and how it is named."""

from __future__ import annotations

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID
from cmp.check.analysis import copies
from cmp.check.analysis.copies import ABSENT, Difference


def _pod_template(labels: dict[str, str]) -> dict[str, object]:
    return {"kind": "Deployment", "spec": {"template": {"metadata": {"labels": labels}}}}


def test_helm_labels_are_set_aside_wherever_a_metadata_block_sits() -> None:
    left = _pod_template({"app": "x", "helm.sh/chart": "x-1", "app.kubernetes.io/instance": "a"})
    right = _pod_template({"app": "x", "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "b"})
    assert copies.differences(left, right, 5, cluster_scoped=False) == []


def test_a_label_of_the_chart_itself_is_a_difference() -> None:
    left, right = _pod_template({"app": "x"}), _pod_template({"app": "y"})
    assert copies.differences(left, right, 5, cluster_scoped=False) == [
        Difference("/spec/template/metadata/labels/app", "x", "y")
    ]


def test_the_tracking_id_and_the_protection_are_set_aside_but_other_sync_options_count() -> None:
    tracked = {
        "metadata": {"annotations": {TRACKING_ID: "a:/ConfigMap:ns/x", SYNC_OPTIONS: "Delete=false,Prune=false"}}
    }
    assert copies.differences(tracked, {"metadata": {}}, 5, cluster_scoped=False) == []
    server_side = {"metadata": {"annotations": {"team": "x", SYNC_OPTIONS: "Prune=false,ServerSideApply=true"}}}
    plain = {"metadata": {"annotations": {"team": "x"}}}
    assert copies.differences(server_side, plain, 5, cluster_scoped=False) == [
        Difference("/metadata/annotations/argocd.argoproj.io~1sync-options", "ServerSideApply=true", ABSENT)
    ]


def test_the_namespace_of_a_cluster_scoped_object_is_set_aside() -> None:
    left, right = {"metadata": {"name": "r", "namespace": "a"}}, {"metadata": {"name": "r", "namespace": "b"}}
    assert copies.differences(left, right, 5, cluster_scoped=True) == []
    assert copies.differences(left, right, 5, cluster_scoped=False) == [Difference("/metadata/namespace", "a", "b")]


def test_pointers_escape_slashes_and_tildes_and_name_list_items_by_position() -> None:
    left = {"data": {"a/b~c": "1"}, "items": [1, 2]}
    right = {"data": {"a/b~c": "2"}, "items": [1, 2, 3]}
    assert copies.differences(left, right, 5, cluster_scoped=False) == [
        Difference("/data/a~1b~0c", "1", "2"),
        Difference("/items/2", ABSENT, 3),
    ]


def test_at_most_limit_differences_are_named() -> None:
    left = {str(n): n for n in range(10)}
    right = {str(n): n + 1 for n in range(10)}
    assert [d.pointer for d in copies.differences(left, right, 2, cluster_scoped=False)] == ["/0", "/1"]


def test_values_are_shown_as_json_and_cut_short_when_long() -> None:
    assert copies.shown("team-a") == '"team-a"'
    assert copies.shown(ABSENT) == "absent"
    assert copies.shown({"b": 1, "a": [True, None]}) == '{"a": [true, null], "b": 1}'
    long = copies.shown("x" * 100)
    assert len(long) == copies.SHOWN_VALUE_CHARS and long.endswith("...")
