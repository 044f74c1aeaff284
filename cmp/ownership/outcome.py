"""What one app emits and why: the records the rewrite steps fill in and the report reads."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from cmp.manifests import Resource
from cmp.model import App, Decision

if TYPE_CHECKING:
    from cmp.ownership.rules import Ownership


class Fix(NamedTuple):
    """One reference field rewritten to follow a rename."""

    pointer: str
    old: str
    new: str


class Applied(NamedTuple):
    """A resource this app emits, with the decision that shaped it and what was actually done."""

    resource: Resource
    decision: Decision
    protected: bool = False
    renamed_from: str | None = None  # the name helm gave it, when this app emits it under another
    fixed: tuple[Fix, ...] = ()
    patched: int = 0  # JSON Patch operations applied
    kept_name: bool = False  # a rename was asked for, but the name already has the form renameTo gives


class Outcome(NamedTuple):
    """What one app emits and why; `notices` are stderr lines that are not errors."""

    app: App
    rendered: int
    emitted: list[Applied]
    stripped: list[Applied]
    notices: list[str]
    unmatched: tuple[str, ...] = ()  # post-render entries whose target matched nothing (`patches[N]`, located)

    @property
    def resources(self) -> list[Resource]:
        return [applied.resource for applied in self.emitted]


def rule_label(decision: Decision, ownership: Ownership | None) -> str:
    """`apps/x/chartshare.yaml:12: rules[1]` (the policy file's entry for a policy rule's decision), or the
    decision's origin without a file."""
    if decision.rule is None and decision.policy is not None:
        return decision.policy.label
    return ownership.rule_label(decision.rule) if ownership is not None else decision.origin
