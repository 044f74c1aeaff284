"""Line-level readings of block-style YAML text, shared by the scan and the text edits.

Offsets are into `padded`, a document's text with a newline put in front: every line, the first one
included, then starts right after a `\\n`, so one pattern finds a line start anywhere. A `Span` is
[start of an entry's first line, start of the line after its last) in `padded`.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from cmp import goyaml

Span = tuple[int, int]
UNSURE: Any = object()  # what a reading answers when only the parser can tell

# `key: value` (or `key:` alone) whose key is plain; the value is the rest of the line.
KEY_LINE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_./-]*)[ \t]*:(?:[ \t]+(?P<value>[^\n]*?))?[ \t]*(?=\n|\Z)")
# The first non-blank line after a newline, its indentation captured.
FIRST_CHILD = re.compile(r"(?:\n[ ]*(?=\n))*\n([ ]+)(?=[^ \n])")
# An item of a block sequence starts here: `-` and a blank or the line's end.
ITEM_AT = re.compile(r"-(?:[ \t]|(?=\n)|\Z)")
# Blank lines and comment lines: what may follow a value without being part of it.
AFTER_VALUE = re.compile(r"(?:\n[ \t]*+(?:#[^\n]*+)?)*+")
# A line that is neither blank nor a comment, with its indentation.
CONTENT_LINE = re.compile(r"\n([ ]*+)(?=[^ \n#])")

_CONTENT_LINES: dict[int, re.Pattern[str]] = {}


def line_end(padded: str, start: int, end: int) -> int:
    """Where the line holding `start` ends (its newline, or `end`)."""
    found = padded.find("\n", start, end)
    return end if found < 0 else found


def content_lines(indent: int) -> re.Pattern[str]:
    """A run of lines indented by `indent` or more, or blank: what lies below an entry at less."""
    pattern = _CONTENT_LINES.get(indent)
    if pattern is None:
        pattern = _CONTENT_LINES[indent] = re.compile(
            rf"(?:\n(?:[ ]{{{indent}}}[^\n]*+|[ ]{{0,{indent}}}+(?=\n|\Z)))*+"
        )
    return pattern


def dedented(padded: str, start: int, end: int, indent: int) -> str:
    """The lines of padded[start:end] moved left by `indent` columns: an entry read as a document of its
    own. The caller has made sure every line that is neither blank nor a comment is indented that far; a
    comment line indented less moves to the first column, where it means the same (nothing)."""
    pad = " " * indent
    return "\n".join(
        line[indent:] if line.startswith(pad) else line.lstrip(" ") for line in padded[start:end].split("\n")
    )


# A character of a plain scalar that cannot change what the scalar means or where it ends.
SAFE = r"[A-Za-z0-9_./@+=%~,-]"
# A scalar read without the parser: a plain one of safe characters (then resolved the way the loader does),
# or a quoted one without escapes; an optional comment may follow.
SCALAR = re.compile(
    rf"(?:(?P<plain>[A-Za-z0-9_./](?:{SAFE}|:(?={SAFE})| (?={SAFE}))*)"
    r"|\"(?P<double>[^\"\\\n]*)\"|'(?P<single>[^'\n]*)')(?:[ \t]+#[^\n]*)?"
)


def scalar(value: str | None) -> Any:
    """A one-line scalar (the value part of a key's line) as the loader reads it, or UNSURE."""
    if not value:
        return None
    found = SCALAR.fullmatch(value)
    if found is None:
        return UNSURE
    plain = found.group("plain")
    if plain is None:
        quoted = found.group("double") if found.group("double") is not None else found.group("single")
        return quoted if quoted.isprintable() else UNSURE  # a tab, a control character: the parser decides
    return plain if goyaml.reads_as_string(plain) else UNSURE  # a bool, number, null...: the parser decides


def load_entries(padded: str, spans: list[Span], indent: int) -> Any:
    """The mapping the entries at `spans` (at `indent`, in order) form, parsed from their lines alone by
    the exact reading (or, when every line is a plain key, a one-line scalar or a scalar item, read line by
    line: a CRD's `names`); UNSURE when that fails."""
    text = "".join(dedented(padded, start, end, indent) for start, end in spans)
    plain = _plain_block(text)
    if plain is not None:
        return plain
    try:
        value = goyaml.load(text) if text else {}
    except yaml.YAMLError:
        return UNSURE
    return value if isinstance(value, dict) else UNSURE


class _NotPlain(Exception):
    """A line the line-by-line reading leaves to the parser."""


def _plain_block(text: str) -> dict[str, Any] | None:
    """The mapping a text of plain lines holds (keys that read as strings, one-line scalars the loader
    would read as strings, nested mappings, sequences of such scalars), as the loader reads it; None for
    anything else (a comment, a tab, a flow, a block scalar, a number, a key twice...)."""
    if "#" in text or "\t" in text or "\r" in text:
        return None
    lines = [line for line in text.split("\n") if line.strip(" ")]
    try:
        found, end = _plain_mapping(lines, 0, 0)
    except _NotPlain:
        return None
    return found if end == len(lines) and found else None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _plain_mapping(lines: list[str], at: int, indent: int) -> tuple[dict[str, Any], int]:
    found: dict[str, Any] = {}
    while at < len(lines):
        line = lines[at]
        pad = _indent(line)
        if pad < indent:
            break
        entry = KEY_LINE.fullmatch(line, pad) if pad == indent else None
        if entry is None or entry.group("key") in found or not goyaml.reads_as_string(entry.group("key")):
            raise _NotPlain
        key, value = entry.group("key"), entry.group("value")
        at += 1
        if value:
            found[key] = _plain_scalar(value)
            continue
        following = lines[at] if at < len(lines) else ""
        deeper = _indent(following)
        if following and ITEM_AT.match(following, deeper) and deeper >= indent:
            found[key], at = _plain_items(lines, at, deeper)
        elif following and deeper > indent:
            found[key], at = _plain_mapping(lines, at, deeper)
        else:
            found[key] = None
    return found, at


def _plain_items(lines: list[str], at: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    while at < len(lines) and _indent(lines[at]) == indent and ITEM_AT.match(lines[at], indent):
        items.append(_plain_scalar(lines[at][indent + 1 :].strip(" ")))
        at += 1
    if at < len(lines) and _indent(lines[at]) > indent:
        raise _NotPlain  # an item's value goes on below it
    return items, at


def _plain_scalar(value: str) -> str:
    found = scalar(value) if value else UNSURE
    if not isinstance(found, str):
        raise _NotPlain
    return found
