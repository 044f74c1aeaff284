"""Which lines of a block-style document are its structure, found without parsing it.

In block style a line's indentation says where it belongs: a block scalar's content and a plain scalar's
continuation lines are deeper than the mapping that holds them, so a line at indentation n that is neither
blank nor a comment is an entry (or an item) of the mapping at n, whatever the deeper lines hold: wrapped
CEL rules starting with `&&`, `!has(` or `*`, `|2-` blocks, tabs, anchors. Only a quoted scalar or a flow
collection spanning lines escapes that rule: libyaml lets either go on at any indentation, even at column 0
(`a:\\n  b: "x\\nkind: y"` reads as {'a': {'b': 'x kind: y'}}).

So the reading rests on one number, the document's `floor` (worked out in reach.py): the shallowest
indentation of any line that a quote or flow spanning lines may reach. Every line shallower than the floor
is structure, and the readings below take lines only from there.
"""

from __future__ import annotations

import re

from cmp.manifests.lines import FIRST_CHILD, ITEM_AT, KEY_LINE, Span, line_end
from cmp.manifests.reach import NO_FLOOR, Marks, first_mark, floor, marks

__all__ = ["NO_FLOOR", "Marks", "block_children", "children", "first_mark", "floor", "marks", "top_entries"]


# Lines of a top-level entry: a key, a `- ` item of an indentless sequence, or anything else (unsure).
_TOP = re.compile(
    r"\n(?:(?P<key>[A-Za-z_][A-Za-z0-9_./-]*)[ \t]*:(?:[ \t]+(?P<value>[^\n]*?))?[ \t]*(?=\n|\Z)"
    r"|(?P<dash>-)(?=[ \t\n]|\Z)|(?P<other>[^ \n#]))"
)


def top_entries(padded: str, keys: frozenset[str]) -> dict[str, Span] | None:
    """Spans of the top-level entries named in `keys`, or None when a column-0 line is not a plain key
    (or an item of the previous key's sequence), there is no key at all, or one of `keys` appears twice.
    The caller has made sure the floor is above column 0."""
    entries: dict[str, Span] = {}
    current: str | None = None
    current_start = 0
    open_value = False  # the last key has no value on its line, so `- ` items may follow at column 0
    seen_key = False
    for found in _TOP.finditer(padded):
        if found.group("other") is not None:
            return None
        if found.group("dash") is not None:
            if not open_value:
                return None
            continue
        if current is not None:
            entries[current] = (current_start, found.start() + 1)
            current = None
        seen_key = True
        key = found.group("key")
        open_value = not found.group("value")
        if key in keys:
            if key in entries:
                return None
            current, current_start = key, found.start() + 1
    if not seen_key:
        return None
    if current is not None:
        entries[current] = (current_start, len(padded))
    return entries


_CHILD_LINE: dict[int, re.Pattern[str]] = {}
_SHALLOW_LINE: dict[int, re.Pattern[str]] = {}


def children(padded: str, start: int, end: int, floor: int) -> tuple[list[tuple[str, Span]], int] | None:
    """(key, span) of each entry of the block mapping whose lines fill padded[start:end] (`start` is the
    newline before the first), and their indentation; None when the floor does not lie below that
    indentation, or some line at it is not a plain key (nor an item of the previous key's sequence), or
    a line other than a comment sits shallower."""
    first = FIRST_CHILD.match(padded, start, end)
    while first is not None and padded.startswith("#", first.end()):
        first = FIRST_CHILD.match(padded, line_end(padded, first.end(), end), end)  # a comment: not a child
    if first is None:
        return ([], 0) if _only_comments(padded, start, end) else None
    indent = len(first.group(1))
    if indent >= floor:
        return None
    shallow = _SHALLOW_LINE.get(indent)
    if shallow is None:
        shallow = _SHALLOW_LINE[indent] = re.compile(rf"\n[ ]{{0,{indent - 1}}}[^ \n#]")
        _CHILD_LINE[indent] = re.compile(rf"\n[ ]{{{indent}}}(?=[^ \n#])")
    if shallow.search(padded, start, end) is not None:
        return None
    found_children: list[tuple[str, Span]] = []
    open_value = False
    for found in _CHILD_LINE[indent].finditer(padded, start, end):
        key_start = found.end()
        if ITEM_AT.match(padded, key_start):
            if not open_value:
                return None
            continue  # an item of the previous entry's indentless sequence
        child = KEY_LINE.match(padded, key_start, end)
        if child is None:
            return None
        if found_children:
            found_children[-1] = (found_children[-1][0], (found_children[-1][1][0], found.start() + 1))
        open_value = not child.group("value")
        found_children.append((child.group("key"), (found.start() + 1, end)))
    return found_children, indent


_COMMENTS = re.compile(r"(?:\n[ \t]*+(?:#[^\n]*+)?)*+")


def _only_comments(padded: str, start: int, end: int) -> bool:
    return _COMMENTS.fullmatch(padded, start, end) is not None


def block_children(padded: str, span: Span, indent: int, floor: int) -> tuple[list[tuple[str, Span]], int] | None:
    """The entries (key, span) of an entry (its key at `indent`) holding a block mapping, and their
    indentation; None when its value starts on the key's line, or `children` is unsure."""
    start, end = span
    key_end = line_end(padded, start, end)
    key_line = KEY_LINE.match(padded, start + indent, key_end)
    if key_line is None or key_line.group("value"):
        return None
    return children(padded, key_end, end, floor)
