"""Generator parameters as Argo CD builds and combines them, in both of its templating styles.

Without goTemplate every parameter is a string and nested data is flattened to dotted keys (`a.b`,
`list.0`), printed the way Go's fmt prints what encoding/json decoded; with goTemplate parameters keep
their shape. The git generator's path parameters, the `values` a generator templates from its own
parameters, and the two ways matrix and merge combine parameter sets (strict, or later wins) live here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cmp.check.fleet import appsets as templating

Params = dict[str, Any]

MAX_DNS_NAME = 253
_NOT_DNS = re.compile(r"[^-a-z0-9.]")


class GeneratorError(Exception):
    """A generator Argo CD itself would fail on; the ApplicationSet makes no Application."""


def sanitize_name(name: str) -> str:
    """Argo CD's SanitizeName (the `*Normalized` parameters): lower case, DNS characters, at most 253."""
    return _NOT_DNS.sub("-", name.lower())[:MAX_DNS_NAME].strip("-.")


def go_value(value: Any) -> str:
    """`fmt.Sprintf("%v", v)` of a decoded JSON value (nil prints as <nil> here, not as a template's <no value>)."""
    return "<nil>" if value is None else templating.go_string(value)


def flatten(obj: Mapping[str, Any]) -> dict[str, str]:
    """jeremywohl/flatten's dot style, then %v: nested maps and lists become `a.b` and `a.0` keys; empty ones vanish."""
    flat: dict[str, str] = {}

    def walk(value: Any, prefix: str) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, f"{prefix}.{key}" if prefix else str(key))
        elif isinstance(value, list):
            for position, item in enumerate(value):
                walk(item, f"{prefix}.{position}" if prefix else str(position))
        else:
            flat[prefix] = go_value(value)

    walk(obj, "")
    return flat


def path_params(folder: str, *, go: bool, prefix: str, filename: str | None = None) -> Params:
    """The git generator's path parameters for `folder` (and, for the files generator, the file's name)."""
    base = folder.rsplit("/", 1)[-1]
    if go:
        path: Params = {"path": folder, "basename": base}
        if filename is not None:
            path["filename"] = filename
        path["basenameNormalized"] = sanitize_name(base)
        if filename is not None:
            path["filenameNormalized"] = sanitize_name(filename)
        path["segments"] = folder.split("/")
        return {prefix: {"path": path}} if prefix else {"path": path}
    name = f"{prefix}.path" if prefix else "path"
    params: Params = {name: folder, f"{name}.basename": base, f"{name}.basenameNormalized": sanitize_name(base)}
    if filename is not None:
        params[f"{name}.filename"] = filename
        params[f"{name}.filenameNormalized"] = sanitize_name(filename)
    for position, segment in enumerate(folder.split("/")):
        if segment:
            params[f"{name}[{position}]"] = segment
    return params


def render(text: str, params: Mapping[str, Any], go: bool, options: Sequence[str]) -> str:
    """One string through the ApplicationSet's template engine."""
    if go:
        return templating.render_go(text, params, tuple(options))
    return templating.render_fast(text, params)


def with_values(values: Any, params: Params, go: bool, options: Sequence[str], where: str) -> Params:
    """A generator's `values`, each templated from the generator's own parameters, added as `values.k`
    (or, with goTemplate, the map `values`)."""
    if values is None:
        return params
    if not isinstance(values, Mapping) or not all(isinstance(value, str) for value in values.values()):
        raise GeneratorError(f"{where}.values must map names to strings")
    rendered = {str(key): render(value, params, go, options) for key, value in values.items()}
    if go:
        return {**params, "values": rendered}
    return {**params, **{f"values.{key}": value for key, value in rendered.items()}}


def combine_strict(first: Params, second: Params) -> Params:
    """CombineStringMaps: the union of two flat parameter sets; a key set differently in both is an error."""
    combined = {key: go_value(value) if not isinstance(value, str) else value for key, value in first.items()}
    for key, value in second.items():
        text = value if isinstance(value, str) else go_value(value)
        if key in combined and combined[key] != text:
            raise GeneratorError(
                f"both generators set the parameter {key!r}, to {combined[key]!r} and {text!r}: Argo CD "
                "refuses to combine them"
            )
        combined[key] = text
    return combined


def combine_overriding(base: Params, override: Params) -> Params:
    """CombineStringMapsAllowDuplicates: the union, `override` winning."""
    return {**base, **override}


def deep_merge(target: Params, source: Mapping[str, Any]) -> Params:
    """mergo.Merge(target, source, WithOverride): maps merge key by key; a non-empty source value wins."""
    merged = dict(target)
    for key, value in source.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(dict(current), value)
        elif key not in merged or not _empty(value):
            merged[key] = value
    return merged


def _empty(value: Any) -> bool:
    return value is None or value is False or value == 0 or (isinstance(value, str | list | Mapping) and not value)


def merge_key(params: Mapping[str, Any], keys: Sequence[str]) -> str:
    """The merge generator's key of a parameter set: its merge keys' values, as JSON."""
    return json.dumps({key: params.get(key) for key in sorted(set(keys))}, sort_keys=True, default=str)
