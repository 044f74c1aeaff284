"""The Namespace hand-off: a Namespace that every app strips still carries labels somebody wanted.

When rules leave a chart's Namespace to nobody (a rule without owner that strips it, or `unowned: strip`),
its labels and annotations (istio-injection, pod-security levels...) would silently vanish. Argo CD can
create an Application's destination namespace itself (`CreateNamespace=true`) and set labels and
annotations on it with `syncPolicy.managedNamespaceMetadata`, by server-side apply and without a
tracking-id, so nothing contends for it or prunes it. This module writes that block, ready to paste under
the Application's `spec:`, for `generate`'s stderr and `check`'s warnings alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cmp import goyaml
from cmp.manifests import Resource
from cmp.model import Action, App
from cmp.ownership.outcome import Applied

# Keys that describe the object to Argo CD or helm, not the namespace: meaningless on a managed namespace.
DROPPED_PREFIXES = ("argocd.argoproj.io/", "helm.sh/", "meta.helm.sh/")


def orphaned(stripped: Sequence[Applied]) -> list[Resource]:
    """Namespaces with labels or annotations that this app strips and no rule gives to an owner."""
    return [
        applied.resource
        for applied in stripped
        if applied.decision.action is Action.STRIP
        and not applied.decision.owners
        and (applied.resource.group, applied.resource.kind) == ("", "Namespace")
        and (_kept(applied.resource.labels) or _kept(_annotations(applied.resource)))
    ]


def managed_namespace_metadata(namespace: Resource) -> str:
    """The `syncPolicy` block, indented as it sits under an Application's `spec:`."""
    block = sync_policy(namespace.metadata)
    return "".join(f"  {line}\n" for line in goyaml.dump(block).splitlines())


def sync_policy(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """`{"syncPolicy": ...}` creating the Namespace with the labels and annotations of its `metadata` that
    describe the namespace itself; from plain objects, for `check`, which holds no Resource."""
    kept: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        values = metadata.get(key)
        found = _kept(values) if isinstance(values, Mapping) else {}
        if found:
            kept[key] = found
    policy: dict[str, Any] = {"managedNamespaceMetadata": kept} if kept else {}
    policy["syncOptions"] = ["CreateNamespace=true"]
    return {"syncPolicy": policy}


def notices(stripped: Sequence[Applied], app: App) -> list[str]:
    """One notice per orphaned Namespace; for the app's destination namespace it carries the block."""
    found: list[str] = []
    for namespace in orphaned(stripped):
        decision = next(a.decision for a in stripped if a.resource is namespace)
        head = (
            f"notice: every app strips {namespace.id} ({decision.origin}: {decision.reason}), so its labels and "
            "annotations reach the cluster through no app"
        )
        if namespace.name == app.namespace:
            found.append(
                f"{head}; to let Argo CD create it with them, add this under spec: of the Application {app.name} "
                f"(merge with any syncOptions there):\n{managed_namespace_metadata(namespace).rstrip()}"
            )
        else:
            where = f"({app.namespace})" if app.namespace else "(none is set)"
            found.append(
                f"{head}; it is not this app's destination namespace {where}, so managedNamespaceMetadata cannot "
                "set them: give the Namespace an owner with a rule instead"
            )
    return found


def _annotations(resource: Resource) -> Mapping[str, Any]:
    annotations = resource.metadata.get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def _kept(values: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(key): _text(value)
        for key, value in values.items()
        if not str(key).startswith(DROPPED_PREFIXES) and value is not None
    }


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
