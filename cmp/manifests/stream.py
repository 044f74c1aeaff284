"""helm's stream cut into pieces, as text, on the separator lines Kubernetes' YAML reader recognises.

Each piece is a separator line as helm wrote it and the text up to the next one, so writing every piece
back gives the stream byte for byte. A piece with content is a document; one holding only comments or
blank lines (helm prints a template that renders only comments so) is kept as it is, wherever it stands.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

# k8s.io/apimachinery's YAMLReader: a line starting with `---` followed by nothing but blanks or a comment.
_SEPARATOR_AT_START = re.compile(r"---[ \t]*(?:#[^\n]*)?(?:\n|\Z)")
_SEPARATOR_AFTER_NEWLINE = re.compile(r"\n(---[ \t]*(?:#[^\n]*)?(?:\n|\Z))")
_SOURCE_MARK = "# Source: "
_SOURCE = re.compile(r"# Source: (.+?)[ \t]*$")
# How helm starts a document: its `# Source:` line, then a line that starts with a key.
_HELM_START = re.compile(r"# Source: (.+?)[ \t]*\n(?=[A-Za-z])")
# A line (as str.splitlines cuts them) whose first non-blank character does not open a comment.
_CONTENT = re.compile(r"(?:^|(?<=[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]))\s*?[^\s#]")


class Piece(NamedTuple):
    """One piece of the stream: `stream[separator:start]` is its separator line ("" before the first),
    `stream[start:end]` its text; `source` is the template it came from (the last `# Source:` seen, since
    helm writes a CRD file whole and its later documents carry no comment of their own)."""

    separator: int
    start: int
    end: int
    source: str
    content: bool


class Chunk(NamedTuple):
    """One document's text as helm wrote it, and the template it came from."""

    text: str
    source: str


def pieces(stream: str) -> list[Piece]:
    """Every piece of the stream, in order: writing each one's separator and text back gives the stream."""
    found: list[Piece] = []
    source = ""
    for separator, start, end in _spans(stream):
        helm_shaped = _HELM_START.match(stream, start, end)
        if helm_shaped is not None:
            source = helm_shaped.group(1)
            found.append(Piece(separator, start, end, source, True))
            continue
        source = _source_of(stream, start, end) or source
        found.append(Piece(separator, start, end, source, _CONTENT.search(stream, start, end) is not None))
    return found


def split(stream: str) -> Iterator[Chunk]:
    """The documents of a stream (pieces with content), each with its template."""
    for piece in pieces(stream):
        if piece.content:
            yield Chunk(stream[piece.start : piece.end], piece.source)


def _spans(stream: str) -> Iterator[tuple[int, int, int]]:
    """(separator, start, end) of each piece (separators are searched from a newline: a `^` pattern would
    try every offset)."""
    at_start = _SEPARATOR_AT_START.match(stream)
    separator, start = (0, at_start.end()) if at_start else (0, 0)
    while True:
        found = _SEPARATOR_AFTER_NEWLINE.search(stream, max(start - 1, 0))
        if found is None:
            yield separator, start, len(stream)
            return
        yield separator, start, found.start(1)
        separator, start = found.start(1), found.end(1)


def _source_of(stream: str, start: int, end: int) -> str:
    """The path of the piece's first `# Source: ` line, the comment helm puts above every document."""
    at = start if stream.startswith(_SOURCE_MARK, start, end) else stream.find(_SOURCE_MARK, start, end)
    while at >= 0:
        if at == start or stream[at - 1] == "\n":
            line_end = stream.find("\n", at, end)
            found = _SOURCE.match(stream, at, line_end if line_end >= 0 else end)
            if found:
                return found.group(1)
        at = stream.find(_SOURCE_MARK, at + 1, end)
    return ""


class Stream:
    """A stream as helm printed it, cut into pieces: what the emitter needs to write back the pieces that
    are no object (comment-only and empty documents) where they stood, and a List no rule touched as a
    whole. Every resource read from the stream points back at it."""

    __slots__ = ("items", "objects", "pieces", "text")

    def __init__(self, text: str, cut: list[Piece]) -> None:
        self.text = text
        self.pieces = cut
        self.objects: set[int] = set()  # the pieces that hold objects; the others are written back as they are
        self.items: dict[int, int] = {}  # piece -> how many items, for a List

    def separator(self, piece: int) -> str:
        """The separator line before a piece, as helm wrote it ("" before the first one)."""
        found = self.pieces[piece]
        return self.text[found.separator : found.start]

    def body(self, piece: int) -> str:
        """A piece's text as helm wrote it."""
        found = self.pieces[piece]
        return self.text[found.start : found.end]
