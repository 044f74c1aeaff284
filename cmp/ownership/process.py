"""The pure heart of `generate` and `check`: a parsed render and chartshare.yaml in, what one app emits out.

No I/O: the edges (reading chartshare.yaml, running helm, writing the output) are cmp/generate's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cmp.errors import ManifestError, RuleError
from cmp.inputs.paths import CONFIG_FILE
from cmp.manifests import Resource
from cmp.model import Action, App, Decision, ResourceId
from cmp.ownership import governed, managed_namespace
from cmp.ownership.bindings import refuse_unbinding
from cmp.ownership.decide import matching_rule
from cmp.ownership.outcome import Applied, Outcome
from cmp.ownership.policy import ProjectPolicy
from cmp.ownership.report import aggregation_notices
from cmp.ownership.rewrite.apply import apply_decisions
from cmp.ownership.rules import Ownership
from cmp.ownership.scope import Scope, ScopeTable, crd_scopes


def process(
    resources: list[Resource], ownership: Ownership | None, app: App, policy: ProjectPolicy | None = None
) -> Outcome:
    """Apply the fleet policy's entry for the app's project (if any) and chartshare.yaml to a parsed render;
    with neither, pass everything through."""
    _refuse_duplicates(resources)
    own = ownership
    if ownership is None and policy is not None:
        ownership = _PASS_THROUGH  # the policy decides what it names; everything else passes as without a file
    if ownership is None:
        if not resources:
            raise RuleError(
                "helm rendered no resources; refusing to send Argo CD an empty app (it would prune "
                "everything); add a chartshare.yaml with allowEmpty: true if that is intended"
            )
        return Outcome(app, len(resources), [Applied(r, _PASS) for r in resources], [], [])
    scopes = ScopeTable.build(
        crd_scopes(r.identity() for r in resources), ownership.cluster_scoped_kinds, ownership.namespaced_kinds
    )
    rendered = len(resources)
    post_lines: list[str] = []
    unmatched: tuple[str, ...] = ()
    if not ownership.post_render.empty or ownership.post_render.notices:
        from cmp.postrender.apply import post_render

        def cluster(group: str, kind: str) -> bool:
            return scopes.of(group, kind) is Scope.CLUSTER

        done = post_render(resources, ownership.post_render, app.name, cluster)
        resources, post_lines, unmatched = done.resources, done.notices + done.changes, tuple(done.unmatched)
        _refuse_duplicates(resources)
    decisions = governed.decide(resources, ownership, app.name, scopes, app.namespace, policy)
    emitted, stripped = apply_decisions(resources, decisions, app, ownership=ownership, scopes=scopes)
    refuse_unbinding(emitted, stripped, ownership, app, scopes)
    if not emitted and not ownership.allow_empty:
        cause = "helm rendered no resources" if not resources else f"the rules strip all {len(resources)} resources"
        raise RuleError(
            f"{cause}; refusing to send Argo CD an empty app (it would prune everything); "
            "set allowEmpty: true in chartshare.yaml if that is intended"
        )
    notices = post_lines + governed.override_notices(resources, decisions)
    notices += aggregation_notices(emitted) + managed_namespace.notices(stripped, app)
    unknown = _unknown_scope_notices(resources, ownership, scopes, app) if own is not None else []
    return Outcome(app, rendered, emitted, stripped, notices + unknown, unmatched)


_PASS = Decision(Action.KEEP, "no chartshare.yaml")
_PASS_THROUGH = Ownership(Path(CONFIG_FILE), ".", (), Action.KEEP, False, (), (), (), ())


def _refuse_duplicates(resources: Sequence[Resource]) -> None:
    seen: dict[ResourceId, Resource] = {}
    for resource in resources:
        if not resource.name:
            continue
        first = seen.setdefault(resource.id, resource)
        if first is not resource:
            raise ManifestError(
                f"{resource.id} is rendered twice (templates {first.source or '?'} and {resource.source or '?'}); "
                "Argo CD can track only one: make the names differ or render it once"
            )


def _unknown_scope_notices(
    resources: Sequence[Resource], ownership: Ownership, scopes: ScopeTable, app: App
) -> list[str]:
    unknown = sorted(
        {
            f"{r.group}/{r.kind}" if r.group else r.kind
            for r in resources
            if scopes.of(r.group, r.kind) is Scope.UNKNOWN
            and matching_rule(r, ownership, scopes, app.namespace) is None
        }
    )
    return [
        f"notice: kind {kind} has no known scope and is treated as namespaced; if it is cluster-scoped, "
        f"list it under clusterScopedKinds: in chartshare.yaml (or namespacedKinds: to silence this)"
        for kind in unknown
    ]
