"""JSON Patch carried out on helm's text, for the common case, without parsing the document.

A rule that patches every Deployment of a render would otherwise parse and re-serialise each one whole,
which costs more than helm's render. Most patches add, replace or remove a mapping entry under a path of
plain keys (`/spec/template/spec/nodeSelector`), and helm writes documents in block style, so the entry
can be found line by line and only it rewritten: the rest of the document keeps helm's bytes.

Only documents the header scan already read as plain (no quote or flow spanning lines, no anchors, aliases
or tags) come here. Each step finds its key with one search at the mapping's indentation, after making
sure no line there could hide a key from that search (a quoted, complex or merge key) and no line sits
shallower; anything else (a sequence index, `move`/`copy`, a key YAML would read as a bool or number, a
flow or empty value on the way, a comment where an entry seems to end, an operation that would fail)
answers None, and the caller applies the patch to the parsed object as before, with its exact errors.
Property tests hold the result to jsonpatch's on the full parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import yaml

from . import goyaml
from .manifests import GLUED, KEY_LINE, Span
from .rules import pointer_parts

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
    if _pattern("odd", 0).search(padded) is not None:
        return None  # entries the operations add at the top level keep this true
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
    if not isinstance(path, str):
        return None
    if path not in _PATHS:
        tokens = pointer_parts(path)
        plain = path.startswith("/") and tokens[0] not in _RESERVED and all(map(_reads_as_string_key, tokens))
        _PATHS[path] = tokens if plain else None
    return _PATHS[path]


_PATHS: dict[str, list[str] | None] = {}  # a rule's paths are read once, not once per document


def _reads_as_string_key(token: str) -> bool:
    return _PLAIN_KEY.fullmatch(token) is not None and goyaml.reads_as_string(token)


class _Unsure(Exception):
    """The text cannot be read for sure here: the object path takes the patch."""


class _Block(NamedTuple):
    """The lines of a block mapping: padded[start:end] (`start` is the newline before its first line), its
    entries at `indent`."""

    start: int
    end: int
    indent: int


def _apply_one(padded: str, op: str, tokens: list[str], value: Any) -> str | None:
    try:
        block = _Block(0, len(padded), 0)
        for token in tokens[:-1]:
            span = _entry(padded, block, token)
            if span is None:
                return None  # a missing parent: jsonpatch's own error says so
            block = _inner(padded, span, block.indent)
        existing = _entry(padded, block, tokens[-1])
    except _Unsure:
        return None
    if op == "remove":
        if existing is None or not _has_other_entries(padded, block, existing):
            return None  # nothing to remove, or a mapping left empty (an empty document reads as null)
        return padded[: existing[0]] + padded[existing[1] :]
    if op != "add" and existing is None:
        return None  # replace and test need the entry: jsonpatch's own error says so
    entry = _entry_text(tokens[-1], value, block.indent)
    if entry is None:
        return None
    if existing is not None:
        if padded[existing[0] : existing[1]] == entry:
            return padded
        old = _value_of(padded, existing, block.indent)
        if old is _BROKEN:
            return None
        if _same(old, value):
            return padded
        if op == "test":
            return None
        return padded[: existing[0]] + entry + padded[existing[1] :]
    if block.end == len(padded) and not padded.endswith("\n"):
        return None  # a newline after the last line could change it (a block scalar's last line break)
    return padded[: block.end] + entry + padded[block.end :]


_KEY = r"[A-Za-z_][A-Za-z0-9_./-]*[ \t]*:(?:[ \t]|(?=\n)|\Z)"
_ITEM = r"-(?:[ \t]|(?=\n)|\Z)"
_PATTERNS: dict[tuple[str, int, str], re.Pattern[str]] = {}


def _pattern(name: str, indent: int, key: str = "") -> re.Pattern[str]:
    """The line patterns a walk uses, compiled once per indentation (and key)."""
    found = _PATTERNS.get((name, indent, key))
    if found is None:
        at = f"\\n[ ]{{{indent}}}"
        source = {
            # the entry of `key` at this indentation
            "key": at + re.escape(key) + r"[ \t]*:(?:[ \t]|(?=\n)|\Z)",
            # any entry at this indentation
            "any key": at + _KEY,
            # a line at this indentation that may hide a key from the plain-key search: a quoted, complex
            # or merge key, a flow, a tag, an anchor or alias (the scan refused most of these already)
            "odd": at + r"[\"'?<{\[!&*|>%@`]",
            # inside a block: a line less indented than its entries, or an odd line at their indentation
            "stray": rf"\n(?:[ ]{{0,{indent - 1}}}[^ \n]|[ ]{{{indent}}}[\"'?<{{\[!&*|>%@`])",
            # where an entry at this indentation ends: the next line as little or less indented, other than
            # an item of its own indentless sequence
            "end": rf"\n(?=[ ]{{0,{indent}}}[^ \n])(?![ ]{{{indent}}}{_ITEM})",
        }[name]
        found = _PATTERNS[(name, indent, key)] = re.compile(source)
    return found


def _entry(padded: str, block: _Block, key: str) -> Span | None:
    """The span of `key`'s entry in the block (from its line to the next entry's), or None when absent."""
    pattern = _pattern("key", block.indent, key)
    found = pattern.search(padded, block.start, block.end)
    if found is None:
        return None
    if pattern.search(padded, found.end(), block.end) is not None:
        raise _Unsure  # the key twice
    following = _pattern("end", block.indent).search(padded, found.end(), block.end)
    if following is None:
        return found.start() + 1, block.end
    if padded.startswith("#", following.start() + 1 + block.indent):
        raise _Unsure  # a comment where the entry seems to end: its value might go on below it
    return found.start() + 1, following.start() + 1


def _inner(padded: str, span: Span, indent: int) -> _Block:
    """The non-empty block mapping an entry holds."""
    start, end = span
    line_end = padded.find("\n", start, end)
    line_end = end if line_end < 0 else line_end
    key_line = KEY_LINE.match(padded, start + indent, line_end)
    if key_line is None or key_line.group("value"):
        raise _Unsure  # a value on the key's line: a scalar, a flow, a comment
    first = _FIRST_LINE.match(padded, line_end, end)
    if first is None:
        raise _Unsure  # an empty (null) value
    inner = len(first.group(1))
    if (
        inner <= indent
        or KEY_LINE.match(padded, first.end(), end) is None  # a sequence, a comment, a complex key...
        or _pattern("stray", inner).search(padded, line_end, end) is not None
    ):
        raise _Unsure
    return _Block(line_end, end, inner)


_FIRST_LINE = re.compile(r"(?:\n[ ]*(?=\n))*\n([ ]+)(?=[^ \n])")


def _has_other_entries(padded: str, block: _Block, span: Span) -> bool:
    """Whether the block holds an entry besides the one at `span`."""
    any_key = _pattern("any key", block.indent)
    return (
        any_key.search(padded, block.start, span[0] - 1) is not None
        or any_key.search(padded, span[1] - 1, block.end) is not None
    )


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
