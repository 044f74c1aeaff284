"""The matrix generator: every parameter set of its first child with every set of its second, which may
use the first one's parameters in its own fields (a git generator reading `{{path}}/config.json`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cmp.check.fleet.generators.context import Context
from cmp.check.fleet.generators.params import GeneratorError, Params, combine_strict, deep_merge

# (child entry, where, parameters of the first child or None) -> the child's parameter sets
Children = Callable[[Any, str, Params | None], list[Params]]


def generate(spec: Mapping[str, Any], where: str, context: Context, children: Children) -> list[Params]:
    entries = spec.get("generators")
    if not isinstance(entries, list) or len(entries) != 2:
        count = len(entries) if isinstance(entries, list) else 0
        raise GeneratorError(f"{where}.generators holds {count} generators; a matrix combines exactly two")
    found: list[Params] = []
    for first in children(entries[0], f"{where}.generators[0]", None):
        for second in children(entries[1], f"{where}.generators[1]", first):
            if context.go_template:  # the first child's values win
                found.append(deep_merge(deep_merge({}, second), first))
            else:
                try:
                    found.append(combine_strict(first, second))
                except GeneratorError as problem:
                    raise GeneratorError(f"{where}: {problem}") from None
    return found
