"""Label selectors, as the clusters generator applies them to cluster Secrets and every generator's
`selector` applies them to its parameter sets (flattened to strings, so `values.tier` is a label key).

Argo CD's own copy of LabelSelectorAsSelector for parameters puts no limit on label values (a cluster URL is
one), so none is put here either; only the structure is checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cmp import label_selectors
from cmp.check.fleet.generators.params import GeneratorError
from cmp.label_selectors import OPERATORS, Requirement


@dataclass(frozen=True, slots=True)
class Selector:
    """matchLabels and matchExpressions, all of which must hold."""

    requirements: tuple[Requirement, ...]  # matchLabels as `In` one value, then matchExpressions

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return label_selectors.matches(self.requirements, labels)


def read_selector(raw: Any, where: str) -> Selector:
    """A LabelSelector as written; GeneratorError names the field Argo CD would refuse."""
    if raw is None:
        return Selector(())
    if not isinstance(raw, Mapping):
        raise GeneratorError(f"{where} must be a mapping of matchLabels and matchExpressions")
    unknown = [key for key in raw if key not in ("matchLabels", "matchExpressions")]
    if unknown:
        raise GeneratorError(
            f"{where}: unknown field {unknown[0]!r}; a selector holds matchLabels and matchExpressions"
        )
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        raise GeneratorError(f"{where}.matchLabels must map label keys to values")
    requirements: list[Requirement] = [
        (str(key), label_selectors.IN, frozenset({_label_value(value)})) for key, value in match_labels.items()
    ]
    for position, entry in enumerate(raw.get("matchExpressions") or []):
        place = f"{where}.matchExpressions[{position}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("key"), str):
            raise GeneratorError(f"{place} needs a key")
        operator = entry.get("operator")
        if operator not in OPERATORS:
            raise GeneratorError(f"{place}.operator {operator!r} is not one of {', '.join(OPERATORS)}")
        values = entry.get("values") or []
        if not isinstance(values, list):
            raise GeneratorError(f"{place}.values must be a list")
        if operator in ("In", "NotIn") and not values:
            raise GeneratorError(f"{place}: operator {operator} needs at least one value")
        if operator in ("Exists", "DoesNotExist") and values:
            raise GeneratorError(f"{place}: operator {operator} takes no values")
        requirements.append((entry["key"], str(operator), frozenset(_label_value(value) for value in values)))
    return Selector(tuple(requirements))


def _label_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
