"""ApplicationSet templates rendered offline, in both of Argo CD's templating styles.

`check` must see the Applications an ApplicationSet will create, or a chart spread over clusters by one
ApplicationSet escapes the contention report. Argo CD renders every string of the template, map keys
included, with either fasttemplate (`{{name}}`, the default: unknown tags are left as they are, element
values flattened to strings, `values.x` for the `values` map) or Go's text/template (`goTemplate: true`,
`{{.name}}`, nested keys, sprig functions). Go templates are evaluated for the forms ApplicationSets use:
field chains, literals, pipelines and the functions in FUNCTIONS. Anything else raises Unsupported, and the
ApplicationSet is listed as skipped rather than guessed at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

NO_VALUE = "<no value>"  # what text/template prints for a missing key with missingkey=default


class Unsupported(Exception):
    """A template form that check cannot evaluate faithfully; the ApplicationSet is skipped."""


class TemplateError(Exception):
    """A template Argo CD itself would fail on (bad element, missing key with missingkey=error)."""


def go_string(value: Any) -> str:
    """A value as Go's fmt prints it after encoding/json decoded it (every number is a float64)."""
    if value is None:
        return NO_VALUE
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _go_float(float(value))
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{key}:{go_string(value[key])}" for key in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_string(item) for item in value) + "]"
    return str(value)


def _go_float(value: float) -> str:
    """fmt's %v of a float64: shortest digits, exponent form below 1e-4 and from 1e6 (1000000 is 1e+06)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    point = len(text) + exponent  # position of the decimal point after the first digit's place
    magnitude = point - 1
    prefix = "-" if sign else ""
    if magnitude < -4 or magnitude >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if magnitude < 0 else '+'}{abs(magnitude):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"


# --- fasttemplate -----------------------------------------------------------------------------------------


def flat_params(element: Mapping[str, Any]) -> dict[str, str]:
    """A list element as fasttemplate sees it: strings, numbers and booleans as text, `values.k` for the
    `values` map; anything nested is Argo CD's error "nested objects and arrays are not supported"."""
    params: dict[str, str] = {}
    for key, value in element.items():
        if key == "values":
            if not isinstance(value, Mapping):
                raise TemplateError("`values` must be a map")
            for inner, item in value.items():
                params[f"values.{inner}"] = _flat_value(item, f"values.{inner}")
        else:
            params[str(key)] = _flat_value(value, str(key))
    return params


def _flat_value(value: Any, key: str) -> str:
    if value is None:
        return ""
    if isinstance(value, Mapping | list):
        raise TemplateError(
            f"element key {key!r} holds a {'map' if isinstance(value, Mapping) else 'list'}; without "
            "goTemplate: true Argo CD accepts only strings, numbers and booleans"
        )
    return value if isinstance(value, str) else go_string(value)


_FAST_TAG = re.compile(r"\{\{(.*?)\}\}", re.S)


def render_fast(text: str, params: Mapping[str, str]) -> str:
    """fasttemplate with Argo CD's callback: a tag naming a parameter is replaced, any other stays."""

    def replace(found: re.Match[str]) -> str:
        tag = found.group(1).strip()
        return params[tag] if tag and tag in params else found.group(0)

    return _FAST_TAG.sub(replace, text)


# --- Go text/template (the subset ApplicationSets use) -----------------------------------------------------


def _sprig_empty(value: Any) -> bool:
    return value is None or value is False or value == 0 or (isinstance(value, str | list | dict) and not value)


def _trunc(length: Any, text: Any) -> str:
    count, value = int(length), _text(text)
    if count < 0:
        return value[count:] if len(value) + count > 0 else value
    return value[:count]


def _normalize(text: Any) -> str:
    """Argo CD's `normalize`: a DNS-safe name."""
    return re.sub(r"[^-a-z0-9.]", "-", _text(text).lower())[:253].strip("-.")


def _index(container: Any, *keys: Any) -> Any:
    for key in keys:
        if isinstance(container, Mapping):
            container = container.get(key)
        elif isinstance(container, list) and isinstance(key, int | float) and 0 <= int(key) < len(container):
            container = container[int(key)]
        else:
            raise TemplateError(f"index of {go_string(container)} with {go_string(key)}")
    return container


_PRINTF_VERB = re.compile(r"%([%svdq])")


def _printf(template: Any, *args: Any) -> str:
    values = iter(args)

    def verb(found: re.Match[str]) -> str:
        if found.group(1) == "%":
            return "%"
        value = next(values, None)
        return json.dumps(_text(value), ensure_ascii=False) if found.group(1) == "q" else _text(value)

    return _PRINTF_VERB.sub(verb, _text(template))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else go_string(value)


# sprig and Argo CD functions the Go-template subset evaluates: name -> (function, number of arguments).
# In a pipeline the piped value is passed as the last argument, as text/template does.
FUNCTIONS: Mapping[str, tuple[Callable[..., Any], int | None]] = {
    "default": (lambda fallback, value=None: fallback if _sprig_empty(value) else value, 2),
    "index": (_index, None),
    "lower": (lambda value: _text(value).lower(), 1),
    "normalize": (_normalize, 1),
    "printf": (_printf, None),
    "quote": (lambda value: json.dumps(_text(value), ensure_ascii=False), 1),
    "replace": (lambda old, new, value: _text(value).replace(_text(old), _text(new)), 3),
    "toString": (_text, 1),
    "trim": (lambda value: _text(value).strip(), 1),
    "trimPrefix": (lambda prefix, value: _text(value).removeprefix(_text(prefix)), 2),
    "trimSuffix": (lambda suffix, value: _text(value).removesuffix(_text(suffix)), 2),
    "trunc": (_trunc, 2),
    "upper": (lambda value: _text(value).upper(), 1),
}
_KEYWORDS = ("if", "else", "end", "range", "with", "define", "template", "block", "break", "continue")
_TOKEN = re.compile(
    r'\s*(?:"(?:[^"\\]|\\.)*"'  # a string literal
    r"|`[^`]*`"  # a raw string
    r"|\|"  # the pipe
    r"|[^\s|]+)"  # anything else: a field chain, a variable, a function, a number
)


def render_go(text: str, data: Mapping[str, Any], options: tuple[str, ...] = ()) -> str:
    """text/template over `data`; raises Unsupported for forms outside the subset."""
    missing_error = "missingkey=error" in options  # default and zero both print <no value> for a map
    out: list[str] = []
    position = 0
    trim_next = False
    while True:
        start = text.find("{{", position)
        if start < 0:
            chunk = text[position:]
            out.append(chunk.lstrip() if trim_next else chunk)
            break
        end = text.find("}}", start + 2)
        if end < 0:
            raise TemplateError(f"unclosed action in {text!r}")
        chunk = text[position:start]
        inner = text[start + 2 : end]
        trim_left = inner.startswith("- ") or inner.startswith("-\n") or inner.startswith("-\t")
        trim_right = inner.endswith(" -") or inner.endswith("\n-") or inner.endswith("\t-")
        if trim_next:
            chunk = chunk.lstrip()
        if trim_left:
            chunk = chunk.rstrip()
            inner = inner[1:]
        if trim_right:
            inner = inner[:-1]
        out.append(chunk)
        out.append(_action(inner.strip(), data, missing_error, text))
        position = end + 2
        trim_next = trim_right
    return "".join(out)


def _action(action: str, data: Mapping[str, Any], missing_error: bool, text: str) -> str:
    if action.startswith("/*") and action.endswith("*/"):
        return ""
    commands = _split_pipeline(action, text)
    value: Any = None
    for position, command in enumerate(commands):
        value = _command(command, data, None if position == 0 else (value,), missing_error, text)
    return _text(value)


def _split_pipeline(action: str, text: str) -> list[list[str]]:
    commands: list[list[str]] = [[]]
    position = 0
    while position < len(action):
        found = _TOKEN.match(action, position)
        if not found or found.end() == position:
            break
        position = found.end()
        token = found.group(0).strip()
        if not token:
            continue
        if token == "|":
            commands.append([])
        else:
            commands[-1].append(token)
    if any(not command for command in commands):
        raise Unsupported(f"cannot read the action {{{{ {action} }}}} in {text!r}")
    first = commands[0][0]
    if first in _KEYWORDS or first.startswith("$") or ":=" in action or "(" in action:
        raise Unsupported(
            f"{{{{ {action} }}}} uses control flow, variables or parentheses, which check does not evaluate"
        )
    return commands


def _command(
    tokens: list[str],
    data: Mapping[str, Any],
    piped: tuple[Any, ...] | None,
    missing_error: bool,
    text: str,
) -> Any:
    head, *rest = tokens
    if head in FUNCTIONS:
        function, arity = FUNCTIONS[head]
        args = [_operand(token, data, missing_error, text) for token in rest] + list(piped or ())
        if arity is not None and len(args) != arity and not (head == "default" and len(args) == 1):
            raise TemplateError(f"{head} takes {arity} arguments, got {len(args)} in {text!r}")
        return function(*args)
    if head[0].isalpha():
        raise Unsupported(f"function {head!r} in {text!r} is not one check evaluates ({', '.join(FUNCTIONS)})")
    if rest or piped is not None:
        raise Unsupported(f"{' '.join(tokens)} in {text!r} applies arguments to a value")
    return _operand(head, data, missing_error, text)


def _operand(token: str, data: Mapping[str, Any], missing_error: bool, text: str) -> Any:
    if token.startswith('"'):
        return json.loads(token)
    if token.startswith("`"):
        return token[1:-1]
    if token in ("true", "false"):
        return token == "true"
    if re.fullmatch(r"-?[0-9]+", token):
        return int(token)
    if token.startswith("."):
        return _field(token, data, missing_error, text)
    raise Unsupported(f"operand {token!r} in {text!r} is not one check evaluates")


def _field(chain: str, data: Mapping[str, Any], missing_error: bool, text: str) -> Any:
    value: Any = data
    if chain == ".":
        return value
    for name in chain.strip(".").split("."):
        if not isinstance(value, Mapping):
            raise TemplateError(f"can't evaluate field {name} in {go_string(value)} ({chain} in {text!r})")
        if name not in value:
            if missing_error:
                raise TemplateError(f'map has no entry for key "{name}" ({chain} in {text!r})')
            return None
        value = value[name]
    return value


# --- the whole template ------------------------------------------------------------------------------------


def render_tree(node: Any, replace: Callable[[str], str]) -> Any:
    """Every string of the template rendered, map keys included; null map values dropped, as Argo CD does."""
    if isinstance(node, Mapping):
        return {
            (replace(key) if isinstance(key, str) else key): render_tree(value, replace)
            for key, value in node.items()
            if value is not None
        }
    if isinstance(node, list):
        return [render_tree(item, replace) for item in node]
    if isinstance(node, str):
        return replace(node)
    return node


def merge_template(base: Any, override: Any) -> Any:
    """A generator's own `template` laid over spec.template: non-empty values win, maps merge deeply."""
    if isinstance(base, Mapping) and isinstance(override, Mapping):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = merge_template(base.get(key), value) if key in base else value
        return merged
    return base if override in (None, "", [], {}) else override
