"""A document's identity read from its text: `apiVersion`, `kind`, `metadata.name/namespace/generateName`
and, for a CRD, `spec.group/names/scope`, without parsing the rest.

Parsing a render whole costs more than rendering it (PyYAML's speed follows the number of YAML nodes, and
an operator's CRDs hold hundreds of thousands), so the scan reads only the lines that hold those fields:
the top-level keys at column 0, the entries of `metadata`, those of a CRD's `spec`. It can trust them
because they lie above the document's floor (structure.py), or, commonly and for less, because the
fields lie above the first character that may open a quote or flow (a mark) and no line below it could
change them even if it were structure; each value is read as the parser would read it when it is a
plain word or a simple quoted string, and the few entries that hold anything else are parsed alone. A
List's items are read the same way, each as a document of its own. Whenever the top level is not a block
mapping of plain keys, or a line the reading rests on may be inside a quote or flow, the scan answers
None and the exact reading (exact.py) decides. Property tests hold the scan to it.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from cmp import goyaml
from cmp.manifests import structure
from cmp.manifests.lines import (
    AFTER_VALUE,
    CONTENT_LINE,
    FIRST_CHILD,
    ITEM_AT,
    KEY_LINE,
    SAFE,
    UNSURE,
    Span,
    content_lines,
    dedented,
    line_end,
    load_entries,
    scalar,
)
from cmp.manifests.resource import FLOOR_UNREAD, Head


class Scanned(NamedTuple):
    """What the scan read: the head, `metadata` when reading it took a parse, and a List's items (each
    item's text as a document of its own) when the document is one."""

    head: Head
    metadata: dict[str, Any] | None = None
    items: tuple[str, ...] | None = None


# Line breaks YAML knows besides \n (libyaml splits lines on them too) and the byte-order mark: a document
# holding one is left to the exact reading, since the scan splits lines on \n only.
_ODD_BREAKS = ("\x85", "\u2028", "\u2029", "\ufeff")


def has_odd_line_breaks(text: str) -> bool:
    return "\r" in text or (not text.isascii() and any(mark in text for mark in _ODD_BREAKS))


def scan(text: str, *, lists: bool = True) -> Scanned | None:
    """The document's identity read from its text; None when the exact reading must decide. With `lists`,
    a document whose `items` is a block sequence is read as a List (Argo CD flattens it)."""
    return None if has_odd_line_breaks(text) else identify(text, None, lists=lists)


def identify(text: str, marks: structure.Marks | None, *, lists: bool = True) -> Scanned | None:
    """`scan` of a text known to hold no odd line break, its marks (structure.py) found already or not."""
    padded = None
    if marks is None:
        padded = "\n" + text
        first = structure.first_mark(padded)  # the marks are all found only if the floor is needed
    else:
        first = min(marks.openers[:1] + marks.values[:1], default=None)
    fast = _FAST_HEAD.match(text)
    if first is None:
        floor = structure.NO_FLOOR  # nothing may open a quote or flow spanning lines, nor need the parser
    else:
        padded = padded or "\n" + text
        above = None if fast is None else _above_every_mark(text, padded, fast, first)
        if above is not None:
            return above
        floor = structure.floor(padded, marks)
        if floor == 0:
            return None
    if fast is not None and len(fast.group("indent")) < floor:
        head = _fast_head(text, fast, floor)
        if head is not None and head.kind != "CustomResourceDefinition":
            if _LATER_TOP_PROBLEM.search(text, fast.end() - 1) is None:
                return Scanned(head)
        elif head is not None and floor > 2:
            spec, _ = _crd_rest(padded or "\n" + text, fast.end(), None)
            if spec is not UNSURE:
                return Scanned(head if spec is _ABSENT else head._replace(spec=spec))
    return _scan_entries(padded or "\n" + text, floor, lists)


def _fast_head(text: str, fast: re.Match[str], floor: int) -> Head | None:
    """The head the common shape's match read, or None when a value takes the parser (or a last line
    without its newline could change it)."""
    api_version, kind, name, namespace = map(_string, fast.group("api", "kind", "name", "namespace"))
    if not text.endswith("\n") or UNSURE in (api_version, kind, name, namespace):
        return None
    return Head(api_version, kind, name, namespace, None, (fast.start("metadata"), fast.end()), None, floor)


def _above_every_mark(text: str, padded: str, fast: re.Match[str], first: int) -> Scanned | None:
    """The identity of a document of the common shape whose head (and a CRD's group, names and scope)
    lies above its first mark, without its floor (FLOOR_UNREAD), or None. No quote or flow can open above
    the first mark, so the head's lines are structure; below it, each column-0 line (and, for a CRD, each
    line at one or two spaces) is taken for structure, whether it is or lies in a quote: one that could
    change the identity if it were sends the document to the floor's reading. What is really structure is
    among those lines, so when none could, the identity stands. (`first`, the first mark, is an offset in
    `padded`: the text's is one less.)"""
    head = _fast_head(text, fast, FLOOR_UNREAD) if first > fast.end() else None
    if head is None:
        return None
    if head.kind != "CustomResourceDefinition":
        return Scanned(head) if _LATER_TOP_PROBLEM.search(text, fast.end() - 1) is None else None
    spec, read = _crd_rest(padded, fast.end(), first)
    if spec is UNSURE:
        return None
    # From the first mark's line on, but for the spec's lines, which its reading has held to the same
    # (a line at one space, one that is no plain key or item, a CRD field twice or reaching the mark)
    mark_line = padded.rfind("\n", 0, first)
    stretches = (
        [(mark_line, len(padded))] if read is None else [(mark_line, read[0]), (max(read[1], mark_line), len(padded))]
    )
    if any(_SPEC_LEVEL_PROBLEM.search(padded, start, end) for start, end in stretches if start < end):
        return None
    return Scanned(head if spec is _ABSENT else head._replace(spec=spec))


# A line at one space, or at two that names a CRD field or is not a plain key, an item or a comment.
_SPEC_LEVEL_PROBLEM = re.compile(
    r"\n(?:[ ](?=[^ \n])"
    r"|[ ]{2}(?:(?:group|names|scope)[ \t]*+:"
    r"|(?![ \n#]|-(?:[ \t\n]|\Z)|[A-Za-z_][A-Za-z0-9_./-]*+[ \t]*+:(?:[ \t\n]|\Z))))"
)


# The common shape of a rendered document, read in one match: `apiVersion`, `kind`, then a block-style
# `metadata` whose name/namespace are one-line strings and whose other entries are plain keys.
# A one-line string: plain, starting with a letter (no number or timestamp; a bool or null word is refused
# after the match, by the loader's own resolver), or quoted without escapes (checked printable after it).
_STRING = rf"(?:[A-Za-z](?:{SAFE}|:(?={SAFE})| (?={SAFE}))*+|\"[^\"\\\n]*\"|'[^'\n]*')"
_NOT_DEEPER = r"(?!(?:[ ]*+\n)*+(?P=indent)[ ])"
_FAST_HEAD = re.compile(
    r"(?:[ \t]*+(?:#[^\n]*+)?\n)*+"
    rf"apiVersion:[ ]++(?P<api>{_STRING})[ ]*+\n"
    rf"kind:[ ]++(?P<kind>{_STRING})[ ]*+\n"
    r"(?P<metadata>metadata:[ ]*+\n)(?=(?P<indent>[ ]++)[A-Za-z_])"
    r"(?:"
    rf"(?P=indent)name:[ ]++(?P<name>{_STRING})[ ]*+\n{_NOT_DEEPER}"
    rf"|(?P=indent)namespace:[ ]++(?P<namespace>{_STRING})[ ]*+\n{_NOT_DEEPER}"
    r"|(?P=indent)(?!(?:name|namespace|generateName)[ \t]*+:)[A-Za-z_][A-Za-z0-9_./-]*+[ \t]*+:(?:[ \t][^\n]*+)?\n"
    r"|(?P=indent)(?:[ ]|-[ \t\n])[^\n]*+\n"
    r"|[ ]*+(?:#[^\n]*+)?\n"
    r")*+"
    r"(?=[A-Za-z_]|\Z)"
)
# After the metadata: a column-0 line that repeats an identity key or is not a plain key.
_LATER_TOP_PROBLEM = re.compile(
    r"\n(?:(?:apiVersion|kind|metadata|items)[ \t]*+:"
    r"|(?![ \n#]|-(?:[ \t\n]|\Z)|\Z|[A-Za-z_][A-Za-z0-9_./-]*+[ \t]*+:(?:[ \t\n]|\Z)))"
)
_IDENTITY = frozenset({"apiVersion", "kind", "metadata", "spec", "items"})
_META_FIELDS = ("name", "namespace", "generateName")
_CRD_FIELDS = ("group", "names", "scope")
_ABSENT = object()
_RESOLVED_FIRST = frozenset(goyaml.GoResolver.yaml_implicit_resolvers)


def _string(token: str | None) -> Any:
    """A `_STRING` token's value (None for no token), or UNSURE when the parser must read it."""
    if token is None:
        return None
    first = token[0]
    if first == '"' or first == "'":
        value = token[1:-1]
        return value if value.isprintable() else UNSURE
    if first in _RESOLVED_FIRST:  # y, n, t, f, o...: maybe a bool or null
        return scalar(token)
    return token


def _scan_entries(padded: str, floor: int, lists: bool) -> Scanned | None:
    """The general reading: top-level entries, then each value read alone, by the parser if need be."""
    entries = structure.top_entries(padded, _IDENTITY)
    if entries is None:
        return None
    if "items" in entries:
        items = _list_items(padded, entries["items"], floor) if lists else None
        return None if items is None else Scanned(Head(None, None, None, None, None, None, None, floor), None, items)
    api_version = _one_line_value(padded, entries.get("apiVersion"), 0)
    kind = _one_line_value(padded, entries.get("kind"), 0)
    metadata_span = entries.get("metadata")
    fields = _metadata_fields(padded, metadata_span, floor) if metadata_span else (None, None, None)
    metadata: dict[str, Any] | None = None
    if api_version is UNSURE or kind is UNSURE or fields is None:
        parsed = _parse_entries(padded, [entries[key] for key in ("apiVersion", "kind", "metadata") if key in entries])
        if parsed is None:
            return None
        api_version, kind = parsed.get("apiVersion"), parsed.get("kind")
        value = parsed.get("metadata")
        metadata = value if isinstance(value, dict) else None
        fields = (None, None, None) if metadata is None else tuple(metadata.get(key) for key in _META_FIELDS)
    name, namespace, generate_name = fields
    span = (metadata_span[0] - 1, metadata_span[1] - 1) if metadata_span else None
    head = Head(api_version, kind, name, namespace, generate_name, span, None, floor)
    if kind == "CustomResourceDefinition" and "spec" in entries:
        spec = _crd_spec(padded, entries["spec"], floor)
        if spec is UNSURE:
            return None
        head = head._replace(spec=spec)
    return Scanned(head, metadata)


def _one_line_value(padded: str, span: Span | None, indent: int) -> Any:
    """The value of an entry written on its key's line alone (only blank or comment lines below it), read
    without the parser; None when the entry is absent, UNSURE when reading it takes the parser."""
    if span is None:
        return None
    start, end = span
    key_end = line_end(padded, start, end)
    if AFTER_VALUE.fullmatch(padded, key_end, end) is None:
        return UNSURE  # more lines: a nested or continued value
    found = KEY_LINE.match(padded, start + indent, key_end)
    if found is None:
        return UNSURE
    return scalar(found.group("value"))


def _metadata_fields(padded: str, span: Span, floor: int) -> tuple[Any, ...] | None:
    """name, namespace and generateName of a block-style `metadata:` whose entries are plain keys, read
    without the parser; None when the parser is needed."""
    block = structure.block_children(padded, span, 0, floor)
    if block is None:
        return None
    found, indent = block
    values: dict[str, Any] = {}
    for key, child in found:
        if key in _META_FIELDS:
            value = _one_line_value(padded, child, indent)
            if value is UNSURE:
                return None
            values[key] = value
    return values.get("name"), values.get("namespace"), values.get("generateName")


def _crd_spec(padded: str, span: Span, floor: int) -> Any:
    """`group`, `names` and `scope` of a CRD's spec, parsed from their entries alone (None for an empty
    spec); UNSURE when they cannot be read so."""
    block = structure.block_children(padded, span, 0, floor)
    if block is None:
        return UNSURE
    found, indent = block
    if not found:
        return None
    return load_entries(padded, [child for key, child in found if key in _CRD_FIELDS], indent)


def _parse_entries(padded: str, spans: list[Span]) -> dict[str, Any] | None:
    """Top-level entries parsed together, in the document's order; None when that fails."""
    value = load_entries(padded, sorted(spans), 0)
    return None if value is UNSURE else value


# A CRD is mostly schema, so what follows its metadata is read in one pass that looks only at lines at
# column 0 (top-level keys) and, inside `spec`, at two spaces (its entries), the way generators write CRDs.


def _crd_rest(padded: str, after: int, first_mark: int | None) -> tuple[Any, Span | None]:
    """For a CRD whose metadata ends at `after` (a newline in `padded`, the floor above two spaces, or the
    lines above `first_mark` alone taken for sure): the `group`, `names` and `scope` of its spec, _ABSENT
    without a spec, or UNSURE when the general reading must decide (a column-0 line that is not a plain
    key, an identity key or `spec` twice, a spec whose entries are not at two spaces, a line at one space,
    a field whose lines reach `first_mark`); and the stretch of `padded` whose lines the spec's reading
    held to that (from the newline ending `spec:` to the one before the next column-0 line), when read."""
    length = len(padded)
    position = after
    spec: Any = _ABSENT
    read: Span | None = None
    while True:
        position = content_lines(1).match(padded, position).end()  # type: ignore[union-attr]  # matches empty
        if position >= length:
            return spec, read
        line = KEY_LINE.match(padded, position + 1)
        if line is None:
            if padded[position + 1] == "#" or ITEM_AT.match(padded, position + 1):
                position = line_end(padded, position + 1, length)
                continue
            return UNSURE, None
        key = line.group("key")
        if key in _IDENTITY and (key != "spec" or spec is not _ABSENT):
            return UNSURE, None  # an identity key again, or a second spec
        position = line.end()
        if key == "spec":
            if line.group("value"):
                return UNSURE, None
            start = position
            spec, position = _two_space_spec(padded, position, first_mark)
            if spec is UNSURE:
                return UNSURE, None
            read = (start, position)


_SHALLOW_COMMENT = re.compile(r"[ ]{0,2}#[^\n]*+")


def _two_space_spec(padded: str, position: int, first_mark: int | None) -> tuple[Any, int]:
    """`_crd_rest`'s reading of a spec whose key line ends at `position`: its value and where it ends."""
    length = len(padded)
    first = FIRST_CHILD.match(padded, position)
    if first is None or first.group(1) != "  ":
        return UNSURE, position
    lines: list[tuple[str, int]] = []  # (key or "-", start of the line)
    while True:
        position = content_lines(3).match(padded, position).end()  # type: ignore[union-attr]  # matches empty
        if position >= length:
            break
        comment = _SHALLOW_COMMENT.match(padded, position + 1)
        if comment is not None:
            position = comment.end()
            continue
        if padded[position + 1] != " ":
            break  # a column-0 line: the next top-level entry
        if not padded.startswith("  ", position + 1):
            return UNSURE, position  # a line at one space
        item = ITEM_AT.match(padded, position + 3)
        entry = None if item else KEY_LINE.match(padded, position + 3)
        if item is None and entry is None:
            return UNSURE, position  # a quoted, complex or merge key...
        lines.append(("-" if entry is None else entry.group("key"), position + 1))
        position = line_end(padded, position + 1, length)
    keys = [key for key, _ in lines if key != "-"]
    if not lines or lines[0][0] == "-" or len(set(keys)) != len(keys):
        return UNSURE, position  # a sequence, or a key twice
    lines.append(("", min(position + 1, length)))
    spans = [
        (start, next(following for name, following in lines[index + 1 :] if name != "-"))
        for index, (key, start) in enumerate(lines)
        if key in _CRD_FIELDS
    ]
    if first_mark is not None and any(end > first_mark for _, end in spans):
        return UNSURE, position  # a field's lines reach where a quote or flow may open
    return load_entries(padded, spans, 2), position


_ITEM_START: dict[int, re.Pattern[str]] = {}


def _list_items(padded: str, span: Span, floor: int) -> tuple[str, ...] | None:
    """The items of a top-level `items:` block sequence of block mappings, each as a document's text
    (moved left to column 0); None when the entry holds anything else, or the floor lies too shallow for
    the items' lines to be moved."""
    start, end = span
    key_end = line_end(padded, start, end)
    key_line = KEY_LINE.match(padded, start, key_end)
    first = CONTENT_LINE.search(padded, key_end, end)
    if key_line is None or key_line.group("value") or first is None:
        return None
    indent = len(first.group(1))
    pattern = _ITEM_START.get(indent)
    if pattern is None:
        pattern = _ITEM_START[indent] = re.compile(rf"\n[ ]{{{indent}}}-([ ]++)(?=[A-Za-z_])")
    starts = list(pattern.finditer(padded, key_end, end))
    if not starts or starts[0].start() != first.start():
        return None
    column = indent + 1 + len(starts[0].group(1))
    if column >= floor or any(indent + 1 + len(found.group(1)) != column for found in starts):
        return None
    texts = []
    for position, found in enumerate(starts):
        item_end = starts[position + 1].start() if position + 1 < len(starts) else end - 1
        for line in CONTENT_LINE.finditer(padded, found.end(), item_end):
            if len(line.group(1)) < column:
                return None  # a line outside the item's mapping
        body = " " * column + padded[found.end() : item_end]
        texts.append(dedented(body, 0, len(body), column) + "\n")
    return tuple(texts)
