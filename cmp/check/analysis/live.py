"""Live objects against the fleet's renders: which objects adopting the rules would prune, and the fix.

Argo CD deletes, on an app's next sync with prune, every live object whose tracking-id names that app and
that the app no longer emits, unless `Prune=false` (or `Prune=confirm`) is already on the live object.
Handing an object from one app to another is therefore a prune risk until the live copy is annotated; the
report prints the `kubectl annotate` command that makes it safe, and tells the new owner when to sync.

Which app a live object belongs to depends on Argo CD's tracking method (util/argo/resource_tracking.go):
`annotation` (3.x's default) and `annotation+label` read the tracking-id annotation, `label` reads the
instance label. An object stamped with an installation ID other than this Argo CD's (`installationID` in
argocd-cm, none by default) belongs to another installation and is never taken for one of ours: Argo CD
skips such objects when it has an ID of its own, and check does so even in label mode, or when this Argo
CD has none, where the stamp still says another instance wrote it.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID, prune_safe, sync_options
from cmp.check.analysis.claims import AppClaims, ByObject, mapping_at
from cmp.check.analysis.findings import HANDOVER, Finding, Together
from cmp.check.fleet.applications import documents, items, place
from cmp.model import ClusterResourceId, ResourceId, split_api_version

INSTALLATION_ID = "argocd.argoproj.io/installation-id"
METHODS = ("annotation", "label", "annotation+label")
DEFAULT_LABEL_KEY = "app.kubernetes.io/instance"
# argocd-cm's keys for the three settings, in Tracking's field order
ARGOCD_CM_KEYS = ("application.resourceTrackingMethod", "application.instanceLabelKey", "installationID")


@dataclass(frozen=True, slots=True)
class Tracking:
    """How this Argo CD tells which app a live object belongs to."""

    method: str = "annotation"
    label_key: str = DEFAULT_LABEL_KEY
    installation_id: str = ""


ANNOTATION_TRACKING = Tracking()  # Argo CD 3.x's defaults


def read_argocd_cm(path: Path, errors: list[str]) -> dict[str, str]:
    """The tracking settings an argocd-cm dump sets (`kubectl -n argocd get cm argocd-cm -o yaml`), by
    Tracking field name."""
    if not path.is_file():
        errors.append(f"--argocd-cm {path}: no such file")
        return {}
    for number, count, document in documents(path, errors):
        for suffix, obj in items(document):
            metadata = mapping_at(obj, "metadata")
            if not isinstance(obj, dict) or obj.get("kind") != "ConfigMap" or metadata.get("name") != "argocd-cm":
                continue
            data = mapping_at(obj, "data")
            found = {
                field: str(data[key])
                for field, key in zip(("method", "label_key", "installation_id"), ARGOCD_CM_KEYS, strict=True)
                if data.get(key) not in (None, "")
            }
            if found.get("method", METHODS[0]) not in METHODS:
                where = place(path, number, count, suffix)
                errors.append(
                    f"{where}: data.{ARGOCD_CM_KEYS[0]} {found['method']!r} is not one of {', '.join(METHODS)}"
                )
            return found
    errors.append(f"--argocd-cm {path}: no ConfigMap named argocd-cm in it")
    return {}


@dataclass(frozen=True, slots=True)
class PruneRisk:
    """A live object `app` would delete on its next sync with prune, and the command that prevents it."""

    id: ClusterResourceId
    app: str
    fix: str


def prune_risks(
    live: Sequence[Mapping[str, Any]],
    apps: Mapping[str, AppClaims],
    emitters: ByObject,
    how: Tracking = ANNOTATION_TRACKING,
) -> tuple[list[PruneRisk], list[Finding]]:
    """Live objects tracked by an app that will no longer emit them: deleted on its next sync with prune.
    Also one hand-over note for each app that emits such an object instead."""
    risks: list[PruneRisk] = []
    handovers: list[Finding] = []
    for obj in live:
        tracked = tracking(obj, how)
        if tracked is None:
            continue
        tracker, resource = tracked
        result = apps.get(tracker)
        # the tracker's cluster; for a tracker outside this fleet, whichever cluster a fleet app emits it on
        clusters = {result.app.cluster} if result is not None else {r.app.cluster for r in apps.values()}
        found = {(key, app) for cluster in clusters for key, app in _emitting(emitters, cluster, resource)}
        new_owners = sorted({app for _, app in found})
        if tracker in new_owners:
            continue
        protected = prune_safe(mapping_at(obj, "metadata", "annotations"))
        if result is not None and result.complete and not protected:
            key = ClusterResourceId.on(result.app.cluster, resource)
            risks.append(PruneRisk(key, tracker, annotate_command(obj, resource)))
        for owner in new_owners:
            key = min(key for key, app in found if app == owner)
            handovers.append(_handover(owner, key, tracker, outside=result is None, protected=protected))
    return risks, handovers


def _handover(owner: str, key: ClusterResourceId, tracker: str, *, outside: bool, protected: bool) -> Finding:
    """What `owner` must know before it takes over a live object that `tracker` tracks."""
    if outside:
        one = (
            f"is tracked by {tracker}, an app outside this fleet, and {owner} emits it too: the two will fight "
            f"over it unless {tracker} stops emitting it"
        )
        headline = f"live objects that {tracker}, an app outside this fleet, tracks and {owner} emits too"
        advice = f"The two will fight over them unless {tracker} stops emitting them"
    elif protected:
        one = (
            f"is tracked by {tracker}, which no longer emits it; it carries Prune=false, so nothing is deleted: "
            f"sync {owner} to take it over"
        )
        headline = f"live objects {tracker} tracks and no longer emits, protected by Prune=false"
        advice = f"Nothing is deleted: sync {owner} to take them over"
    else:
        one = (
            f"is tracked by {tracker}, which no longer emits it: annotate it first (see PRUNE RISKS), then sync "
            f"{owner} to take it over"
        )
        headline = f"live objects {tracker} tracks and no longer emits"
        advice = f"Annotate them first (see PRUNE RISKS), then sync {owner} to take them over"
    together = Together(headline, "", advice)
    return Finding(owner, HANDOVER, key, f"the live {key} {one}", together)


def _emitting(emitters: ByObject, cluster: str, resource: ResourceId) -> Iterator[tuple[ClusterResourceId, str]]:
    """(object, app) for the apps emitting the live object; a live object without a namespace matches
    whatever namespace a claim was given (a cluster-scoped kind check could not place is still the same
    object)."""
    for key, claims in emitters.items():
        same = (key.cluster, key.group, key.kind, key.name) == (cluster, resource.group, resource.kind, resource.name)
        if same and (not resource.namespace or key.namespace == resource.namespace):
            for app in claims:
                yield key, app


def tracking(obj: Mapping[str, Any], how: Tracking = ANNOTATION_TRACKING) -> tuple[str, ResourceId] | None:
    """(app, object) for a live object this Argo CD tracks; None for one it does not (untracked, another
    installation's, or a tracking-id copied from another object, which Argo CD ignores)."""
    metadata = mapping_at(obj, "metadata")
    annotations = mapping_at(obj, "metadata", "annotations")
    if str(annotations.get(INSTALLATION_ID) or "") != how.installation_id:
        return None
    object_group, _ = split_api_version(str(obj.get("apiVersion") or ""))
    object_namespace = str(metadata.get("namespace") or "")
    itself = ResourceId(object_group, str(obj.get("kind") or ""), object_namespace, str(metadata.get("name") or ""))
    if how.method == "label":
        value = mapping_at(obj, "metadata", "labels").get(how.label_key)
        return (value, itself) if isinstance(value, str) and value else None
    value = annotations.get(TRACKING_ID)
    if not isinstance(value, str):
        return None
    parts = value.split(":")
    if len(parts) != 3 or parts[1].count("/") != 1 or parts[2].count("/") != 1:
        return None
    app, (group, kind), (namespace, name) = parts[0], parts[1].split("/"), parts[2].split("/")
    if (group, kind, name) != (itself.group, itself.kind, itself.name):
        return None
    if object_namespace and namespace != object_namespace:
        return None
    return app, itself


def annotate_command(obj: Mapping[str, Any], resource: ResourceId) -> str:
    """`kubectl annotate` adding Prune=false to the live object's sync-options, keeping the ones it has."""
    options = [
        option for option in sync_options(mapping_at(obj, "metadata", "annotations")) if not option.startswith("Prune=")
    ] + ["Prune=false"]
    kind = resource.kind.lower() + (f".{resource.group}" if resource.group else "")
    words = ["kubectl", "annotate"]
    if resource.namespace:
        words += ["-n", resource.namespace]
    words += [f"{kind}/{resource.name}", f"{SYNC_OPTIONS}={','.join(options)}", "--overwrite"]
    return " ".join(shlex.quote(word) for word in words)
