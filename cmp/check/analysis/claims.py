"""What `check` knows of each app after rendering: the objects it would emit and those its rules strip.

A claim is one object as an app renders it, keyed by where it lands (destination cluster, group, kind,
namespace, name). Renders produce claims; the analysis, the warnings and the live comparison read them,
merged per app (an app with several sources claims the union) and indexed per object across the fleet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cmp.check.fleet.applications import Application
from cmp.model import ClusterResourceId

RENDERERS = ("chartshare", "helm", "kustomize", "directory")  # the renderers of check's sources; an app's
# row names the first of them its sources use


@dataclass(frozen=True, slots=True)
class Claim:
    """One object an app renders: its identity on the cluster, and the object itself."""

    id: ClusterResourceId  # namespace "" for cluster-scoped objects, the destination for namespaced ones without one
    obj: dict[str, Any]
    reason: str = ""  # for a stripped copy: why this app strips it
    top_level_owner: bool = False  # stripped because chartshare.yaml's top-level `owner:` names another app
    accepted: bool = False  # stripped by a rule that writes `others: strip`: the owner's copy serves this app
    rule: str = ""  # `apps/x/chartshare.yaml:12`: the rule that decided this copy (relative to the repository)
    renamed_from: str = ""  # an emitted copy under a name of its own: the name helm gave it
    protected: bool = False  # emitted with Prune=false or Prune=confirm: no sync with prune deletes it
    policy: str = ""  # the fleet policy entry that decided (or protected) this copy: `projects[1].rules[0]`
    policy_at: str = ""  # that entry's file and line, `chartshare-policy.yaml:15`
    overrode: str = ""  # the app's own rule the policy entry overrode, located (`apps/x/chartshare.yaml:6: rules[0]`)


Unstable = tuple[ClusterResourceId, tuple[str, ...]]  # an object of a render, and the fields that differ in another
# the fields of an app's Unstable when its templates call time or random functions but two renders agreed
TEMPLATE_CALLS = ("(its templates call time or random functions)",)


@dataclass(slots=True)
class AppClaims:
    """Everything one app renders, over all its sources."""

    app: Application
    renderers: list[str] = field(default_factory=list)
    emitted: dict[ClusterResourceId, Claim] = field(default_factory=dict)
    stripped: dict[ClusterResourceId, Claim] = field(default_factory=dict)
    unstable: list[Unstable] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # post-render targets that matched nothing
    complete: bool = True  # every source rendered: only then can "no longer emits" be trusted
    names_apps: bool = False  # it rendered nothing from files that name Argo CD objects
    governed: bool = False  # rendered under a fleet policy (`--policy`)
    policy: str | None = None  # the policy entry for its project (`projects[N]`); None: none applies


ByObject = dict[ClusterResourceId, dict[str, Claim]]  # per object: app name -> that app's copy


def by_object(apps: Iterable[AppClaims], *, emitted: bool) -> ByObject:
    """Per object on a cluster: the apps that emit it (or, with emitted=False, that render it at all)."""
    claims: ByObject = {}
    for result in apps:
        owned = result.emitted if emitted else {**result.stripped, **result.emitted}
        for key, claim in owned.items():
            claims.setdefault(key, {})[result.app.name] = claim
    return claims


def mapping_at(obj: Any, *keys: str) -> Mapping[str, Any]:
    """A nested mapping of an object, or an empty one when a chart wrote something else there."""
    found: Any = obj
    for key in keys:
        found = found.get(key) if isinstance(found, Mapping) else None
    return found if isinstance(found, Mapping) else {}
