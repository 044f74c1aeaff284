"""The warnings of `check` (one type, stable codes), and those about what a chart makes: renders that change
between runs, replicas an HPA owns, a caBundle cert-manager injects.

Pure: claims in, findings out. A finding is about one object of one app and carries a stable `code`;
findings of one code for one app that share their advice also say how they read together, so the report
can list their objects under one entry with the fix said once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from cmp import goyaml
from cmp.check.analysis.claims import TEMPLATE_CALLS, AppClaims, mapping_at
from cmp.check.analysis.ignored import IgnoreRule, application_rules, covered
from cmp.model import ClusterResourceId, GroupKind, split_api_version

# The codes of the warnings: stable slugs that tools and docs refer to.
UNPROTECTED_SHARED = "unprotected-shared"
NOBODY_EMITS = "nobody-emits"
DIVERGENT_COPY = "divergent-copy"
NONDETERMINISTIC = "nondeterministic"
HPA_REPLICAS = "hpa-replicas"
EMPTY_CABUNDLE = "empty-cabundle"
HANDOVER = "handover"
UNMATCHED_TARGET = "patch-target-unmatched"
EMPTY_ROOT = "empty-root"
POLICY_OVERRIDE = "policy-override"
POLICY_FORBIDDEN = "policy-forbidden"

CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
NAMESPACE = ("", "Namespace")
# Workloads whose spec.replicas an HPA takes over.
SCALED_KINDS = frozenset({("apps", "Deployment"), ("apps", "StatefulSet")})
HPA = ("autoscaling", "HorizontalPodAutoscaler")
# Where cert-manager's cainjector writes a CA bundle, per kind; `[]` walks every list item.
CA_BUNDLE_FIELDS: Mapping[GroupKind, tuple[str, ...]] = {
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
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._*?/-]*$")


class Together(NamedTuple):
    """How a finding reads in one entry with others of its code and app that share `headline` and `advice`."""

    headline: str  # after the count: "shared objects emitted only by app-a, without Prune=false"
    detail: str  # this object's own line in the entry ("" for none)
    advice: str  # what goes wrong and the fix, said once for the entry


@dataclass(frozen=True, slots=True)
class Finding:
    """A warning about one object of one app, and the fix."""

    app: str
    code: str
    id: ClusterResourceId
    message: str  # the whole warning, for this object alone
    together: Together | None = None  # None: it always stands alone (its fix names this object only)


def is_crd(key: ClusterResourceId) -> bool:
    return (key.group, key.kind) == CRD


def canonical(obj: Mapping[str, Any]) -> str:
    """One text per content: copies compare equal exactly when their objects do."""
    return json.dumps(obj, sort_keys=True, default=str)


def match_flow(key: ClusterResourceId, *, name: bool) -> str:
    """A chartshare.yaml `match:` for the object (or, without `name`, for its kind where it lands), in flow
    style: `{group: "", kind: Namespace, name: shoong}`."""
    match = {"group": key.group, "kind": key.kind}
    if key.namespace:
        match["namespace"] = key.namespace
    if name:
        match["name"] = key.name
    return "{" + ", ".join(f"{field}: {scalar(value)}" for field, value in match.items()) + "}"


def scalar(value: str) -> str:
    """A string as a YAML flow scalar: bare when YAML reads it back as that string, else quoted."""
    return value if _PLAIN.match(value) and goyaml.reads_as_string(value) else json.dumps(value)


def unstable_warnings(apps: Iterable[AppClaims], ignored: Sequence[IgnoreRule] = ()) -> Iterator[Finding]:
    """Objects that render differently on every run, less the fields Argo CD's diff ignores (the
    Application's ignoreDifferences, argocd-cm's `ignored`); charts whose templates call time or random
    functions even when two renders agreed (within one second, `now | date` does)."""
    for result in apps:
        rules = [*application_rules(result.app.ignore_differences), *ignored]
        for key, fields in result.unstable:
            if fields == TEMPLATE_CALLS:
                if not any(rule.paths and rule.selects(found) for found in result.emitted for rule in rules):
                    yield _template_calls(result.app.name, key)
                continue
            kept = [field for field in fields if not covered(rules, key, field)]
            if not kept:
                continue
            together = Together(
                "objects that render differently on every run",
                ", ".join(kept),
                "Argo CD will show them OutOfSync after each refresh. Generate the values outside the chart (an "
                "existing Secret, a fixed value) or list these fields under the Application's ignoreDifferences",
            )
            yield Finding(
                result.app.name,
                NONDETERMINISTIC,
                key,
                f"renders differently on every run ({', '.join(kept)}): Argo CD will show it OutOfSync after "
                "each refresh. Generate the value outside the chart (an existing Secret, a fixed value) or list "
                "these fields under the Application's ignoreDifferences",
                together,
            )


def _template_calls(app: str, key: ClusterResourceId) -> Finding:
    return Finding(
        app,
        NONDETERMINISTIC,
        key,
        "its chart's templates call time or random functions (now, date over now, rand*, uuidv4, gen*): two "
        "renders here agreed, but Argo CD will show the fields they fill OutOfSync after a refresh. Generate "
        "the values outside the chart, or list those fields under the Application's ignoreDifferences",
    )


def empty_root_warnings(apps: Iterable[AppClaims]) -> Iterator[Finding]:
    """An app read from a file that renders nothing from files naming Argo CD objects: an App of Apps root
    that creates no Application (a wrong path, values or include), which Argo CD syncs to nothing."""
    for result in apps:
        if result.names_apps and result.complete and not (result.emitted or result.stripped):
            yield Finding(
                result.app.name,
                EMPTY_ROOT,
                ClusterResourceId(result.app.cluster, "argoproj.io", "Application", "", result.app.name),
                "renders no resources, though its files name Argo CD objects: as an App of Apps root it creates "
                "no Application, and a sync with prune deletes those it tracks; check its path, values and "
                "directory include/exclude",
            )


def unmatched_target_warnings(apps: Iterable[AppClaims]) -> Iterator[Finding]:
    """A post-render entry whose `target:` selects nothing this app renders (a notice to generate: one file
    may serve apps that render different objects; here, in CI, worth a look)."""
    for result in apps:
        for where in result.unmatched:
            yield Finding(
                result.app.name,
                UNMATCHED_TARGET,
                ClusterResourceId("", "chartshare", "ChartShare", "", where),
                "the target matches no object this app renders, so the patch does nothing here; fix the "
                "target, or give the entry `apps:` naming the apps that render its objects",
            )


def policy_warnings(apps: Iterable[AppClaims]) -> Iterator[Finding]:
    """What the fleet policy took from an app's own say, as generate's notices say it: an object a policy
    entry decided although the app's chartshare.yaml has a rule for it (both lines named), and an object
    the app's project may not emit, stripped."""
    for result in apps:
        for claim in [*result.emitted.values(), *result.stripped.values()]:
            if ".forbid[" in claim.policy:
                yield Finding(
                    result.app.name,
                    POLICY_FORBIDDEN,
                    claim.id,
                    f"stripped: project {result.app.project} may not emit it ({claim.policy_at}: {claim.policy}); "
                    "if the app needs it, the platform team must emit it, or change the policy",
                    Together(
                        f"objects project {result.app.project} may not emit, stripped by the fleet policy",
                        f"{claim.policy_at}: {claim.policy}",
                        "if the app needs them, the platform team must emit them, or change the policy",
                    ),
                )
            elif claim.overrode:
                what = "protects" if ".protect[" in claim.policy else "decides"
                rule = "`protect: false` in " if what == "protects" else ""
                yield Finding(
                    result.app.name,
                    POLICY_OVERRIDE,
                    claim.id,
                    f"the fleet policy {what} it ({claim.policy_at}: {claim.policy}), so {rule}the app's own "
                    f"{claim.overrode} does not hold; remove that from chartshare.yaml, or ask the platform team",
                )


def replica_warnings(apps: Iterable[AppClaims], ignored: Sequence[IgnoreRule] = ()) -> Iterator[Finding]:
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
            ignoring = covered(
                [*application_rules(result.app.ignore_differences), *ignored], workload.id, "spec.replicas"
            )
            if ignoring and result.app.respect_ignore:
                continue  # neither the diff nor a sync touches the replicas the HPA sets
            key = workload.id
            entry: dict[str, Any] = {"group": key.group, "kind": key.kind, "name": key.name, "namespace": key.namespace}
            entry["jsonPointers"] = ["/spec/replicas"]
            snippet = _ignore_differences(entry, ["RespectIgnoreDifferences=true"])
            if ignoring:  # the diff is quiet, but each sync still writes the template's count
                message = (
                    f"sets spec.replicas while HorizontalPodAutoscaler {claim.id.name} scales it: ignoreDifferences "
                    "covers spec.replicas, but without RespectIgnoreDifferences=true in the Application's "
                    "syncPolicy.syncOptions every sync still resets the replica count; add that option"
                )
            else:
                message = (
                    f"sets spec.replicas while HorizontalPodAutoscaler {claim.id.name} scales it: every sync resets "
                    "the replica count and the app flaps OutOfSync. Leave replicas out of the template when "
                    "autoscaling is on, or add to the Application:\n" + snippet
                )
            yield Finding(result.app.name, HPA_REPLICAS, workload.id, message)


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
                EMPTY_CABUNDLE,
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
