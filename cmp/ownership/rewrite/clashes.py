"""After renames and patches, no two emitted objects may share one identity: Argo CD tracks only one."""

from __future__ import annotations

from collections.abc import Sequence

from cmp.errors import RuleError
from cmp.manifests import Resource
from cmp.model import App, Decision, ResourceId
from cmp.ownership.decide import landing_namespace
from cmp.ownership.outcome import rule_label
from cmp.ownership.rules import Ownership
from cmp.ownership.scope import ScopeTable


def refuse_clashes(
    emitted: Sequence[tuple[Resource, Decision]],
    renamed_from: dict[int, str],
    patched: dict[int, int],
    app: App,
    scopes: ScopeTable,
    ownership: Ownership | None,
) -> None:
    """A rename or patch must not give two emitted objects one identity: Argo CD tracks only one."""
    seen: dict[ResourceId, tuple[Resource, Decision]] = {}
    for resource, decision in emitted:
        if not resource.name:
            continue
        identity = ResourceId(
            resource.group, resource.kind, landing_namespace(resource, scopes, app.namespace), resource.name
        )
        first = seen.setdefault(identity, (resource, decision))
        if first[0] is resource:
            continue
        culprit = next(
            (pair for pair in (first, (resource, decision)) if pair[0].index in renamed_from or patched[pair[0].index]),
            (resource, decision),
        )
        raise RuleError(
            f"{rule_label(culprit[1], ownership)}: after renames and patches, two objects would both be {identity} "
            f"(templates {first[0].source or '?'} and {resource.source or '?'}); Argo CD can track only one: "
            "change renameTo or the rule's match"
        )
