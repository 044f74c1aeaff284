"""The warnings of `check`: objects that will not fight over tracking but will still hurt, each with its fix.

Pure: claims in, findings out. Each builder covers one sync trap Argo CD users meet with shared or
chart-made objects: a shared object whose owner's copy is not protected from pruning, an object every app
strips, a render that changes between runs, replicas an HPA owns, a caBundle cert-manager injects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cmp import goyaml
from cmp.annotations import prune_safe
from cmp.check.claims import AppClaims, ByObject, Claim, mapping_at
from cmp.model import ClusterResourceId, split_api_version
from cmp.ownership.managed_namespace import sync_policy

CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
NAMESPACE = ("", "Namespace")
# Workloads whose spec.replicas an HPA takes over.
SCALED_KINDS = frozenset({("apps", "Deployment"), ("apps", "StatefulSet")})
HPA = ("autoscaling", "HorizontalPodAutoscaler")
# Where cert-manager's cainjector writes a CA bundle, per kind; `[]` walks every list item.
CA_BUNDLE_FIELDS: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): ("webhooks[].clientConfig.caBundle",),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): ("webhooks[].clientConfig.caBundle",),
    CRD: ("spec.conversion.webhook.clientConfig.caBundle",),
    ("apiregistration.k8s.io", "APIService"): ("spec.caBundle",),
}
CA_INJECT_ANNOTATIONS = (
    "cert-manager.io/inject-ca-from",
    "cert-manager.io/inject-ca-from-secret",
    "cert-manager.io/inject-apiserver-ca",
)


@dataclass(frozen=True, slots=True)
class Finding:
    """A warning about one object of one app, and the fix."""

    app: str
    id: ClusterResourceId
    message: str


def is_crd(key: ClusterResourceId) -> bool:
    return (key.group, key.kind) == CRD


def canonical(obj: Mapping[str, Any]) -> str:
    """One text per content: copies compare equal exactly when their objects do."""
    return json.dumps(obj, sort_keys=True, default=str)


def shared_warnings(renderers: ByObject, emitters: ByObject, apps: Mapping[str, AppClaims]) -> Iterator[Finding]:
    """Objects several apps render: emitted by one owner without Prune=false, or emitted by nobody."""
    for key, claims in sorted(renderers.items()):
        kept = emitters.get(key, {})
        if len(kept) == 1 and len(claims) >= 2 and not is_crd(key):
            ((owner, claim),) = kept.items()
            if not prune_safe(mapping_at(claim.obj, "metadata", "annotations")):
                yield Finding(
                    owner,
                    key,
                    f"{key} is rendered by {', '.join(sorted(claims))} and emitted only by {owner}, without "
                    f"Prune=false: if ownership ever moves, {owner}'s next sync with prune deletes it. Protect it: "
                    f"`protect: true` on the chartshare.yaml rule that gives it to {owner}",
                )
        elif not kept:
            yield _nobody_emits(key, claims, apps)


def _nobody_emits(key: ClusterResourceId, claims: Mapping[str, Claim], apps: Mapping[str, AppClaims]) -> Finding:
    first = sorted(claims)[0]
    reason = claims[first].reason
    if (key.group, key.kind) != NAMESPACE:
        return Finding(
            first,
            key,
            f"{key} is rendered by {', '.join(sorted(claims))} and emitted by none of them ({first}: {reason}), "
            "so no app of this fleet creates it: check the owner the rule names",
        )
    # managedNamespaceMetadata applies to the destination namespace: suggest it on an app deployed there.
    hosts = sorted(app for app in claims if apps[app].app.namespace == key.name) or sorted(claims)
    snippet = sync_policy(mapping_at(claims[hosts[0]].obj, "metadata"))
    sets_metadata = "managedNamespaceMetadata" in snippet["syncPolicy"]
    return Finding(
        hosts[0],
        key,
        f"Namespace {key.name} is rendered by {', '.join(sorted(claims))} and emitted by none of them ({first}: "
        f"{reason}), so Argo CD does not create it"
        f"{' or set its labels and annotations' if sets_metadata else ''}. Give it an owner that exists, or let "
        f"exactly one Application deployed to it manage it (several would overwrite each other's metadata); in "
        f"{hosts[0]}'s spec:\n" + goyaml.dump(snippet).rstrip("\n"),
    )


def unstable_warnings(apps: Iterable[AppClaims]) -> Iterator[Finding]:
    for result in apps:
        for key, fields in result.unstable:
            yield Finding(
                result.app.name,
                key,
                f"renders differently on every run ({', '.join(fields)}): Argo CD will show it OutOfSync after "
                "each refresh. Generate the value outside the chart (an existing Secret, a fixed value) or list "
                "these fields under the Application's ignoreDifferences",
            )


def replica_warnings(apps: Iterable[AppClaims]) -> Iterator[Finding]:
    """A Deployment/StatefulSet with spec.replicas that an HPA of the same app scales."""
    for result in apps:
        for claim in result.emitted.values():
            if (claim.id.group, claim.id.kind) != HPA:
                continue
            target = mapping_at(claim.obj, "spec", "scaleTargetRef")
            group, _ = split_api_version(str(target.get("apiVersion") or ""))
            scaled = claim.id._replace(group=group, kind=str(target.get("kind")), name=str(target.get("name")))
            workload = result.emitted.get(scaled)
            if workload is None or (workload.id.group, workload.id.kind) not in SCALED_KINDS:
                continue
            if mapping_at(workload.obj, "spec").get("replicas") is None:
                continue
            key = workload.id
            pointers = ["/spec/replicas"]
            entry = {
                "group": key.group,
                "kind": key.kind,
                "name": key.name,
                "namespace": key.namespace,
                "jsonPointers": pointers,
            }
            snippet = _ignore_differences(entry, ["RespectIgnoreDifferences=true"])
            yield Finding(
                result.app.name,
                workload.id,
                f"sets spec.replicas while HorizontalPodAutoscaler {claim.id.name} scales it: every sync resets "
                "the replica count and the app flaps OutOfSync. Leave replicas out of the template when "
                "autoscaling is on, or add to the Application:\n" + snippet,
            )


def ca_bundle_warnings(apps: Iterable[AppClaims]) -> Iterator[Finding]:
    """`caBundle: ""` where cert-manager's cainjector will write the real bundle."""
    for result in apps:
        for claim in result.emitted.values():
            paths = CA_BUNDLE_FIELDS.get((claim.id.group, claim.id.kind))
            annotations = mapping_at(claim.obj, "metadata", "annotations")
            if not paths or not any(annotation in annotations for annotation in CA_INJECT_ANNOTATIONS):
                continue
            empty = [found for path in paths for found in _empty_fields(claim.obj, path)]
            if not empty:
                continue
            jq = [f".{path.replace('[]', '[]?')}" for path in paths]
            entry = {"group": claim.id.group, "kind": claim.id.kind, "name": claim.id.name, "jqPathExpressions": jq}
            snippet = _ignore_differences(entry)
            yield Finding(
                result.app.name,
                claim.id,
                f'sets caBundle: "" ({", ".join(empty)}) and asks cert-manager to inject the CA: after each '
                "injection Argo CD sees a difference and the next sync blanks the bundle. Remove the empty "
                "caBundle from the template, or add to the Application:\n" + snippet,
            )


def _ignore_differences(entry: dict[str, Any], sync_options: Sequence[str] = ()) -> str:
    """The lines of an Application's `spec` that let Argo CD ignore a field something else writes."""
    spec: dict[str, Any] = {"ignoreDifferences": [entry]}
    if sync_options:
        spec["syncPolicy"] = {"syncOptions": list(sync_options)}
    return goyaml.dump({"spec": spec}).rstrip("\n")


def _empty_fields(obj: Any, path: str, prefix: str = "") -> Iterator[str]:
    head, _, rest = path.partition(".")
    listed = head.endswith("[]")
    name = head.removesuffix("[]")
    value = obj.get(name) if isinstance(obj, Mapping) else None
    where = f"{prefix}.{name}" if prefix else name
    if listed:
        for position, item in enumerate(value if isinstance(value, list) else []):
            yield from _empty_fields(item, rest, f"{where}[{position}]")
    elif rest:
        yield from _empty_fields(value, rest, where)
    elif value == "":
        yield where
