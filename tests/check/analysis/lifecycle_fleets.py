"""Small fleets for the lifecycle model's tests: an app at the base revision and now, what it renders of a
few objects at each (and, removed, its last spec at the new revision), and the live objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID
from cmp.check.analysis.claims import AppClaims, Claim
from cmp.check.analysis.lifecycle import LastSpecs
from cmp.check.fleet.applications import Application, Lifetime
from cmp.model import ClusterResourceId

CLUSTER = "https://kubernetes.default.svc"
NAMESPACE = ClusterResourceId(CLUSTER, "", "Namespace", "", "team")
ROLE = ClusterResourceId(CLUSTER, "rbac.authorization.k8s.io", "ClusterRole", "", "reader")
CRD = ClusterResourceId(CLUSTER, "apiextensions.k8s.io", "CustomResourceDefinition", "", "widgets.example.io")
CONFIGMAP = ClusterResourceId(CLUSTER, "", "ConfigMap", "team", "settings")
KEEP = "helm.sh/resource-policy: keep"
AUTOMATED = Lifetime(automated=True, auto_prune=True)  # in `options`: the copy carries helm's keep policy too


def obj(key: ClusterResourceId, options: str = "", tracker: str | None = None) -> dict[str, Any]:
    """The object as an app renders it (or as it is live, with `tracker`)."""
    annotations: dict[str, str] = {}
    sync = ",".join(part for part in options.split(",") if part and part != KEEP)
    if sync:
        annotations[SYNC_OPTIONS] = sync
    if KEEP in options:
        annotations["helm.sh/resource-policy"] = "keep"
    if tracker is not None:
        annotations[TRACKING_ID] = f"{tracker}:{key.group}/{key.kind}:{key.namespace or 'team'}/{key.name}"
    metadata: dict[str, Any] = {"name": key.name, "annotations": annotations}
    if key.namespace:
        metadata["namespace"] = key.namespace
    return {"apiVersion": f"{key.group}/v1" if key.group else "v1", "kind": key.kind, "metadata": metadata}


@dataclass
class App:
    """One app: `base` and `now` map an object to "emit", "emit:<sync-options>" or "strip" (absent: the app
    does not render it; `now=None`: the change removes the app); `last` is a removed app's last spec at the
    new revision, likewise, or "stuck" (it does not render there), or None (not rendered here)."""

    name: str
    base: dict[ClusterResourceId, str] | None = field(default_factory=dict)
    now: dict[ClusterResourceId, str] | None = field(default_factory=dict)
    last: dict[ClusterResourceId, str] | str | None = None
    lifetime: Lifetime = AUTOMATED
    now_lifetime: Lifetime | None = None  # its spec at the new revision, when it differs
    parent: str | None = None


def claims(app: App, rendered: dict[ClusterResourceId, str], lifetime: Lifetime) -> AppClaims:
    application = Application(app.name, f"{app.name}.yaml", "default", CLUSTER, "team", (), lifetime, app.parent)
    result = AppClaims(application)
    for key, state in rendered.items():
        kind, _, options = state.partition(":")
        (result.emitted if kind == "emit" else result.stripped)[key] = Claim(key, obj(key, options))
    return result


def fleets(apps: list[App]) -> tuple[dict[str, AppClaims], dict[str, AppClaims], LastSpecs]:
    """The apps at the base revision, now, and the removed apps' last specs."""
    before = {app.name: claims(app, app.base, app.lifetime) for app in apps if app.base is not None}
    after = {app.name: claims(app, app.now, app.now_lifetime or app.lifetime) for app in apps if app.now is not None}
    rendered = {
        app.name: claims(app, app.last, app.lifetime) for app in apps if app.now is None and isinstance(app.last, dict)
    }
    stuck = {app.name: "its source path is gone" for app in apps if app.now is None and app.last == "stuck"}
    return before, after, LastSpecs(rendered, stuck)
