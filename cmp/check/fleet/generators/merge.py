"""The merge generator: the first child's parameter sets, each overlaid by the sets of later children that
agree with it on every merge key; sets of later children that match none are dropped, as in Argo CD."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmp.check.fleet.generators.context import Context
from cmp.check.fleet.generators.matrix import Children
from cmp.check.fleet.generators.params import GeneratorError, Params, combine_overriding, deep_merge, merge_key


def generate(spec: Mapping[str, Any], where: str, context: Context, children: Children) -> list[Params]:
    entries = spec.get("generators")
    if not isinstance(entries, list) or len(entries) < 2:
        raise GeneratorError(f"{where}.generators must hold at least two generators")
    keys = spec.get("mergeKeys")
    if not isinstance(keys, list) or not keys or not all(isinstance(key, str) for key in keys):
        raise GeneratorError(f"{where}.mergeKeys must name at least one parameter")
    sets = [children(entry, f"{where}.generators[{position}]", None) for position, entry in enumerate(entries)]
    merged = _by_key(sets[0], keys, f"{where}.generators[0]")
    for position, later in enumerate(sets[1:], 1):
        overrides = _by_key(later, keys, f"{where}.generators[{position}]")
        for key, base in merged.items():
            if key in overrides:
                override = overrides[key]
                merged[key] = deep_merge(base, override) if context.go_template else combine_overriding(base, override)
    return list(merged.values())


def _by_key(sets: list[Params], keys: list[str], where: str) -> dict[str, Params]:
    found: dict[str, Params] = {}
    for params in sets:
        key = merge_key(params, keys)
        if key in found:
            raise GeneratorError(
                f"{where} makes two parameter sets with the same merge keys {key}; each must be unique"
            )
        found[key] = params
    return found
