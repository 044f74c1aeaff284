"""YAML read and written the way Kubernetes reads it.

Argo CD and the API server read manifests with go-yaml (v2 rules, through sigs.k8s.io/yaml). PyYAML follows
YAML 1.1, which disagrees on real charts: a plain `=` (PyYAML's `!!value`, found in popular CRDs) fails to
load, `1:20` becomes a sexagesimal integer, `1e3` stays a string, `y`/`n` are not booleans, `017` is not
octal. A document chartshare re-serialises must mean to Kubernetes what helm's text meant, so loading and
dumping share one resolver that mirrors go-yaml's, and the libyaml C parser and emitter do the work.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from collections.abc import Iterator
from typing import Any

import yaml

from cmp.tenant_yaml import allowed_alias_ratio

_BOOLS = {
    **dict.fromkeys(["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"], True),
    **dict.fromkeys(["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"], False),
}
_INT = re.compile(r"^[-+]?(?:0[bB][01]+|0[oO]?[0-7]+|0[xX][0-9a-fA-F]+|[0-9]+)$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_SPECIAL_FLOATS = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), float("nan")),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), float("inf")),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), float("-inf")),
}
_TIMESTAMP = re.compile(
    r"^(?P<date>[0-9]{4}-[0-9]{1,2}-[0-9]{1,2})"
    r"(?:(?:[Tt]|[ \t]+)(?P<time>[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]*)?)"
    r"(?:[ \t]*(?P<tz>Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$"
)


def _numeric(text: str) -> str:
    return text.replace("_", "")


class GoResolver(yaml.resolver.BaseResolver):
    """Implicit tags for plain scalars, following go-yaml v2's resolve table."""


def _add(tag: str, pattern: str, first: str) -> None:
    GoResolver.add_implicit_resolver(tag, re.compile(pattern, re.X), list(first))


GoResolver.yaml_implicit_resolvers = {}
_add("tag:yaml.org,2002:bool", "^(?:" + "|".join(_BOOLS) + ")$", "yYnNtTfFoO")
_add("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN\0")
GoResolver.yaml_implicit_resolvers.setdefault("", []).append(("tag:yaml.org,2002:null", re.compile(r"^$")))
_add("tag:yaml.org,2002:merge", r"^<<$", "<")
_add("tag:yaml.org,2002:float", r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+.")
# Numbers: go-yaml strips `_` and then tries an integer (Go base-0 syntax), then a float.
_add(
    "tag:yaml.org,2002:int",
    r"^[-+]?(?:0[bB][01_]+|0[oO]?[0-7_]+|0[xX][0-9a-fA-F_]+|[0-9][0-9_]*)$",
    "-+0123456789",
)
_add(
    "tag:yaml.org,2002:float",
    r"^[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9_]+)?$",
    "-+.0123456789",
)
_add("tag:yaml.org,2002:timestamp", _TIMESTAMP.pattern, "0123456789")


_GO_INT_RANGE = range(-(1 << 63), 1 << 64)  # what strconv.ParseInt (int64) or ParseUint (uint64) accepts


def _implicit(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    """Whether the node's tag is the one its plain text resolves to (not an explicit `!!int abc`)."""
    if node.style:
        return False
    resolved = loader.resolve(yaml.ScalarNode, node.value, (True, False))  # type: ignore[no-untyped-call]
    return bool(resolved == node.tag)


def _undecodable(node: yaml.ScalarNode) -> yaml.constructor.ConstructorError:
    """go-yaml refuses an explicit tag its text does not fit: `cannot decode !!str `x` as a !!bool`."""
    return yaml.constructor.ConstructorError(
        None, None, f"cannot decode {node.value!r} as {node.tag.rpartition(':')[2]}", node.start_mark
    )


def _go_float(text: str) -> float | None:
    """strconv.ParseFloat on go-yaml's float syntax; None where Go fails (bad text, or out of range)."""
    if not _FLOAT.match(text):
        return None
    value = float(text)
    return None if math.isinf(value) else value


def _construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    value = _BOOLS.get(loader.construct_scalar(node))
    if value is None:
        raise _undecodable(node)
    return value


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | float | str:
    text = _numeric(loader.construct_scalar(node))
    if _INT.match(text):
        sign = -1 if text.startswith("-") else 1
        digits = text.lstrip("+-")
        try:
            if len(digits) > 1 and digits[0] == "0" and digits[1] in "01234567":
                number = sign * int(digits, 8)  # Go's base 0 reads a leading zero as octal
            else:
                number = sign * int(digits, 0)
        except ValueError:  # e.g. over Python's 4300-digit conversion limit
            number = None
        if number is not None and number in _GO_INT_RANGE:
            return number
    value = _go_float(text)  # beyond 64 bits Go falls back to a float, or else keeps the text
    if value is not None:
        return value
    if not _implicit(loader, node):
        raise _undecodable(node)
    return loader.construct_scalar(node)  # e.g. `09`... no Go number, so a string


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float | str:
    text = loader.construct_scalar(node)
    special = _SPECIAL_FLOATS.get(text)
    if special is not None:
        return special
    value = _go_float(_numeric(text))
    if value is not None:
        return value
    if not _implicit(loader, node):
        raise _undecodable(node)
    return text  # `1e_`, `._`, `1e999`: plain text Go cannot parse as a float stays a string


def _construct_binary(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    """go-yaml decodes `!!binary` into a string (JSON then replaces invalid UTF-8), never into bytes."""
    try:
        data = base64.b64decode("".join(loader.construct_scalar(node).split()), validate=True)
    except ValueError:
        raise yaml.constructor.ConstructorError(
            None, None, "!!binary value contains invalid base64 data", node.start_mark
        ) from None
    return data.decode("utf-8", errors="replace")


def _construct_timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    """go-yaml turns a plain timestamp into time.Time, which JSON then writes in RFC 3339."""
    text = loader.construct_scalar(node)
    return go_timestamp(text) or text


def go_timestamp(text: str) -> str | None:
    """The RFC 3339 text Kubernetes ends up with for a plain YAML timestamp, or None."""
    found = _TIMESTAMP.match(text)
    if not found:
        return None
    try:
        year, month, day = (int(part) for part in found["date"].split("-"))
        moment = dt.datetime(year, month, day, tzinfo=dt.UTC)
        if found["time"]:
            clock, _, fraction = found["time"].partition(".")
            hour, minute, second = (int(part) for part in clock.split(":"))
            moment = moment.replace(hour=hour, minute=minute, second=second)
            if fraction.strip("0"):
                return None  # sub-second precision: keep helm's text rather than guess Go's rounding
            if found["tz"] and found["tz"] != "Z":
                sign = -1 if found["tz"][0] == "-" else 1
                hours, _, minutes = found["tz"][1:].partition(":")
                offset = dt.timedelta(hours=int(hours), minutes=int(minutes or 0))
                moment = moment.replace(tzinfo=dt.timezone(sign * offset))
    except ValueError:
        return None
    if moment.utcoffset():
        return moment.isoformat()
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
    return loader.construct_yaml_map(node)


def _construct_sequence(loader: yaml.SafeLoader, node: yaml.SequenceNode) -> Iterator[list[Any]]:
    return loader.construct_yaml_seq(node)


class GoLoader(yaml.CSafeLoader, GoResolver):
    """libyaml's parser with go-yaml's scalar rules."""


GoLoader.yaml_implicit_resolvers = GoResolver.yaml_implicit_resolvers
GoLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
GoLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
GoLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
GoLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
GoLoader.add_constructor("tag:yaml.org,2002:binary", _construct_binary)
# go-yaml knows no sets or ordered maps: the nodes stay a mapping and a sequence of mappings.
GoLoader.add_constructor("tag:yaml.org,2002:set", _construct_mapping)
GoLoader.add_constructor("tag:yaml.org,2002:omap", _construct_sequence)
GoLoader.add_constructor("tag:yaml.org,2002:pairs", _construct_sequence)


class GoDumper(yaml.CSafeDumper, GoResolver):
    """libyaml's emitter; quotes every string go-yaml would otherwise read as another type."""


GoDumper.yaml_implicit_resolvers = GoResolver.yaml_implicit_resolvers
GoDumper.ignore_aliases = lambda self, data: True  # type: ignore[method-assign]  # repeat, never anchor


def _represent_str(dumper: GoDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data and _block_safe(data) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _block_safe(data: str) -> bool:
    """Literal blocks read back identically only without trailing spaces or odd whitespace."""
    return not any(line != line.rstrip() for line in data.split("\n")) and "\t" not in data


GoDumper.add_representer(str, _represent_str)


def reads_as_string(plain: str) -> bool:
    """Whether a non-empty plain scalar is a string to go-yaml, not a bool, null, number or merge key."""
    return not any(pattern.match(plain) for _, pattern in GoResolver.yaml_implicit_resolvers.get(plain[0], ()))


def load(text: str) -> Any:
    """Parse one YAML document as Kubernetes would, refusing the alias bombs and self-containing anchors
    go-yaml refuses (PyYAML shares an aliased value, but JSON output and every walk over it expand it)."""
    if "&" not in text or "*" not in text:  # no anchor or no alias: nothing to expand
        return yaml.load(text, Loader=GoLoader)
    loader = GoLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_aliasing(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load_all(text: str) -> Iterator[Any]:
    """Every document of a stream (Application manifests, live dumps), each under load()'s guard."""
    loader = GoLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None and "&" in text and "*" in text:
                _check_aliasing(node)
            yield loader.construct_document(node)
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def _check_aliasing(root: yaml.Node) -> None:
    """Count what go-yaml v2 counts while decoding (every node, aliases expanded) without expanding
    anything, and fail where it fails: "document contains excessive aliasing", or an anchor inside itself."""
    expanded: dict[int, int] = {}  # id(node) -> nodes go-yaml decodes for it, aliases included
    on_path: set[int] = set()
    pending: list[tuple[yaml.Node, bool]] = [(root, False)]
    while pending:  # post-order, iterative: a deep document must not exhaust Python's stack
        node, finished = pending.pop()
        if finished:
            on_path.discard(id(node))
            expanded[id(node)] = 1 + sum(expanded[id(child)] for child in _children(node))
        elif id(node) in on_path:
            raise yaml.composer.ComposerError(None, None, "an anchor's value contains itself", node.start_mark)
        elif id(node) not in expanded:
            on_path.add(id(node))
            pending.append((node, True))
            pending.extend((child, False) for child in _children(node))
    decoded, aliased = 1, 0  # the document node counts once
    seen: set[int] = set()
    order = [root]
    while order:  # document order: the first visit of a node is its anchor, later ones are aliases
        node = order.pop()
        if id(node) in seen:
            decoded += 1 + expanded[id(node)]
            aliased += expanded[id(node)]
        else:
            seen.add(id(node))
            decoded += 1
            order.extend(reversed(_children(node)))
        if aliased > 100 and decoded > 1000 and aliased / decoded > allowed_alias_ratio(decoded):
            raise yaml.composer.ComposerError(
                None, None, "document contains excessive aliasing (as Kubernetes' YAML reader says)", node.start_mark
            )


def dump(obj: Any) -> str:
    """Serialise one object in block style, keeping key order, never folding long lines."""
    return yaml.dump(obj, Dumper=GoDumper, default_flow_style=False, sort_keys=False, allow_unicode=True, width=1 << 30)
