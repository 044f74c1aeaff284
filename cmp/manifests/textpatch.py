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

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from cmp.manifests import metapatch
from cmp.manifests.blocks import (
    BROKEN,
    Block,
    Unsure,
    entry_text,
    find_entry,
    inner,
    keys_of,
    lines_of,
    reads_as_string_key,
    same,
    value_of,
)
from cmp.manifests.identity import scan
from cmp.manifests.lines import Span
from cmp.manifests.resource import Resource
from cmp.pointers import pointer_parts

_OPERATIONS = frozenset({"add", "replace", "remove", "test"})
PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
# Top-level keys a text patch leaves to the object path: identity (the scan's head must stay right), and
# `items`, which makes Argo CD read the document as a List. In `metadata`, only the labels and annotations
# may be edited: nothing there is identity.
RESERVED = frozenset({"apiVersion", "kind", "metadata", "items"})


class Patched(NamedTuple):
    """A document's text with a patch carried out, and where its `metadata` entry now lies."""

    text: str
    metadata: Span | None


def apply(text: str, operations: Sequence[dict[str, Any]], floor: int, metadata: Span | None = None) -> Patched | None:
    """The document's text with the operations carried out (the same text when they change nothing), and
    its `metadata` span (given, in the text) moved along; None when they must be applied to the parsed
    object instead. `floor` is the document's (structure.py): only mappings indented less than it are read
    line by line."""
    padded = "\n" + text
    span = None if metadata is None else (metadata[0] + 1, metadata[1] + 1)
    read: dict[int, list[tuple[str, int]]] = {}  # the lines of each block read so far, by its start
    for operation in operations:
        tokens = _tokens(operation)
        if tokens is None:
            return None
        result = _apply_one(padded, operation["op"], tokens, operation.get("value"), floor, read)
        if result is None:
            return None
        edited, at, outer = result
        if edited is not padded:
            # The blocks around the edited one keep their lines (the edit's are all deeper than theirs),
            # moved along; the edited block and whatever lies inside it are read again when needed.
            moved = len(edited) - len(padded)
            read = {start: _moved(read[start], at, moved) for start in outer}
            if span is not None and moved:
                if tokens[0] == "metadata":
                    span = (span[0], span[1] + moved)  # inside the entry
                elif at <= span[0]:
                    span = (span[0] + moved, span[1] + moved)
            padded = edited
    return Patched(padded[1:], None if span is None else (span[0] - 1, span[1] - 1))


def _moved(lines: list[tuple[str, int]], at: int, moved: int) -> list[tuple[str, int]]:
    """A block's lines after an edit at `at` made the text `moved` characters longer (the newline before
    each line is what moves)."""
    if not moved:
        return lines
    return [(name, start + moved if start >= at - 1 else start) for name, start in lines]


def _tokens(operation: dict[str, Any]) -> list[str] | None:
    """The path's keys, when every one is a plain key that reads as a string and the first is not reserved
    (or the path leads into the labels or annotations)."""
    if operation.get("op") not in _OPERATIONS:
        return None
    path = operation.get("path")
    if not isinstance(path, str):
        return None
    if path not in _PATHS:
        tokens = pointer_parts(path)
        plain = path.startswith("/") and all(map(reads_as_string_key, tokens))
        allowed = bool(tokens) and (tokens[0] not in RESERVED or metapatch.editable(tokens))
        _PATHS[path] = tokens if plain and allowed else None
    return _PATHS[path]


_PATHS: dict[str, list[str] | None] = {}  # a rule's paths are read once, not once per document


def _apply_one(
    padded: str, op: str, tokens: list[str], value: Any, floor: int, read: dict[int, list[tuple[str, int]]]
) -> tuple[str, int, list[int]] | None:
    """The text with one operation carried out (the very same string when it changes nothing), where the
    edit starts, and the starts of the blocks around the edited one (`read`: each block's lines as
    `lines_of` reads them, by its start, filled in as blocks are read)."""
    outer: list[int] = []
    try:
        block = Block(0, len(padded), 0)
        lines = _lines(padded, block, floor, read)
        for token in tokens[:-1]:
            span = find_entry(lines, token, block.end)
            if span is None:
                return None  # a missing parent: jsonpatch's own error says so
            outer.append(block.start)
            block = inner(padded, span, block.indent)
            lines = _lines(padded, block, floor, read)
        existing = find_entry(lines, tokens[-1], block.end)
    except Unsure:
        return None
    if op == "remove":
        if existing is None or not any(start + 1 != existing[0] for start in keys_of(lines)):
            return None  # nothing to remove, or a mapping left empty (an empty document reads as null)
        return padded[: existing[0]] + padded[existing[1] :], existing[0], outer
    if op != "add" and existing is None:
        return None  # replace and test need the entry: jsonpatch's own error says so
    entry = entry_text(tokens[-1], value, block.indent)
    if entry is None:
        return None
    if existing is not None:
        if padded[existing[0] : existing[1]] == entry:
            return padded, existing[0], outer
        old = value_of(padded, existing, block.indent)
        if old is BROKEN:
            return None
        if same(old, value):
            return padded, existing[0], outer
        if op == "test":
            return None
        return padded[: existing[0]] + entry + padded[existing[1] :], existing[0], outer
    if block.end == len(padded) and not padded.endswith("\n"):
        return None  # a newline after the last line could change it (a block scalar's last line break)
    return padded[: block.end] + entry + padded[block.end :], block.end, outer


def _lines(padded: str, block: Block, floor: int, read: dict[int, list[tuple[str, int]]]) -> list[tuple[str, int]]:
    lines = read.get(block.start)
    if lines is None:
        lines = read[block.start] = lines_of(padded, block, floor)
    return lines


def patch_resource(resource: Resource, operations: Sequence[dict[str, Any]]) -> bool:
    """Carry the patch out without parsing the document, when it is still unparsed text and the patch is
    one the text can take; False leaves it to the object path (which also gives every error). Labels and
    annotations are edited on the text too, or on the metadata parsed alone once it is (after a rename,
    say): nothing that names the object moves, so nothing is read again."""
    if resource.parsed or resource.text is None or resource.head is None:
        return False
    head = resource.head_for_edit()
    if not resource.metadata_parsed:
        patched = apply(resource.text, operations, head.floor, head.metadata)
        if patched is not None:
            return _take(resource, patched, operations)
    labels = [operation for operation in operations if metapatch.applies(operation)]
    rest = [operation for operation in operations if not metapatch.applies(operation)]
    metadata = resource.mutable_metadata() if labels else None
    edited = metapatch.apply(metadata, labels) if metadata is not None else None
    if labels and edited is None:
        return False
    patched = apply(resource.text, rest, head.floor, head.metadata) if rest else None
    if rest and (patched is None or not _take(resource, patched, rest)):
        return False
    if edited is not None and edited != metadata:
        resource.replace_metadata(edited)
    return True


def _take(resource: Resource, patched: Patched, operations: Sequence[dict[str, Any]]) -> bool:
    """Give the resource its patched text, with the head moved along (read again only for a CRD whose
    spec was edited, where the head holds part of the spec); False when that reading fails."""
    head = resource.head
    assert head is not None and resource.text is not None
    if patched.text == resource.text:
        return True
    moved = head._replace(metadata=patched.metadata)
    if head.spec is not None and any(pointer_parts(operation["path"])[0] == "spec" for operation in operations):
        scanned = scan(patched.text)
        if scanned is None or scanned.items is not None or scanned.head[:5] != head[:5]:
            return False
        moved = scanned.head
    resource.edit_text(patched.text, moved)
    return True
