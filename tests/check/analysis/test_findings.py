"""Warnings about what a chart makes: renders that change between runs, HPA-owned replicas, injected caBundles."""

from __future__ import annotations

from fleet_builders import analyse, app, claim, rendered

from cmp.check.analysis.claims import AppClaims
from cmp.check.analysis.findings import match_flow, unstable_warnings
from cmp.model import ClusterResourceId


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
    report = analyse([rendered(app("a"), *odd, *sane)], [], live)
    assert [(warning.id.kind, warning.id.name) for warning in report.warnings] == [("Deployment", "web")]
    assert report.prune_risks == ()


def test_each_warning_builder_gives_its_code() -> None:
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    webhook = {
        "metadata": {"annotations": {"cert-manager.io/inject-ca-from": "ns/cert"}},
        "webhooks": [{"clientConfig": {"caBundle": ""}}],
    }
    found = [
        claim(
            "HorizontalPodAutoscaler", "web", {"spec": {"scaleTargetRef": target}}, group="autoscaling", namespace="ns"
        ),
        claim("Deployment", "web", {"spec": {"replicas": 2}}, group="apps", namespace="ns"),
        claim("ValidatingWebhookConfiguration", "hook", webhook, group="admissionregistration.k8s.io"),
    ]
    report = analyse([rendered(app("a"), *found)], [])
    assert [(w.code, w.id.kind) for w in report.warnings] == [
        ("hpa-replicas", "Deployment"),
        ("empty-cabundle", "ValidatingWebhookConfiguration"),
    ]


def test_renders_that_differ_read_together_naming_each_objects_fields() -> None:
    result = AppClaims(app("a"))
    secret = ClusterResourceId("https://k", "", "Secret", "ns", "db")
    token = ClusterResourceId("https://k", "", "Secret", "ns", "token")
    result.unstable += [(secret, ("data.password",)), (token, ("data.token", "data.salt"))]
    first, second = unstable_warnings([result])
    assert (first.code, second.code) == ("nondeterministic", "nondeterministic")
    assert first.together is not None and second.together is not None
    assert (first.together.headline, first.together.advice) == (second.together.headline, second.together.advice)
    assert (first.together.detail, second.together.detail) == ("data.password", "data.token, data.salt")
    assert "(data.password)" in first.message


def test_a_suggested_match_names_the_namespace_of_a_namespaced_object_and_quotes_what_yaml_would_misread() -> None:
    role = ClusterResourceId("https://k", "rbac.authorization.k8s.io", "Role", "kube-system", "leader")
    assert (
        match_flow(role, name=True)
        == "{group: rbac.authorization.k8s.io, kind: Role, namespace: kube-system, name: leader}"
    )
    assert match_flow(role, name=False) == "{group: rbac.authorization.k8s.io, kind: Role, namespace: kube-system}"
    namespace = ClusterResourceId("https://k", "", "Namespace", "", "yes")
    assert match_flow(namespace, name=True) == '{group: "", kind: Namespace, name: "yes"}'
