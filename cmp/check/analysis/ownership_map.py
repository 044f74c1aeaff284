"""The ownership map: every object two or more apps render, and what each of them does with it.

A platform engineer deciding who owns forty shared ClusterRoles reads a grid faster than forty paragraphs:
one row per object, one cell per app (emits it, protected or not; strips it; emits its own renamed copy),
the rule that decided each cell, and whether the row is a conflict. Pure over claims, so a merge of shards'
documents draws the same map as a single run.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from cmp.check.analysis.claims import AppClaims
from cmp.model import ClusterResourceId

EMITS, STRIPS, RENAMES = "emits", "strips", "renames"


@dataclass(frozen=True, slots=True)
class Cell:
    """What one app does with one shared object."""

    app: str
    action: str  # EMITS, STRIPS or RENAMES
    rule: str = ""  # `apps/x/chartshare.yaml:12`, the rule that decided it; "" when no rule did
    protected: bool = False  # the emitted copy carries Prune=false (or Prune=confirm)
    renamed_to: str = ""  # RENAMES: the name of the app's own copy
    policy: str = ""  # the fleet policy entry that decided (or protected) it, `projects[1].rules[0]`
    policy_at: str = ""  # that entry's file and line


@dataclass(frozen=True, slots=True)
class Shared:
    """One object several apps render, their cells (by app name), and whether it is a conflict."""

    id: ClusterResourceId
    cells: tuple[Cell, ...]
    conflict: bool


def ownership_map(apps: Iterable[AppClaims], conflicts: Collection[ClusterResourceId]) -> tuple[Shared, ...]:
    """The rows of the map, sorted by object; a renamed copy counts where helm rendered it (its first name)."""
    rendered: dict[ClusterResourceId, dict[str, Cell]] = {}
    for result in apps:
        name = result.app.name
        for key, claim in result.emitted.items():
            if claim.renamed_from:
                original = key._replace(name=claim.renamed_from)
                cell = Cell(name, RENAMES, claim.rule, claim.protected, key.name, claim.policy, claim.policy_at)
                rendered.setdefault(original, {})[name] = cell
            else:
                rendered.setdefault(key, {})[name] = Cell(
                    name, EMITS, claim.rule, claim.protected, policy=claim.policy, policy_at=claim.policy_at
                )
        for key, claim in result.stripped.items():
            rendered.setdefault(key, {}).setdefault(
                name, Cell(name, STRIPS, claim.rule, policy=claim.policy, policy_at=claim.policy_at)
            )
    return tuple(
        Shared(key, tuple(cells[app] for app in sorted(cells)), key in conflicts)
        for key, cells in sorted(rendered.items())
        if len(cells) > 1
    )


def rule_of(rows: Iterable[Shared], app: str, key: ClusterResourceId) -> str:
    """The rule that decided an app's copy of a shared object ("" when none did, or it is not shared)."""
    for row in rows:
        if row.id == key:
            return next((cell.rule for cell in row.cells if cell.app == app), "")
    return ""
