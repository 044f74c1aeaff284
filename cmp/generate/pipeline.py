"""`generate` end to end: config -> helm -> resources -> decisions -> rewritten output.

`process` is the pure heart (resources in, resources out) shared by `generate` and `check`; `generate` adds
the edges: reading chartshare.yaml and running helm.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from cmp import manifests
from cmp.errors import ConfigError, ManifestError, RuleError
from cmp.helm import render
from cmp.inputs.config import Config, confine_tree, resolve_path
from cmp.manifests import Resource
from cmp.model import Action, App, Decision, ResourceId
from cmp.ownership import managed_namespace as handoff
from cmp.ownership import rules
from cmp.ownership.decide import decide, matching_rule
from cmp.ownership.rewrite import Applied, aggregation_notices, apply, describe, preload
from cmp.ownership.rules import Ownership
from cmp.ownership.scope import Scope, ScopeTable, crd_scopes


class Outcome(NamedTuple):
    """What one app emits and why; `notices` are stderr lines that are not errors."""

    app: App
    rendered: int
    emitted: list[Applied]
    stripped: list[Applied]
    notices: list[str]

    @property
    def resources(self) -> list[Resource]:
        return [applied.resource for applied in self.emitted]


def process(resources: list[Resource], ownership: Ownership | None, app: App) -> Outcome:
    """Apply chartshare.yaml to a parsed render; without one, pass everything through."""
    _refuse_duplicates(resources)
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
    decisions = decide(resources, ownership, app.name, scopes, app.namespace)
    emitted, stripped = apply(resources, decisions, app, ownership=ownership, scopes=scopes)
    if not emitted and not ownership.allow_empty:
        cause = "helm rendered no resources" if not resources else f"the rules strip all {len(resources)} resources"
        raise RuleError(
            f"{cause}; refusing to send Argo CD an empty app (it would prune everything); "
            "set allowEmpty: true in chartshare.yaml if that is intended"
        )
    notices = aggregation_notices(emitted) + handoff.notices(stripped, app)
    return Outcome(
        app, len(resources), emitted, stripped, notices + _unknown_scope_notices(resources, ownership, scopes, app)
    )


_PASS = Decision(Action.KEEP, "no chartshare.yaml")


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


def load_ownership(config: Config) -> Ownership | None:
    if config.config_path is None:
        return None
    return rules.load(config.config_path, _display(config.config_path, config.repo_root))


def chart_dir(config: Config, ownership: Ownership | None) -> Path:
    """The chart folder, confined to the repository with every symlink in it."""
    if ownership is None:
        confine_tree(config.app_dir, config.repo_root, "chart")
        return config.app_dir
    chart = resolve_path(ownership.chart, ownership.path.parent, config.repo_root, f"{ownership.path.name}: chart")
    if not (chart / "Chart.yaml").is_file():
        raise ConfigError(f"{_display(ownership.path, config.repo_root)}: chart: {chart} holds no Chart.yaml")
    confine_tree(chart, config.repo_root, f"{ownership.path.name}: chart")
    return chart


def generate(config: Config) -> Outcome:
    """Render the app's chart and apply its ownership rules."""
    ownership = load_ownership(config)
    chart = chart_dir(config, ownership)
    if ownership is None and not (chart / "Chart.yaml").is_file():
        raise ConfigError(f"{chart} holds neither chartshare.yaml nor Chart.yaml; point the app at a chart")
    stream = render.run_helm(config.helm, render.invocation(config, chart), config.timeout, lambda: preload(ownership))
    return process(manifests.parse(stream), ownership, App(config.app_name, config.release, config.namespace))


def _display(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def summary(outcome: Outcome) -> list[str]:
    """The stderr report: one summary line, then one line per stripped or changed resource."""
    protected = [a for a in outcome.emitted if a.protected]
    changed = [a for a in outcome.emitted if a.resource.changed and not a.protected]
    lines = [
        f"{outcome.app.name}: {outcome.rendered} rendered, {len(outcome.emitted)} emitted, "
        f"{len(outcome.stripped)} stripped, {len(protected)} protected, {len(changed)} changed"
    ]
    lines += [f"  stripped {a.resource.id} ({a.decision.origin}: {a.decision.reason})" for a in outcome.stripped]
    lines += [
        f"  protected {a.resource.id} ({a.decision.origin}: {a.decision.reason})"
        for a in protected
        if describe(a) is None
    ]
    for applied in outcome.emitted:  # renamed, fixed, patched: one line each, in helm's order
        line = describe(applied)
        if line is None and applied.resource.changed and not applied.protected:
            line = f"changed {applied.resource.id} ({applied.decision.origin}: {applied.decision.reason})"
        if line is not None:
            lines.append(f"  {line}")
    return lines + outcome.notices
