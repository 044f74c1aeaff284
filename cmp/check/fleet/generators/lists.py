"""The list generator: one parameter set per element (`elements`, then `elementsYaml`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from cmp import goyaml
from cmp.check.fleet import appsets as templating
from cmp.check.fleet.appsets import TemplateError
from cmp.check.fleet.generators.context import Context
from cmp.check.fleet.generators.params import GeneratorError, Params


def generate(spec: Mapping[str, Any], where: str, context: Context) -> list[Params]:
    """Each element as it is (goTemplate) or flattened to strings, `values.k` for its `values` map."""
    elements = spec.get("elements") or []
    if not isinstance(elements, list):
        raise GeneratorError(f"{where}.elements must be a list")
    extra = spec.get("elementsYaml")
    if extra:
        try:
            parsed = goyaml.load(str(extra))
        except yaml.YAMLError:
            raise GeneratorError(f"{where}.elementsYaml is not valid YAML") from None
        if not isinstance(parsed, list):
            raise GeneratorError(f"{where}.elementsYaml must hold a list")
        elements = [*elements, *parsed]
    found: list[Params] = []
    for position, element in enumerate(elements):
        if not isinstance(element, Mapping):
            raise GeneratorError(f"{where}.elements[{position}] must be a mapping")
        if context.go_template:
            found.append(dict(element))
            continue
        try:
            found.append(templating.flat_params(element))
        except TemplateError as problem:
            raise GeneratorError(f"{where}.elements[{position}]: {problem}") from None
    return found
