"""Block mappings read and rewritten line by line: the engine of the text edits.

A mapping's entries are found by reading its lines at its indentation in one pass, which the document's
floor (structure.py) makes trustworthy when the mapping lies above it, after making sure no line there
could hide a key from that reading (a quoted, complex or merge key) and no line sits shallower. Whatever
cannot be read for sure raises `Unsure`, and the caller leaves the edit to the parsed object.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

import yaml

from cmp import goyaml
from cmp.manifests.lines import CONTENT_LINE, FIRST_CHILD, KEY_LINE, Span, dedented, scalar

PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")


def reads_as_string_key(token: str) -> bool:
    return PLAIN_KEY.fullmatch(token) is not None and goyaml.reads_as_string(token)


class Unsure(Exception):
    """The text cannot be read for sure here: the object path takes the patch."""


class Block(NamedTuple):
    """The lines of a block mapping: padded[start:end] (`start` is the newline before its first line), its
    entries at `indent`."""

    start: int
    end: int
    indent: int


# What starts a line at a block's indentation, besides a plain key: an indentless sequence's item, a comment,
# and characters that may hide a key from a plain-key reading (a quoted, complex or merge key, a flow, a
# tag, an anchor or alias, a block scalar).
ITEM, COMMENT, OTHER = "-", "#", "?"
_LINES: dict[int, re.Pattern[str]] = {}


def _line_reader(indent: int) -> re.Pattern[str]:
    """A line at `indent` or shallower, read in one match: its indentation, and what it starts with (a
    character that may hide a key from a plain-key reading, a comment, an item, or a plain key as KEY_LINE
    reads one; none of them: OTHER)."""
    pattern = _LINES.get(indent)
    if pattern is None:
        pattern = _LINES[indent] = re.compile(
            rf"\n(?P<pad>[ ]{{0,{indent}}}+)(?=[^ \n])"
            r"(?:(?P<odd>[\"'?<{\[!&*|>%@`])|(?P<comment>#)|(?P<item>-(?:[ \t]|(?=\n)|\Z))"
            r"|(?P<key>[A-Za-z_][A-Za-z0-9_./-]*+)[ \t]*+:(?=[ \t\n]|\Z))?"
        )
    return pattern


def lines_of(padded: str, block: Block, floor: int) -> list[tuple[str, int]]:
    """What each line of the block at its indentation holds (a plain key, ITEM, COMMENT or OTHER) and
    the offset of the newline before it, read in one pass; Unsure when a line sits shallower or may hide
    a key, or the floor does not lie below the block (a quote or flow may reach its lines)."""
    indent = block.indent
    if indent >= floor:
        raise Unsure
    found: list[tuple[str, int]] = []
    for line in _line_reader(indent).finditer(padded, block.start, block.end):
        pad, odd, comment, item, key = line.group("pad", "odd", "comment", "item", "key")
        if len(pad) < indent or odd:
            raise Unsure
        found.append((key or (ITEM if item else COMMENT if comment else OTHER), line.start()))
    return found


def keys_of(lines: list[tuple[str, int]]) -> list[int]:
    return [start for name, start in lines if name not in (ITEM, COMMENT, OTHER)]


def find_entry(lines: list[tuple[str, int]], key: str, block_end: int, *, comments: bool = False) -> Span | None:
    """The span of `key`'s entry among the block's lines (from its line to the next entry's), or None when
    absent. A comment line where the entry seems to end is Unsure (its value might go on below it) unless
    `comments`: then the span runs on to the next entry, comments and all."""
    hits = [position for position, (name, _) in enumerate(lines) if name == key]
    if not hits:
        return None
    if len(hits) > 1:
        raise Unsure  # the key twice
    start = lines[hits[0]][1] + 1
    for name, following in lines[hits[0] + 1 :]:
        if name == ITEM:
            continue  # an item of the entry's own indentless sequence
        if name == COMMENT:
            if comments:
                continue
            raise Unsure
        return start, following + 1
    return start, block_end


def inner(padded: str, span: Span, indent: int) -> Block:
    """The non-empty block mapping an entry holds (its lines are checked when the block is read)."""
    start, end = span
    line_end = padded.find("\n", start, end)
    line_end = end if line_end < 0 else line_end
    key_line = KEY_LINE.match(padded, start + indent, line_end)
    if key_line is None or key_line.group("value"):
        raise Unsure  # a value on the key's line: a scalar, a flow, a comment
    first = FIRST_CHILD.match(padded, line_end, end)
    if first is None:
        raise Unsure  # an empty (null) value
    inner = len(first.group(1))
    if inner <= indent or KEY_LINE.match(padded, first.end(), end) is None:  # a sequence, a comment...
        raise Unsure
    return Block(line_end, end, inner)


BROKEN = object()


_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)")


def value_of(padded: str, span: Span, indent: int) -> Any:
    """An entry's value, parsed from its lines alone (a one-line decimal or word without the parser)."""
    start, end = span
    if padded.find("\n", start, end - 1) < 0:
        found = KEY_LINE.match(padded, start + indent, end)
        word = found.group("value") if found else None
        if word and _DECIMAL.fullmatch(word):
            return int(word)
        value = scalar(word)
        if isinstance(value, str):
            return value
    try:
        loaded = goyaml.load(dedented(padded, start, end, indent))
    except yaml.YAMLError:
        return BROKEN
    return next(iter(loaded.values())) if isinstance(loaded, dict) and len(loaded) == 1 else BROKEN


def same(old: Any, new: Any) -> bool:
    """Equal values of equal types (`1` is not `true`), key order aside."""
    if old != new:
        return False
    try:
        return json.dumps(old, sort_keys=True, default=repr) == json.dumps(new, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return False


_ENTRIES: dict[tuple[str, int, int], tuple[Any, str | None]] = {}


def entry_text(key: str, value: Any, indent: int) -> str | None:
    """`key: value` in block style at the indentation, each line ending with a newline. A rule's value is
    written once per indentation, not once per document it patches."""
    cached = _ENTRIES.get((key, indent, id(value)))
    if cached is not None and cached[0] is value:
        return cached[1]
    text = dumped_entry(key, value, indent)
    _ENTRIES[(key, indent, id(value))] = (value, text)
    return text


def dumped_entry(key: str, value: Any, indent: int) -> str | None:
    try:
        dumped = goyaml.dump({key: value})
    except (yaml.YAMLError, RecursionError):
        return None
    if not dumped.startswith(key + ":"):
        return None
    pad = " " * indent
    return "\n".join(pad + line if line else line for line in dumped.split("\n"))


def item(shown: str, span: Span, indent: int, index: int, floor: int) -> tuple[str, Block]:
    """The text with item `index` of the block sequence the entry at `span` (its key at `indent`) holds
    written with a space for its `-`, and that item's mapping as a block; Unsure when the entry holds
    anything else, or its items are not mappings that start on their `- ` line."""
    start, end = span
    key_end = shown.find("\n", start, end)
    key_line = KEY_LINE.match(shown, start + indent, end if key_end < 0 else key_end)
    first = CONTENT_LINE.search(shown, key_end, end) if key_end >= 0 else None
    if key_line is None or key_line.group("value") or first is None:
        raise Unsure
    dash = len(first.group(1))
    items = list(re.compile(rf"\n[ ]{{{dash}}}-([ ]+)(?=[A-Za-z_])").finditer(shown, key_end, end))
    if dash < indent or not items or items[0].start() != first.start() or index >= len(items):
        raise Unsure
    column = dash + 1 + len(items[index].group(1))
    if column >= floor:
        raise Unsure
    at = items[index].start() + 1 + dash
    item_end = items[index + 1].start() if index + 1 < len(items) else end
    return shown[:at] + " " + shown[at + 1 :], Block(items[index].start(), item_end, column)


_SCALAR_TEXTS: dict[str, str | None] = {}


def scalar_text(value: str) -> str | None:
    """`value` written as a one-line scalar that reads back as itself; None when it cannot be."""
    if value not in _SCALAR_TEXTS:
        dumped = dumped_entry("k", value, 0) or ""
        written = dumped[3:-1] if dumped.count("\n") == 1 else ""
        _SCALAR_TEXTS[value] = written if written and scalar(written) == value else None
    return _SCALAR_TEXTS[value]
