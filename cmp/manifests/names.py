"""Name fields rewritten to follow a rename, on helm's text where it allows.

A binding's `roleRef.name` and its subjects' names are one-line strings in block mappings and sequences
of them, the way helm writes RBAC; such a field is rewritten where it stands, and the rest of the document
keeps helm's bytes. To find the fields, a reference row reads only the top-level entries its paths lead
into, parsed alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from cmp.manifests import structure
from cmp.manifests.blocks import Block, Unsure, find_entry, inner, item, lines_of, reads_as_string_key, scalar_text
from cmp.manifests.lines import AFTER_VALUE, KEY_LINE, SCALAR, UNSURE, load_entries, scalar
from cmp.manifests.resource import Head, Resource
from cmp.manifests.textpatch import RESERVED
from cmp.pointers import pointer_parts


def fields(resource: Resource, paths: Iterable[str]) -> Mapping[str, Any]:
    """The object's top-level entries the JSON Pointers `paths` lead into, read by the exact reading from
    their lines alone while the text allows (the object itself otherwise): what a reference row looks
    for, without parsing the rest. Reading them is recorded (`entries_read`)."""
    head, text = resource.head, resource.text
    if resource.parsed or text is None or head is None or resource.head_for_edit().floor == 0:
        return resource.obj
    padded = "\n" + text
    entries = structure.top_entries(padded, frozenset(pointer_parts(path)[0] for path in paths))
    value = UNSURE if entries is None else load_entries(padded, sorted(entries.values()), 0)
    if value is UNSURE:
        return resource.obj
    resource.entries_read = True
    return value  # type: ignore[no-any-return]


def replace_name(resource: Resource, pointer: str, old: str, new: str) -> None:
    """Point the name field at `pointer` (which reads `old`) at `new`: on helm's text when the field is a
    one-line string of a block mapping there (everything else keeps its bytes), on the object otherwise."""
    tokens = pointer_parts(pointer)
    if _on_text(resource, tokens, old, new):
        return
    container: Any = resource.obj
    for token in tokens[:-1]:
        container = container[int(token)] if isinstance(container, list) else container[token]
    container[int(tokens[-1]) if isinstance(container, list) else tokens[-1]] = new
    resource.mark_changed(metadata_only=tokens[0] == "metadata")


def _on_text(resource: Resource, tokens: list[str], old: str, new: str) -> bool:
    """`replace_name` carried out on the text, when it allows (not in a CRD's spec: the head holds part of
    it)."""
    head, text = resource.head, resource.text
    if resource.parsed or text is None or head is None or head.spec is not None or tokens[0] in RESERVED:
        return False
    head = resource.head_for_edit()
    edited = _replaced_scalar("\n" + text, head.floor, tokens, old, new)
    if edited is None:
        return False
    padded, at, moved = edited
    resource.edit_text(padded[1:], _moved(head, at - 1, moved))
    return True


def _moved(head: Head, at: int, moved: int) -> Head:
    """The head of a text edited at `at` (outside `metadata`), `moved` characters longer."""
    if head.metadata is None or at > head.metadata[0]:
        return head
    start, end = head.metadata
    return head._replace(metadata=(start + moved, end + moved))


def _replaced_scalar(padded: str, floor: int, tokens: list[str], old: str, new: str) -> tuple[str, int, int] | None:
    """The text with the one-line string `old` at `tokens` (keys of block mappings, indexes of block
    sequences of them) written as `new`, where the edit starts and how much longer it made the text;
    None when the text cannot be read for sure there."""
    if not all(token.isdigit() or reads_as_string_key(token) for token in tokens) or tokens[-1].isdigit():
        return None
    shown = padded  # the text with each `- ` on the way written as spaces, so an item reads as a block
    try:
        block = Block(0, len(padded), 0)
        position = 0
        while position < len(tokens) - 1:
            span = find_entry(lines_of(shown, block, floor), tokens[position], block.end, comments=True)
            if span is None:
                return None
            if tokens[position + 1].isdigit():
                shown, block = item(shown, span, block.indent, int(tokens[position + 1]), floor)
                position += 2
            else:
                block = inner(shown, span, block.indent)
                position += 1
        span = find_entry(lines_of(shown, block, floor), tokens[-1], block.end, comments=True)
    except Unsure:
        return None
    if span is None:
        return None
    key_end = shown.find("\n", span[0], span[1])
    key_end = span[1] if key_end < 0 else key_end
    key_line = KEY_LINE.match(shown, span[0] + block.indent, key_end)
    if key_line is None or AFTER_VALUE.fullmatch(shown, key_end, span[1]) is None:
        return None
    value = key_line.group("value")
    token = SCALAR.fullmatch(value) if value and scalar(value) == old else None
    written = scalar_text(new)
    if token is None or written is None:
        return None
    start = key_line.start("value") + token.start()
    end = start + _token_length(token)
    return padded[:start] + written + padded[end:], start, len(written) - (end - start)


def _token_length(token: re.Match[str]) -> int:
    """The length of the scalar itself in a `SCALAR` match (its quotes included, a comment after it not)."""
    for group in ("plain", "double", "single"):
        if token.group(group) is not None:
            return token.end(group) - token.start() + (0 if group == "plain" else 1)
    return 0
