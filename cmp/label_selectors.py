"""Label selectors as Kubernetes evaluates them: requirements of a key, an operator and values, all of
which must hold.

check's ApplicationSet generators read them from `matchLabels`/`matchExpressions`
(cmp/check/fleet/generators/selector.py), post-render targets from kustomize's text form
(cmp/postrender/select.py); both evaluate them here, with the operators of `matchExpressions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "In", "NotIn", "Exists", "DoesNotExist"
OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)

Requirement = tuple[str, str, frozenset[str]]  # key, one of OPERATORS, values


def matches(requirements: Iterable[Requirement], labels: Mapping[str, str]) -> bool:
    """Whether `labels` satisfy every requirement (`matchLabels` entries are `In` one value)."""
    for key, operator, values in requirements:
        present = key in labels
        if operator == IN and not (present and labels[key] in values):
            return False
        if operator == NOT_IN and present and labels[key] in values:
            return False
        if operator == EXISTS and not present:
            return False
        if operator == DOES_NOT_EXIST and present:
            return False
    return True
