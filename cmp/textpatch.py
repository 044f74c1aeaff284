"""JSON Patch carried out on helm's text, for the common case, without parsing the document.

A rule that patches every Deployment of a render would otherwise parse and re-serialise each one whole,
which costs more than helm's render. Most patches add, replace or remove a mapping entry under a path of
plain keys (`/spec/template/spec/nodeSelector`), and helm writes documents in block style, so the entry
can be found line by line and only it rewritten: the rest of the document keeps helm's bytes.

Only documents the header scan already read as plain (no quote or flow spanning lines, no anchors, aliases
or tags) come here. Each step goes down through block mappings whose every line is a plain key at one
indentation; anything else (a sequence index, `move`/`copy`, a key YAML would read as a bool or number, a
flow or empty value on the way, an operation that would fail) answers None, and the caller applies the
patch to the parsed object as before, with its exact errors. Property tests hold the result to
jsonpatch's on the full parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import yaml

from . import goyaml
from .manifests import GLUED, KEY_LINE, TOP_LINE, Span, block_entries

_OPERATIONS = frozenset({"add", "replace", "remove", "test"})
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
# Top-level keys a text patch leaves to the object path: identity (the scan's head must stay right), and
# `items`, which makes Argo CD read the document as a List.
_RESERVED = frozenset({"apiVersion", "kind", "metadata", "items"})


def apply(text: str, operations: Sequence[dict[str, Any]]) -> str | None:
    """The document's text with the operations carried out (the same text when they change nothing), or
    None when they must be applied to the parsed object instead."""
    glued = GLUED.match(text)
    prefix = text[: glued.end()] if glued else ""
    padded = "\n" + text[len(prefix) :]
    for operation in operations:
        tokens = _tokens(operation)
        if tokens is None:
            return None
        result = _apply_one(padded, operation["op"], tokens, operation.get("value"))
        if result is None:
            return None
        padded = result
    return prefix + padded[1:]


def _tokens(operation: dict[str, Any]) -> list[str] | None:
    """The path's keys, when every one is a plain key that reads as a string and the first is not reserved."""
    if operation.get("op") not in _OPERATIONS:
        return None
    path = operation.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        return None
    tokens = [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]
    if tokens[0] in _RESERVED or not all(_reads_as_string_key(token) for token in tokens):
        return None
    return tokens


def _reads_as_string_key(token: str) -> bool:
    if _PLAIN_KEY.fullmatch(token) is None:
        return False
    return not any(pattern.match(token) for _, pattern in goyaml.GoResolver.yaml_implicit_resolvers.get(token[0], ()))


def _apply_one(padded: str, op: str, tokens: list[str], value: Any) -> str | None:
    entries = _top_level(padded)
    indent = 0
    parent_end = len(padded)
    for token in tokens[:-1]:
        if entries is None or token not in entries:
            return None
        span = entries[token]
        found = _mapping_under(padded, span, indent)
        if found is None:
            return None
        entries, indent = found
        parent_end = span[1]
    if entries is None:
        return None
    existing = entries.get(tokens[-1])
    if op == "remove":
        if existing is None or len(entries) == 1:
            return None  # nothing to remove, or a mapping left empty (an empty document reads as null)
        return padded[: existing[0]] + padded[existing[1] :]
    if op != "add" and existing is None:
        return None  # replace and test need the entry: jsonpatch's own error says so
    entry = _entry_text(tokens[-1], value, indent)
    if entry is None:
        return None
    if existing is not None:
        if padded[existing[0] : existing[1]] == entry:
            return padded
        old = _value_of(padded, existing, indent)
        if old is _BROKEN:
            return None
        if _same(old, value):
            return padded
        if op == "test":
            return None
        return padded[: existing[0]] + entry + padded[existing[1] :]
    if parent_end == len(padded) and not padded.endswith("\n"):
        return None  # a newline after the last line could change it (a block scalar's last line break)
    return padded[:parent_end] + entry + padded[parent_end:]


def _top_level(padded: str) -> dict[str, Span] | None:
    """Every top-level entry's span; None when a column-0 line is not a plain key or a key repeats."""
    entries: dict[str, Span] = {}
    current: str | None = None
    open_value = False
    for found in TOP_LINE.finditer(padded):
        if found.group("other") is not None:
            return None
        if found.group("dash") is not None:
            if not open_value:
                return None
            continue
        if current is not None:
            entries[current] = (entries[current][0], found.start() + 1)
        current = found.group("key")
        if current in entries:
            return None
        entries[current] = (found.start() + 1, len(padded))
        open_value = not found.group("value")
    return entries


def _mapping_under(padded: str, span: Span, indent: int) -> tuple[dict[str, Span], int] | None:
    """The entries of the non-empty block mapping an entry holds, and their indentation."""
    start, end = span
    line_end = padded.find("\n", start, end)
    line_end = end if line_end < 0 else line_end
    key_line = KEY_LINE.match(padded, start + indent, line_end)
    if key_line is None or key_line.group("value"):
        return None  # a value on the key's line: a scalar, a flow, a comment
    found = block_entries(padded, line_end, end)
    if found is None or not found[0]:
        return None
    children, child_indent = found
    entries = dict(children)
    return (entries, child_indent) if len(entries) == len(children) else None


_BROKEN = object()


_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)")


def _value_of(padded: str, span: Span, indent: int) -> Any:
    """An entry's value, parsed from its lines alone (a one-line decimal or word without the parser)."""
    start, end = span
    if padded.find("\n", start, end - 1) < 0:
        found = KEY_LINE.match(padded, start + indent, end)
        word = found.group("value") if found else None
        if word and _DECIMAL.fullmatch(word):
            return int(word)
        if word and _PLAIN_KEY.fullmatch(word) and _reads_as_string_key(word):
            return word
    text = "\n".join(line[indent:] for line in padded[start:end].split("\n"))
    try:
        loaded = goyaml.load(text)
    except yaml.YAMLError:
        return _BROKEN
    return next(iter(loaded.values())) if isinstance(loaded, dict) and len(loaded) == 1 else _BROKEN


def _same(old: Any, new: Any) -> bool:
    """Equal values of equal types (`1` is not `true`), key order aside."""
    if old != new:
        return False
    try:
        return json.dumps(old, sort_keys=True, default=repr) == json.dumps(new, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return False


_ENTRIES: dict[tuple[str, int, int], tuple[Any, str | None]] = {}


def _entry_text(key: str, value: Any, indent: int) -> str | None:
    """`key: value` in block style at the indentation, each line ending with a newline. A rule's value is
    written once per indentation, not once per document it patches."""
    cached = _ENTRIES.get((key, indent, id(value)))
    if cached is not None and cached[0] is value:
        return cached[1]
    text = _dumped_entry(key, value, indent)
    _ENTRIES[(key, indent, id(value))] = (value, text)
    return text


def _dumped_entry(key: str, value: Any, indent: int) -> str | None:
    try:
        dumped = goyaml.dump({key: value})
    except (yaml.YAMLError, RecursionError):
        return None
    if not dumped.startswith(key + ":"):
        return None
    pad = " " * indent
    return "\n".join(pad + line if line else line for line in dumped.split("\n"))
