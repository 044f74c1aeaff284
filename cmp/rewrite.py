"""Carrying out decisions: strip, protect (and, later, rename and patch) the resources one app emits.

Only the resources a decision really changes are marked changed; the rest keep helm's bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import RuleError
from .model import Action, App, Decision, Resource

SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
PROTECTION = ("Prune=false", "Delete=false")


@dataclass(frozen=True, slots=True)
class Applied:
    """A resource this app emits, with the decision that shaped it and what was actually done."""

    resource: Resource
    decision: Decision
    protected: bool = False


def apply(
    resources: Sequence[Resource], decisions: Sequence[Decision], app: App
) -> tuple[list[Applied], list[Applied]]:
    """(emitted, stripped), each in helm's order; raises RuleError for a `fail` decision."""
    emitted: list[Applied] = []
    stripped: list[Applied] = []
    for resource, decision in zip(resources, decisions, strict=True):
        if decision.action is Action.FAIL:
            raise RuleError(_refusal(resource, decision, app))
        if decision.action is Action.STRIP:
            stripped.append(Applied(resource, decision))
            continue
        if decision.action is Action.RENAME or decision.patch:
            what = "others: rename" if decision.action is Action.RENAME else "patch"
            raise RuleError(f"{decision.origin} uses `{what}`, which is not supported yet; remove it for now")
        protected = decision.protect and protect(resource)
        emitted.append(Applied(resource, decision, protected))
    return emitted, stripped


def protect(resource: Resource) -> bool:
    """Merge Prune=false,Delete=false into the sync-options annotation, keeping any Prune=/Delete= already
    set (Prune=confirm stays). Returns whether the object changed."""
    metadata = resource.obj.get("metadata")
    if not isinstance(metadata, dict):
        return False
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
    options = [option.strip() for option in str(annotations.get(SYNC_OPTIONS) or "").split(",") if option.strip()]
    present = {option.partition("=")[0] for option in options}
    missing = [option for option in PROTECTION if option.partition("=")[0] not in present]
    if not missing:
        return False
    annotations[SYNC_OPTIONS] = ",".join(options + missing)
    metadata["annotations"] = annotations
    resource.mark_changed(metadata_only=True)
    return True


def _refusal(resource: Resource, decision: Decision, app: App) -> str:
    where = f" (template {resource.source})" if resource.source else ""
    if decision.rule is None:
        return (
            f"{resource.id}{where} is cluster-scoped and no rule or owner in chartshare.yaml covers it; "
            "add a rule with an owner, a top-level `owner:`, or set `unowned: keep` or `unowned: strip`"
        )
    return f"app {app.name} may not emit {resource.id}{where}: {decision.origin} says others: fail ({decision.reason})"
