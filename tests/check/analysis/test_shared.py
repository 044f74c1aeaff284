"""Warnings about objects several apps render: unprotected owner copies, objects nobody emits, copies that differ."""

from __future__ import annotations

import textwrap
from typing import Any

from fleet_builders import analyse, app, claim, rendered

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID
from cmp.check.analysis.claims import Claim
from cmp.check.analysis.findings import Finding
from cmp.manifests import Resource
from cmp.ownership.managed_namespace import managed_namespace_metadata

RBAC = "rbac.authorization.k8s.io"
WEBHOOKS = "admissionregistration.k8s.io"


def _webhook(namespace: str, **metadata: Any) -> dict[str, Any]:
    service = {"name": "hook", "namespace": namespace, "path": "/validate"}
    return {
        "apiVersion": f"{WEBHOOKS}/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "hook", **metadata},
        "webhooks": [{"name": "w.example.io", "clientConfig": {"service": service}}],
    }


def _shared(
    owned: dict[str, Any], stripped: dict[str, Any], kind: str = "ValidatingWebhookConfiguration"
) -> list[Finding]:
    """The warnings when a emits `owned` and b strips `stripped` (the top-level owner is a)."""
    group = WEBHOOKS if kind.endswith("WebhookConfiguration") else RBAC
    copy = Claim(claim(kind, "hook", group=group).id, stripped, "no rule: top-level owner is a", top_level_owner=True)
    fleet = [rendered(app("a"), claim(kind, "hook", owned, group=group)), rendered(app("b"), stripped=(copy,))]
    return list(analyse(fleet, []).warnings)


def test_a_stripped_copy_that_differs_is_named_with_both_apps_and_the_differing_field() -> None:
    (divergent,) = [w for w in _shared(_webhook("team-a"), _webhook("team-b")) if w.code == "divergent-copy"]
    assert divergent.app == "b"
    assert divergent.message.startswith(
        "b strips its copy of ValidatingWebhookConfiguration.admissionregistration.k8s.io hook (no rule: top-level "
        'owner is a), and the copy a emits differs: /webhooks/0/clientConfig/service/namespace is "team-b" in '
        "b's, \"team-a\" in a's. With b's copy stripped, calls meant for b's webhook Service go to a's. Give every "
        "app its own copy, references fixed, with the rule `- {match: {group: admissionregistration.k8s.io, kind: "
        'ValidatingWebhookConfiguration}, others: rename, renameTo: "{app}-{name}"}`'
    )


def test_copies_that_differ_only_in_what_helm_and_argo_cd_stamp_per_release_stay_silent() -> None:
    owned = _webhook(
        "team",
        labels={"helm.sh/chart": "op-1.0.0", "app.kubernetes.io/instance": "a", "app.kubernetes.io/managed-by": "Helm"},
        annotations={
            TRACKING_ID: "a:admissionregistration.k8s.io/ValidatingWebhookConfiguration:a/hook",
            SYNC_OPTIONS: "Prune=false,Delete=false",
        },
    )
    stripped = _webhook("team", labels={"helm.sh/chart": "op-1.1.0", "app.kubernetes.io/instance": "b"})
    assert _shared(owned, stripped) == []


def test_a_copy_that_differs_in_its_own_sync_options_is_divergent() -> None:
    owned = _webhook("team", annotations={SYNC_OPTIONS: "Prune=false,ServerSideApply=true"})
    codes = [w.code for w in _shared(owned, _webhook("team"))]
    assert codes == ["divergent-copy"]


def test_only_the_first_few_differing_fields_are_named() -> None:
    owned = {"kind": "ClusterRole", "rules": [{"verbs": ["get"]}], "a": 1, "b": 2, "c": 3}
    stripped = {"kind": "ClusterRole", "rules": [{"verbs": ["list"]}], "a": 2, "b": 3, "c": 4}
    (divergent,) = [w for w in _shared(owned, stripped, "ClusterRole") if w.code == "divergent-copy"]
    assert divergent.together is not None
    assert (
        divergent.together.detail
        == "/rules/0/verbs/0 is \"list\" in b's, \"get\" in a's; /a is 2 in b's, 1 in a's; /b is 3 in b's, 2 in a's"
    )


def test_a_copy_of_a_kind_that_cannot_be_renamed_gets_told_to_render_equal_copies() -> None:
    crd = "apiextensions.k8s.io"
    owned = {"kind": "CustomResourceDefinition", "spec": {"versions": [{"name": "v1"}]}}
    copy = Claim(
        claim("CustomResourceDefinition", "w.example.io", group=crd).id,
        {**owned, "spec": {"versions": [{"name": "v2"}]}},
    )
    fleet = [
        rendered(app("a"), claim("CustomResourceDefinition", "w.example.io", owned, group=crd)),
        rendered(app("b"), stripped=(copy,)),
    ]
    (divergent,) = analyse(fleet, []).warnings
    assert "As a CRD's name is fixed by its spec, it cannot be renamed: render equal copies" in divergent.message
    assert "others: rename" not in divergent.message


def test_copies_two_apps_emit_are_a_conflict_not_a_divergent_copy() -> None:
    fleet = [
        rendered(app("a"), claim("ValidatingWebhookConfiguration", "hook", _webhook("a"), group=WEBHOOKS)),
        rendered(app("b"), claim("ValidatingWebhookConfiguration", "hook", _webhook("b"), group=WEBHOOKS)),
    ]
    report = analyse(fleet, [])
    assert [c.apps for c in report.conflicts] == [("a", "b")]
    assert report.warnings == ()


def _role(annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "ClusterRole", "metadata": {"name": "reader", "annotations": annotations or {}}}


def _unprotected(owned: dict[str, Any], *, top_level: bool = False) -> list[str]:
    kept = claim("ClusterRole", "reader", owned, group=RBAC)
    reason = "no rule: top-level owner is a" if top_level else "rules[0]: owned by a"
    stripped = Claim(kept.id, _role(), reason, top_level_owner=top_level)
    report = analyse([rendered(app("a"), kept), rendered(app("b"), stripped=(stripped,))], [])
    return [warning.message for warning in report.warnings if warning.code == "unprotected-shared"]


def test_a_shared_object_whose_owner_copy_is_protected_draws_no_warning() -> None:
    assert len(_unprotected(_role())) == 1
    assert _unprotected(_role({SYNC_OPTIONS: "Prune=false,Delete=false"})) == []
    assert _unprotected(_role({SYNC_OPTIONS: "Prune=confirm"})) == []


def test_protection_is_asked_of_the_rule_that_gives_the_object_else_of_a_last_cluster_scoped_rule() -> None:
    (by_rule,) = _unprotected(_role())
    assert by_rule.endswith("Protect it: `protect: true` on the chartshare.yaml rule that gives it to a")
    (by_owner,) = _unprotected(_role(), top_level=True)
    assert by_owner.endswith(
        'a last rule `- {match: {namespace: ""}, owner: a, protect: true}` protects every cluster-scoped object no '
        "other rule matches"
    )


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
    report = analyse([rendered(app("a"), stripped=(stripped,)), rendered(app("b"), stripped=(stripped,))], [])
    (warning,) = report.warnings
    from_check = warning.message.split("'s spec:\n", 1)[1]
    from_generate = textwrap.dedent(managed_namespace_metadata(Resource(namespace, "ns.yaml", None, 0))).rstrip("\n")
    assert from_check == from_generate
    assert "helm.sh" not in from_check and "tier: 'true'" in from_check


def test_a_namespace_without_labels_of_its_own_gets_only_create_namespace() -> None:
    namespace = {"metadata": {"name": "ns", "labels": {"helm.sh/chart": "team-1.0.0"}}}
    stripped = claim("Namespace", "ns", namespace, reason="rules[0]: others: strip")
    (warning,) = analyse([rendered(app("a"), stripped=(stripped,))], []).warnings
    assert warning.code == "nobody-emits"
    assert warning.message.endswith("in a's spec:\nsyncPolicy:\n  syncOptions:\n  - CreateNamespace=true")
    assert "or set its labels" not in warning.message


def test_a_copy_stripped_by_a_rule_that_writes_others_strip_is_accepted_and_stays_silent() -> None:
    copy = Claim(claim("ValidatingWebhookConfiguration", "hook", group=WEBHOOKS).id, _webhook("b"), accepted=True)
    owned = claim("ValidatingWebhookConfiguration", "hook", _webhook("a"), group=WEBHOOKS)
    report = analyse([rendered(app("a"), owned), rendered(app("b"), stripped=(copy,))], [])
    assert [w.code for w in report.warnings] == ["unprotected-shared"]
