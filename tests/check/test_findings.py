"""Warnings: the sync traps around shared and chart-made objects, each with the fix."""

from __future__ import annotations

import textwrap
from typing import Any

from fleet_builders import app, claim, rendered

from cmp.annotations import SYNC_OPTIONS
from cmp.check import analysis
from cmp.manifests import Resource
from cmp.ownership.managed_namespace import managed_namespace_metadata

RBAC = "rbac.authorization.k8s.io"


def test_check_suggests_the_managed_namespace_metadata_generate_prints_for_a_helm_labelled_namespace() -> None:
    """Labels helm stamps describe the release, not the namespace: both commands leave them out."""
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": "ns",
            "labels": {"helm.sh/chart": "team-1.0.0", "istio-injection": "enabled", "tier": True},
            "annotations": {"meta.helm.sh/release-name": "team", "owner": "platform"},
        },
    }
    stripped = claim("Namespace", "ns", namespace, reason="rules[0]: others: strip")
    report = analysis.analyse([rendered(app("a"), stripped=(stripped,)), rendered(app("b"), stripped=(stripped,))], [])
    (warning,) = report.warnings
    from_check = warning.message.split("'s spec:\n", 1)[1]
    from_generate = textwrap.dedent(managed_namespace_metadata(Resource(namespace, "ns.yaml", None, 0))).rstrip("\n")
    assert from_check == from_generate
    assert "helm.sh" not in from_check and "tier: 'true'" in from_check


def test_a_namespace_without_labels_of_its_own_gets_only_create_namespace() -> None:
    namespace = {"metadata": {"name": "ns", "labels": {"helm.sh/chart": "team-1.0.0"}}}
    stripped = claim("Namespace", "ns", namespace, reason="rules[0]: others: strip")
    (warning,) = analysis.analyse([rendered(app("a"), stripped=(stripped,))], []).warnings
    assert warning.message.endswith("in a's spec:\nsyncPolicy:\n  syncOptions:\n  - CreateNamespace=true")
    assert "or set its labels" not in warning.message


def _role(annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "ClusterRole", "metadata": {"name": "reader", "annotations": annotations or {}}}


def test_a_shared_object_whose_owner_copy_is_protected_draws_no_warning() -> None:
    def fleet(owned: dict[str, Any]) -> tuple[str, ...]:
        kept = claim("ClusterRole", "reader", owned, group=RBAC)
        stripped = claim("ClusterRole", "reader", _role(), group=RBAC, reason="rules[0]: owned by a")
        report = analysis.analyse([rendered(app("a"), kept), rendered(app("b"), stripped=(stripped,))], [])
        return tuple(warning.message.split(" is rendered")[0] for warning in report.warnings)

    assert fleet(_role()) == ("ClusterRole.rbac.authorization.k8s.io reader",)
    assert fleet(_role({SYNC_OPTIONS: "Prune=false,Delete=false"})) == ()
    assert fleet(_role({SYNC_OPTIONS: "Prune=confirm"})) == ()


def test_objects_of_odd_shapes_are_passed_over_and_the_others_still_warn() -> None:
    odd = [
        claim("HorizontalPodAutoscaler", "h", {"spec": "scale me"}, group="autoscaling", namespace="ns"),
        claim("Deployment", "d", {"spec": ["x"], "metadata": "m"}, group="apps", namespace="ns"),
        claim(
            "MutatingWebhookConfiguration", "w", {"metadata": {"annotations": 1}}, group="admissionregistration.k8s.io"
        ),
    ]
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    sane = [
        claim(
            "HorizontalPodAutoscaler", "web", {"spec": {"scaleTargetRef": target}}, group="autoscaling", namespace="ns"
        ),
        claim("Deployment", "web", {"spec": {"replicas": 2}}, group="apps", namespace="ns"),
    ]
    live = [{"apiVersion": "v1", "kind": "X", "metadata": {"annotations": "x"}}]
    report = analysis.analyse([rendered(app("a"), *odd, *sane)], [], live)
    assert [(warning.id.kind, warning.id.name) for warning in report.warnings] == [("Deployment", "web")]
    assert report.prune_risks == ()
