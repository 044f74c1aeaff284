"""JSON Patch carried out on helm's text, for the common case, without parsing the document.

A rule that patches every Deployment of a render would otherwise parse and re-serialise each one whole,
which costs more than helm's render. Most patches add, replace or remove a mapping entry under a path of
plain keys (`/spec/template/spec/nodeSelector`), and helm writes documents in block style, so the entry
can be found line by line and only it rewritten: the rest of the document keeps helm's bytes.

Only documents the scan read come here (so no alias shares a node the text would edit in one place
only). Each step reads the lines of a mapping at its indentation in one pass, which the scan's floor
(structure.py) makes trustworthy when the mapping lies above it, and finds its key among them, after
making sure no line there could hide a key from that reading (a quoted, complex or merge key) and no line
sits shallower. Anything else (a sequence index, `move`/`copy`, a key YAML would read as a bool or number,
a flow or empty value on the way, a comment where an entry seems to end, an operation that would fail)
answers None, and the caller applies the patch to the parsed object, which also gives
the exact errors. Property tests hold the result to jsonpatch's on the full parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import yaml

from cmp import goyaml
from cmp.manifests.identity import scan
from cmp.manifests.lines import FIRST_CHILD, ITEM_AT, KEY_LINE, Span, dedented
from cmp.manifests.resource import Resource
from cmp.pointers import pointer_parts

_OPERATIONS = frozenset({"add", "replace", "remove", "test"})
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
# Top-level keys a text patch leaves to the object path: identity (the scan's head must stay right), and
# `items`, which makes Argo CD read the document as a List.
_RESERVED = frozenset({"apiVersion", "kind", "metadata", "items"})


def apply(text: str, operations: Sequence[dict[str, Any]], floor: int) -> str | None:
    """The document's text with the operations carried out (the same text when they change nothing), or
    None when they must be applied to the parsed object instead. `floor` is the document's (structure.py):
    only mappings indented less than it are read line by line."""
    padded = "\n" + text
    for operation in operations:
        tokens = _tokens(operation)
        if tokens is None:
            return None
        result = _apply_one(padded, operation["op"], tokens, operation.get("value"), floor)
        if result is None:
            return None
        padded = result
    return padded[1:]


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


def _apply_one(padded: str, op: str, tokens: list[str], value: Any, floor: int) -> str | None:
    try:
        block = _Block(0, len(padded), 0)
        for token in tokens[:-1]:
            span = _entry(_lines(padded, block, floor), token, block.end)
            if span is None:
                return None  # a missing parent: jsonpatch's own error says so
            block = _inner(padded, span, block.indent)
        lines = _lines(padded, block, floor)
        existing = _entry(lines, tokens[-1], block.end)
    except _Unsure:
        return None
    if op == "remove":
        if existing is None or not any(start + 1 != existing[0] for start in _keys(lines)):
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


# What starts a line at a block's indentation, besides a plain key: an indentless sequence's item, a comment,
# and characters that may hide a key from a plain-key reading (a quoted, complex or merge key, a flow, a
# tag, an anchor or alias, a block scalar).
_ITEM, _COMMENT, _OTHER = "-", "#", "?"
_ODD_START = frozenset("\"'?<{[!&*|>%@`")
_LINES: dict[int, re.Pattern[str]] = {}


def _lines(padded: str, block: _Block, floor: int) -> list[tuple[str, int]]:
    """What each line of the block at its indentation holds (a plain key, _ITEM, _COMMENT or _OTHER) and
    the offset of the newline before it, read in one pass; _Unsure when a line sits shallower or may hide
    a key, or the floor does not lie below the block (a quote or flow may reach its lines)."""
    indent = block.indent
    if indent >= floor:
        raise _Unsure
    pattern = _LINES.get(indent)
    if pattern is None:
        pattern = _LINES[indent] = re.compile(rf"\n[ ]{{0,{indent}}}+(?=[^ \n])")
    found: list[tuple[str, int]] = []
    for line in pattern.finditer(padded, block.start, block.end):
        at = line.end()
        char = padded[at]
        if at - line.start() - 1 < indent or char in _ODD_START:
            raise _Unsure
        if char == "#":
            found.append((_COMMENT, line.start()))
        elif ITEM_AT.match(padded, at):
            found.append((_ITEM, line.start()))
        else:
            key = KEY_LINE.match(padded, at)
            found.append((key.group("key") if key else _OTHER, line.start()))
    return found


def _keys(lines: list[tuple[str, int]]) -> list[int]:
    return [start for name, start in lines if name not in (_ITEM, _COMMENT, _OTHER)]


def _entry(lines: list[tuple[str, int]], key: str, block_end: int) -> Span | None:
    """The span of `key`'s entry among the block's lines (from its line to the next entry's), or None when
    absent."""
    hits = [position for position, (name, _) in enumerate(lines) if name == key]
    if not hits:
        return None
    if len(hits) > 1:
        raise _Unsure  # the key twice
    start = lines[hits[0]][1] + 1
    for name, following in lines[hits[0] + 1 :]:
        if name == _ITEM:
            continue  # an item of the entry's own indentless sequence
        if name == _COMMENT:
            raise _Unsure  # a comment where the entry seems to end: its value might go on below it
        return start, following + 1
    return start, block_end


def _inner(padded: str, span: Span, indent: int) -> _Block:
    """The non-empty block mapping an entry holds (its lines are checked when the block is read)."""
    start, end = span
    line_end = padded.find("\n", start, end)
    line_end = end if line_end < 0 else line_end
    key_line = KEY_LINE.match(padded, start + indent, line_end)
    if key_line is None or key_line.group("value"):
        raise _Unsure  # a value on the key's line: a scalar, a flow, a comment
    first = FIRST_CHILD.match(padded, line_end, end)
    if first is None:
        raise _Unsure  # an empty (null) value
    inner = len(first.group(1))
    if inner <= indent or KEY_LINE.match(padded, first.end(), end) is None:  # a sequence, a comment...
        raise _Unsure
    return _Block(line_end, end, inner)


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
    try:
        loaded = goyaml.load(dedented(padded, start, end, indent))
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


def patch_resource(resource: Resource, operations: Sequence[dict[str, Any]]) -> bool:
    """Carry the patch out on helm's text, when the document is still unparsed text and the patch is one the
    text can take; False leaves it to the object path (which also gives every error)."""
    if resource.parsed or resource.text is None or resource.head is None:
        return False
    patched = apply(resource.text, operations, resource.head.floor)
    if patched is None:
        return False
    if patched != resource.text:
        scanned = scan(patched)
        if scanned is None or scanned.items is not None or scanned.head[:5] != resource.head[:5]:
            return False  # identity must read as before
        resource.edit_text(patched, scanned.head)
    return True
