"""helm's output stream in, Argo CD's input stream out.

Documents are split as text on the separator lines Kubernetes' YAML reader recognises, so each keeps
helm's exact bytes and its `# Source:` template path. A document no stage changed is written back
byte-for-byte; only changed ones are re-serialised, and one whose change is confined to `metadata` gets
only that block rewritten inside helm's text.

Parsing a render whole costs more than rendering it (PyYAML's speed follows the number of YAML nodes, and
an operator's CRDs hold hundreds of thousands). So a document is identified by a cheap scan of its text
(`scan`): its top-level keys, `apiVersion`, `kind` and the identity fields of `metadata`. The scan is sure
only when the text's structure can be read line by line: every line that starts at column 0 is a
top-level key, which holds unless a flow collection spans lines, a quoted scalar goes on at a line as
shallow as the one it opens on (YAML lets both continue even at column 0), or anchors, aliases or
directives play a part. (A quoted scalar wrapped onto deeper lines, as controller-gen writes long
descriptions, is read as the lines it fills.) Whenever it is not sure, or any
value is not a plain string it can read exactly, it answers None or hands that part to the real parser,
and the document is parsed whole as before. Property tests hold the scan to the full parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import yaml

from cmp import goyaml
from cmp.errors import ManifestError
from cmp.manifests.exact import load, where
from cmp.manifests.resource import Head, Resource, searchable, surely_lacks

__all__ = [
    "Chunk",
    "Head",
    "Resource",
    "emit_json",
    "emit_yaml",
    "parse",
    "refuse_oversize",
    "scan",
    "searchable",
    "split",
    "surely_lacks",
]

# k8s.io/apimachinery's YAMLReader: a line starting with `---` followed by nothing but blanks or a comment.
_SEPARATOR_AT_START = re.compile(r"---[ \t]*(?:#[^\n]*)?(?:\n|\Z)")
_SEPARATOR_AFTER_NEWLINE = re.compile(r"\n(---[ \t]*(?:#[^\n]*)?(?:\n|\Z))")
_SOURCE_MARK = "# Source: "
_SOURCE = re.compile(r"# Source: (.+?)[ \t]*$")


class Chunk(NamedTuple):
    """One document's text as helm wrote it, and the template it came from."""

    text: str
    source: str


def split(stream: str) -> Iterator[Chunk]:
    """Cut a YAML stream into documents.

    A document without `# Source:` inherits the previous one's (helm writes a CRD file whole, so its second
    document carries no comment of its own). A comment-only document (helm's `# Source:` line followed by a
    file's own `---`) is glued, separator included, to the front of the next one, so helm's bytes survive.
    """
    for start, end, source, glued in _documents(stream):
        yield Chunk(glued + stream[start:end], source)


def _documents(stream: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, template, glued comment-only text before it) of each document with content."""
    source = ""
    pending = ""
    spans = list(_pieces(stream))
    for position, (start, end) in enumerate(spans):
        helm_shaped = _HELM_START.match(stream, start, end)
        if helm_shaped is not None:
            source = helm_shaped.group(1)
            yield start, end, source, pending
            pending = ""
            continue
        found = _source_of(stream, start, end)
        if found:
            source = found
        if not _has_content(stream, start, end):
            if start < end and not stream[start:end].isspace() and position + 1 < len(spans):
                pending += stream[start : spans[position + 1][0]]  # the comments and their separator
            continue
        yield start, end, source, pending
        pending = ""


# How helm starts a document: its `# Source:` line, then a line that starts with a key.
_HELM_START = re.compile(r"# Source: (.+?)[ \t]*\n(?=[A-Za-z])")
# A line (as str.splitlines cuts them) whose first non-blank character does not open a comment.
_CONTENT = re.compile(r"(?:^|(?<=[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]))\s*?[^\s#]")


def _has_content(stream: str, start: int, end: int) -> bool:
    """Whether a document holds anything but blank lines and comments."""
    return _CONTENT.search(stream, start, end) is not None


def _pieces(stream: str) -> Iterator[tuple[int, int]]:
    """Spans of the texts between separator lines (searched from a newline: a `^` pattern would try every
    offset)."""
    start = 0
    at_start = _SEPARATOR_AT_START.match(stream)
    if at_start:
        yield 0, 0
        start = at_start.end()
    search_from = max(start - 1, 0)
    while True:
        found = _SEPARATOR_AFTER_NEWLINE.search(stream, search_from)
        if found is None:
            yield start, len(stream)
            return
        yield start, found.start(1)
        start = found.end(1)
        search_from = start - 1


def _source_of(stream: str, start: int, end: int) -> str:
    """The path of the document's first `# Source: ` line, the comment helm puts above every document."""
    at = start if stream.startswith(_SOURCE_MARK, start, end) else stream.find(_SOURCE_MARK, start, end)
    while at >= 0:
        if at == start or stream[at - 1] == "\n":
            line_end = stream.find("\n", at, end)
            found = _SOURCE.match(stream, at, line_end if line_end >= 0 else end)
            if found:
                return found.group(1)
        at = stream.find(_SOURCE_MARK, at + 1, end)
    return ""


def parse(stream: str) -> list[Resource]:
    """Every object of the stream, `List`s flattened, in order; empty documents dropped as Argo CD does."""
    resources: list[Resource] = []
    careful = _has_odd_line_breaks(stream)
    suspects = sorted(found.start() for suspect in _SUSPECTS for found in suspect.finditer(stream))
    next_suspect = 0
    for start, end, source, glued in _documents(stream):
        body = stream[start:end]
        text = glued + body
        while next_suspect < len(suspects) and suspects[next_suspect] < start:
            next_suspect += 1
        plain = next_suspect == len(suspects) or suspects[next_suspect] >= end
        scanned = None if careful and _has_odd_line_breaks(body) else _scan(body, plain)
        if scanned is not None:
            head, metadata = scanned
            if glued:
                head = _shifted(head, len(glued))
            resource = Resource(None, source, text, len(resources), head=head, metadata=metadata)
            resources.append(_checked(resource, source))
            continue
        chunk = Chunk(text, source)
        obj = load(chunk.text, chunk.source)
        if obj is None:
            continue
        if not isinstance(obj, dict):
            raise ManifestError(f"{where(source)}: a document must be a mapping, got {type(obj).__name__}")
        items = obj.get("items")
        if isinstance(items, list):  # Argo CD flattens anything with an `items` list
            for position, item in enumerate(items):
                if not isinstance(item, dict):
                    raise ManifestError(f"{where(source)}: items[{position}] of a List is not a mapping")
                resources.append(_checked(Resource(item, source, None, len(resources)), source))
        else:
            resources.append(_checked(Resource(obj, source, text, len(resources)), source))
    return resources


def _checked(resource: Resource, source: str) -> Resource:
    if not resource.kind or not resource.kind_is_text:
        raise ManifestError(
            f"{where(source)}: a document has no `kind` (Argo CD rejects the whole output); "
            "fix the template so every document is a complete Kubernetes object"
        )
    if not resource.api_version:
        raise ManifestError(f"{where(source)}: {resource.kind} has no `apiVersion`")
    if not resource.name and not resource.generate_name:
        raise ManifestError(f"{where(source)}: {resource.kind} has no `metadata.name`")
    return resource


# ---------------------------------------------------------------------------------------------------------
# The cheap scan
# ---------------------------------------------------------------------------------------------------------

# Line breaks YAML knows besides \n (libyaml splits lines on them too) and the byte-order mark: a document
# holding one is parsed whole, since the scan splits lines on \n only.
_ODD_BREAKS = ("\x85", "\u2028", "\u2029", "\ufeff")


def _has_odd_line_breaks(text: str) -> bool:
    return "\r" in text or (not text.isascii() and any(mark in text for mark in _ODD_BREAKS))


# Where a node starts: after a line's indentation and any `- `, `? `, `: ` indicators, or after a key's `:`.
_NODE_START = r"(?:\n[ ]*(?:[-?:][ \t]+)*|:[ \t]+)"
_TAG = r"(?:![^ \t\n]*[ \t]+)*"
_DOUBLE = r'"(?:[^"\\\n]|\\.)*+"'
_SINGLE = r"'(?:[^'\n]|'')*+'"
_FLAT_FLOW_ITEM = rf"(?:[^\n\"'\[\]{{}}#&*!]|{_DOUBLE}|{_SINGLE})"
# Characters that change what follows when a node starts with them.
_RISKY = r"\"'\[{&*!|>%@`"
# A node that cannot hide a line break: a quote or a flat flow closed on its line, or a plain scalar, key or
# comment (it does not start with a risky character).
_SAFE_NODE = rf"(?:{_DOUBLE}|{_SINGLE}|[\[{{]{_FLAT_FLOW_ITEM}*+[\]}}]|(?![{_RISKY}]))"
# A run of lines each of which stands alone, one C call for most of a render: a line without any risky
# character (the quickest to read, so tried first), a `key: |` block scalar (header without indicators;
# its content, found the way YAML finds it, is skipped), or a line whose every node is safe.
_PLAIN_LINES = re.compile(
    rf"(?:\n[^\n{_RISKY}]*+(?=\n|\Z)"
    r"|\n(?P<sp>[ ]*+)[A-Za-z0-9_$./][^\n:#]*+:[ \t]++[|>][-+]?[ \t]*+(?:#[^\n]*+)?(?:\n(?=\n))*+"
    r"(?:\n(?P<ci>(?P=sp)[ ]++)(?=[^ \n])[^\n]*+(?:\n(?:(?P=ci)[^\n]*+|[ ]*+(?=\n|\Z)))*+)?(?=\n|\Z)"
    rf"|\n[ ]*+(?:[-?:][ \t]++)*+{_SAFE_NODE}(?:[^\n:]++|:(?![ \t])|:[ \t]++{_SAFE_NODE})*+(?=\n|\Z))*+"
)
# A block scalar's header line, `key: |-` or `- >`; its content lines are skipped.
_BLOCK_HEADER = re.compile(
    r"\n(?P<indent>[ ]*)(?P<indicators>(?:[-?:][ \t]+)*)"
    r"(?P<key>[^ \t\n#'\"\[\]{},&*!|>%@`][^\n]*?[ \t]*:[ \t]+)?[|>](?P<header>[-+0-9]*)[ \t]*(?:#[^\n]*)?(?=\n|\Z)"
)
# In any other line, what stops a line-by-line reading (a flow is then checked to close on the line):
_RISK = re.compile(
    rf"(?P<quote>{_NODE_START}{_TAG}(?:\"(?!(?:[^\"\\\n]|\\.)*+\")|'(?!(?:[^'\n]|'')*+')))"  # a quote closed below
    rf"|{_NODE_START}[&*!]"  # an anchor, an alias or a tag
    rf"|(?P<flow>{_NODE_START}{_TAG}[\[{{])(?!{_FLAT_FLOW_ITEM}*+[\]}}])"  # a flow not closed flat on its line
    r"|\n(?:---|\.\.\.)(?=[ \t\n]|\Z)|\n[%@`]"  # a document marker, a directive, a reserved indicator
)
# Level one of the structure check: a quote or flow that may open a node (it follows whitespace or a flow
# indicator) and does not close on its line, or an anchor. Each pattern starts with its literal character,
# which re finds fast; most documents give no match at all. What they find is looked at again line by line
# with block scalars skipped (inside one, it means nothing).
_SUSPECTS = tuple(
    re.compile(pattern)
    for pattern in (
        r'"(?<=[ \t\n\[{,:]")(?!(?:[^"\\\n]|\\.)*+")',
        r"'(?<=[ \t\n\[{,:]')(?!(?:[^'\n]|'')*+')",
        rf"\[(?<=[ \t\n\[{{,:]\[)(?!{_FLAT_FLOW_ITEM}*+\])",
        rf"\{{(?<=[ \t\n\[{{,:]\{{)(?!{_FLAT_FLOW_ITEM}*+\}})",
        r"&(?<=[ \t\n\[{,]&)",
        r"!(?<=[ \t\n\[{,:]!)",  # a tag may make a value fail to construct: the parser must read it
    )
)
# The common shape of a rendered document, read in one match: `apiVersion`, `kind`, then a block-style
# `metadata` whose name/namespace are one-line strings (plain ones that cannot resolve to anything else,
# or quoted without escapes) and whose other entries are plain keys.
_WORD = r"[A-Za-z0-9_./@+=%~,-]"
# A one-line string: plain, starting with a letter (no number or timestamp; a bool or null word is refused
# after the match, by the loader's own resolver), or quoted without escapes (checked printable after it).
_STRING = rf"(?:[A-Za-z](?:{_WORD}|:(?={_WORD})| (?={_WORD}))*+|\"[^\"\\\n]*\"|'[^'\n]*')"
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
    r"|[ ]*+\n"
    r")*+"
    r"(?=[A-Za-z_]|\Z)"
)
# After the metadata: a column-0 line that repeats an identity key or is not a plain key.
_LATER_TOP_PROBLEM = re.compile(
    r"\n(?:(?:apiVersion|kind|metadata|items)[ \t]*+:"
    r"|(?![ \n#]|-(?:[ \t\n]|\Z)|\Z|[A-Za-z_][A-Za-z0-9_./-]*+[ \t]*+:(?:[ \t\n]|\Z)))"
)
# Lines of a top-level entry: a key, a `- ` item of an indentless sequence, or anything else (unsure).
_TOP = re.compile(
    r"\n(?:(?P<key>[A-Za-z_][A-Za-z0-9_./-]*)[ \t]*:(?:[ \t]+(?P<value>[^\n]*?))?[ \t]*(?=\n|\Z)"
    r"|(?P<dash>-)(?=[ \t\n]|\Z)|(?P<other>[^ \n#]))"
)
KEY_LINE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_./-]*)[ \t]*:(?:[ \t]+(?P<value>[^\n]*?))?[ \t]*(?=\n|\Z)")
# A scalar read without the parser: a plain one of safe characters (then resolved the way the loader does),
# or a quoted one without escapes; an optional comment may follow.
_SAFE = r"[A-Za-z0-9_./@+=%~,-]"
_SCALAR = re.compile(
    rf"(?:(?P<plain>[A-Za-z0-9_./](?:{_SAFE}|:(?={_SAFE})| (?={_SAFE}))*)"
    r"|\"(?P<double>[^\"\\\n]*)\"|'(?P<single>[^'\n]*)')(?:[ \t]+#[^\n]*)?"
)
_BLANK = re.compile(r"[ \t\n]*")
_IDENTITY = ("apiVersion", "kind", "metadata", "spec", "items")
_META_FIELDS = ("name", "namespace", "generateName")
_CRD_FIELDS = ("group", "names", "scope")
_UNSURE = object()


def scan(text: str) -> tuple[Head, dict[str, Any] | None] | None:
    """The document's identity read from its text, and `metadata` when reading it took a parse; None when
    the scan cannot be sure (then the caller parses the whole document)."""
    if _has_odd_line_breaks(text):
        return None
    glued = GLUED.match(text)
    body = text[glued.end() :] if glued else text
    padded = "\n" + body
    scanned = _scan(body, not any(suspect.search(padded) for suspect in _SUSPECTS))
    if scanned is None or not glued:
        return scanned
    return _shifted(scanned[0], glued.end()), scanned[1]


# Comment lines and a separator that `split` glued in front of a document.
GLUED = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)*---[ \t]*(?:#[^\n]*)?\n")


def _shifted(head: Head, offset: int) -> Head:
    """The head of a document whose text got `offset` characters glued in front."""
    if head.metadata is None:
        return head
    start, end = head.metadata
    return head._replace(metadata=(start + offset, end + offset))


def _scan(text: str, plain: bool) -> tuple[Head, dict[str, Any] | None] | None:
    """`scan`, told whether the level-one structure check found nothing in this document."""
    padded = None
    if not plain:
        padded = "\n" + text
        if not _structure_is_plain_precisely(padded):
            return None
    fast = _FAST_HEAD.match(text)
    if fast is not None and text.endswith("\n"):
        api_version, kind, name, namespace = map(_string, fast.group("api", "kind", "name", "namespace"))
        if _UNSURE not in (api_version, kind, name, namespace):
            head = Head(api_version, kind, name, namespace, None, (fast.start("metadata"), fast.end()))
            if kind != "CustomResourceDefinition":
                if _LATER_TOP_PROBLEM.search(text, fast.end() - 1) is None:
                    return head, None
            else:
                padded = padded or "\n" + text
                spec = _crd_rest(padded, fast.end())
                if spec is not _UNSURE:
                    return (head if spec is _ABSENT else head._replace(spec=spec)), None
    return _scan_entries(padded or "\n" + text)


def _scan_entries(padded: str) -> tuple[Head, dict[str, Any] | None] | None:
    """The general scan: top-level entries, then each value read alone, by the parser if need be."""
    entries = _top_entries(padded)
    if entries is None or "items" in entries:  # a List is flattened after a full parse
        return None
    api_version = _one_line_value(padded, entries.get("apiVersion"), 0)
    kind = _one_line_value(padded, entries.get("kind"), 0)
    metadata_span = entries.get("metadata")
    fields = _metadata_fields(padded, metadata_span) if metadata_span else (None, None, None)
    metadata: dict[str, Any] | None = None
    if api_version is _UNSURE or kind is _UNSURE or fields is None:
        parsed = _parse_entries(padded, entries, ("apiVersion", "kind", "metadata"))
        if parsed is None:
            return None
        api_version, kind = parsed.get("apiVersion"), parsed.get("kind")
        value = parsed.get("metadata")
        metadata = value if isinstance(value, dict) else None
        fields = (None, None, None) if metadata is None else tuple(metadata.get(key) for key in _META_FIELDS)
    name, namespace, generate_name = fields
    span = (metadata_span[0] - 1, metadata_span[1] - 1) if metadata_span else None
    head = _with_crd_spec(Head(api_version, kind, name, namespace, generate_name, span), padded, entries)
    return None if head is None else (head, metadata)


# A CRD is mostly schema, so what follows its metadata is read in one pass that looks only at lines at
# column 0 (top-level keys) and, inside `spec`, at two spaces (its entries), the way generators write CRDs:
_ABSENT = object()


def _crd_rest(padded: str, after: int) -> Any:
    """For a CRD whose metadata ends at `after` (a newline in `padded`): the `group`, `names` and `scope`
    of its spec, _ABSENT without a spec, or _UNSURE when the general reading must decide (a column-0 line
    that is not a plain key, an identity key or `spec` twice, an empty spec or one whose entries are not at
    two spaces, a line at one space, a comment at two spaces or less after the spec's first entry)."""
    length = len(padded)
    position = after
    spec: Any = _ABSENT
    while True:
        position = _content_lines(1).match(padded, position).end()  # type: ignore[union-attr]  # matches empty
        if position >= length:
            return spec
        line = KEY_LINE.match(padded, position + 1)
        if line is None:
            if padded[position + 1] == "#" or ITEM_AT.match(padded, position + 1):
                position = _line_end(padded, position + 1, length)
                continue
            return _UNSURE
        key = line.group("key")
        if key in _IDENTITY and (key != "spec" or spec is not _ABSENT):
            return _UNSURE  # an identity key again, or a second spec
        position = line.end()
        if key == "spec":
            if line.group("value"):
                return _UNSURE
            spec, position = _two_space_spec(padded, position)
            if spec is _UNSURE:
                return _UNSURE


# An item of a block sequence starts here: `-` and a blank or the line's end.
ITEM_AT = re.compile(r"-(?:[ \t]|(?=\n)|\Z)")


def _two_space_spec(padded: str, position: int) -> tuple[Any, int]:
    """`_crd_rest`'s reading of a spec whose key line ends at `position`: its value and where it ends."""
    length = len(padded)
    first = FIRST_CHILD.match(padded, position)
    if first is None or first.group(1) != "  ":
        return _UNSURE, position
    lines: list[tuple[str, int]] = []  # (key or "-", start of the line)
    while True:
        position = _content_lines(3).match(padded, position).end()  # type: ignore[union-attr]  # matches empty
        if position >= length or padded[position + 1] not in " #":
            break  # a column-0 line: the next top-level entry
        if not padded.startswith("  ", position + 1):
            return _UNSURE, position  # a line at one space, or a comment that may sit inside the spec
        item = ITEM_AT.match(padded, position + 3)
        entry = None if item else KEY_LINE.match(padded, position + 3)
        if item is None and entry is None:
            return _UNSURE, position  # a comment, a quoted, complex or merge key...
        lines.append(("-" if entry is None else entry.group("key"), position + 1))
        position = _line_end(padded, position + 1, length)
    keys = [key for key, _ in lines if key != "-"]
    if lines[0][0] == "-" or len(set(keys)) != len(keys):
        return _UNSURE, position  # a sequence, or a key twice
    lines.append(("", min(position + 1, length)))
    spans = [
        (start, next(following for name, following in lines[index + 1 :] if name != "-"))
        for index, (key, start) in enumerate(lines)
        if key in _CRD_FIELDS
    ]
    return _load_entries(padded, spans, 2), position


def _with_crd_spec(head: Head, padded: str, entries: dict[str, Span] | None = None) -> Head | None:
    """For a CRD, the head with `group`, `names` and `scope` of its spec (what scope detection reads);
    None when they cannot be read for sure."""
    if head.kind != "CustomResourceDefinition":
        return head
    entries = entries if entries is not None else _top_entries(padded)
    if entries is None:
        return None
    if "spec" not in entries:
        return head
    spec = _crd_spec(padded, entries["spec"])
    return None if spec is _UNSURE else head._replace(spec=spec)


_RESOLVED_FIRST = frozenset(goyaml.GoResolver.yaml_implicit_resolvers)


def _string(token: str | None) -> Any:
    """A `_STRING` token's value (None for no token), or _UNSURE when the parser must read it."""
    if token is None:
        return None
    first = token[0]
    if first == '"' or first == "'":
        value = token[1:-1]
        return value if value.isprintable() else _UNSURE
    if first in _RESOLVED_FIRST:  # y, n, t, f, o...: maybe a bool or null
        return _scalar(token)
    return token


def _structure_is_plain_precisely(padded: str) -> bool:
    """Whether every line outside block scalars and wrapped quotes stands alone: no flow continues on a
    later line, no quote on a line as shallow as its own, and no anchor makes a fragment mean something
    else. Read line by line with block scalars and quotes wrapped onto deeper lines skipped (their content
    may hold anything), for the few documents the level-one check has doubts about."""
    position = 0
    length = len(padded)
    while True:
        position = _PLAIN_LINES.match(padded, position).end()  # type: ignore[union-attr]  # matches empty
        if position >= length:
            return True
        header = _BLOCK_HEADER.match(padded, position)
        if header is not None:
            skipped = _skip_block_scalar(padded, header)
            if skipped is None:
                return False
            position = skipped
            continue
        line_end = padded.find("\n", position + 1)
        line_end = length if line_end < 0 else line_end
        at = position
        while True:
            found = _RISK.search(padded, at, line_end)
            if found is None:
                break
            if found.group("flow") is not None:
                closed = _flow_end(padded, found.end())
            elif found.group("quote") is not None:
                closed = _quote_end(padded, found)  # the end of the line it closes on: that line is read
                line_end = line_end if closed is None else closed
            else:
                return False
            if closed is None:
                return False
            at = closed
        position = line_end


_QUOTED = {'"': re.compile(_DOUBLE), "'": re.compile(_SINGLE)}
# A quoted scalar that may span lines, and what may follow its closing quote on that line.
_MULTI_LINE_QUOTED = {'"': re.compile(r'"(?:[^"\\]|\\[\s\S])*+"'), "'": re.compile(r"'(?:[^']|'')*+'")}
_AFTER_QUOTE = re.compile(r"(?:[ \t]++#[^\n]*+|[ \t]*+)(?=\n|\Z)")
_INDENT = re.compile(r"[ ]*")
_SHALLOW_LINE_IN_QUOTE: dict[int, re.Pattern[str]] = {}


def _quote_end(padded: str, found: re.Match[str]) -> int | None:
    """Where the line ends on which a quoted scalar (opened at the end of `found`) closes, when every line
    it continues on is deeper than the line it opens on (as deep will do when the quote starts that line:
    a reader at that depth meets the quote first and gives up), or blank. Such lines are the scalar's
    alone, and no line-by-line reading takes them for entries (controller-gen wraps long quoted
    descriptions so). None when it is tagged, a line sits shallower, or more than a comment follows it."""
    if "!" in found.group("quote"):
        return None
    start = found.end() - 1
    closed = _MULTI_LINE_QUOTED[padded[start]].match(padded, start)
    if closed is None:
        return None
    line_start = padded.rfind("\n", 0, start) + 1
    indent = _INDENT.match(padded, line_start).end() - line_start  # type: ignore[union-attr]  # matches empty
    depth = indent if line_start + indent == start else indent + 1  # what each continued line needs
    shallow = _SHALLOW_LINE_IN_QUOTE.get(depth)
    if shallow is None:
        shallow = _SHALLOW_LINE_IN_QUOTE[depth] = re.compile(rf"\n(?![ ]{{{depth}}}|[ ]*+(?:\n|\Z))")
    if shallow.search(padded, start, closed.end()) is not None:
        return None
    after = _AFTER_QUOTE.match(padded, closed.end())
    return None if after is None else after.end()


def _flow_end(padded: str, start: int) -> int | None:
    """Where a flow collection opened just before `start` closes on the same line, or None."""
    depth = 1
    index = start
    end = padded.find("\n", start)
    end = len(padded) if end < 0 else end
    while index < end:
        char = padded[index]
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index + 1
        elif char in "\"'":
            quoted = _QUOTED[char].match(padded, index, end)
            if quoted is None:
                return None
            index = quoted.end()
            continue
        elif char == "#" and padded[index - 1] in " \t":
            return None  # a comment: the flow goes on below
        elif char in "&*!" and padded[index - 1] in "[{, \t":
            return None  # an anchor, an alias or a tag
        index += 1
    return None


def _skip_block_scalar(padded: str, header: re.Match[str]) -> int | None:
    """The end of a block scalar's content, found from its header line the way YAML finds it: the first
    non-empty line sets the indentation, which must exceed the parent's; or None when unsure."""
    if any(char.isdigit() for char in header.group("header")):
        return None  # an explicit indentation indicator: rare, left to the parser
    indicators = header.group("indicators")
    if header.group("key") is not None:
        parent = len(header.group("indent")) + len(indicators)
    elif indicators:
        parent = len(header.group("indent")) + max(indicators.rfind("-"), indicators.rfind("?"), indicators.rfind(":"))
    else:
        return None  # `|` alone on a line: the parent's indentation is not on this line
    position = header.end()
    blank_width = 0
    while True:
        if position >= len(padded):
            return position
        end = padded.find("\n", position + 1)
        end = len(padded) if end < 0 else end
        line = padded[position + 1 : end]
        stripped = line.lstrip(" ")
        if stripped:
            break
        blank_width = max(blank_width, len(line))
        position = end
    indent = len(line) - len(stripped)
    if indent <= parent:
        return position  # an empty scalar; that line belongs to the structure
    if blank_width > indent or stripped.startswith("\t"):
        return None
    found = _content_lines(indent).match(padded, position)
    return found.end() if found else position


_CONTENT_LINES: dict[int, re.Pattern[str]] = {}


def _content_lines(indent: int) -> re.Pattern[str]:
    """A run of lines indented by `indent` or more, or blank: a block scalar's content, a value's lines."""
    pattern = _CONTENT_LINES.get(indent)
    if pattern is None:
        pattern = _CONTENT_LINES[indent] = re.compile(
            rf"(?:\n(?:[ ]{{{indent}}}[^\n]*+|[ ]{{0,{indent}}}+(?=\n|\Z)))*+"
        )
    return pattern


Span = tuple[int, int]  # [start of the entry's first line, start of the next entry's line) in `padded`


def _top_entries(padded: str) -> dict[str, Span] | None:
    """Spans of the top-level entries we read, or None when a column-0 line is not a plain key, the root
    is not a mapping, or one of those keys appears twice."""
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
        if key in _IDENTITY:
            if key in entries:
                return None
            current, current_start = key, found.start() + 1
    if not seen_key:
        return None
    if current is not None:
        entries[current] = (current_start, len(padded))
    return entries


def _line_end(padded: str, start: int, end: int) -> int:
    found = padded.find("\n", start, end)
    return end if found < 0 else found


def _one_line_value(padded: str, span: Span | None, indent: int) -> Any:
    """The value of an entry written on its key's line alone, read without the parser; None when the
    entry is absent, _UNSURE when reading it takes the parser."""
    if span is None:
        return None
    start, end = span
    line_end = _line_end(padded, start, end)
    if _BLANK.fullmatch(padded, line_end, end) is None:
        return _UNSURE  # more lines: a nested or continued value
    found = KEY_LINE.match(padded, start + indent, line_end)
    if found is None:
        return _UNSURE
    return _scalar(found.group("value"))


def _scalar(value: str | None) -> Any:
    """A one-line scalar as the loader reads it, or _UNSURE."""
    if not value:
        return None
    found = _SCALAR.fullmatch(value)
    if found is None:
        return _UNSURE
    plain = found.group("plain")
    if plain is None:
        quoted = found.group("double") if found.group("double") is not None else found.group("single")
        return quoted if quoted.isprintable() else _UNSURE  # a tab, a control character: the parser decides
    return plain if goyaml.reads_as_string(plain) else _UNSURE  # a bool, number, null...: the parser decides


def _block_children(padded: str, span: Span) -> tuple[list[tuple[str, Span]], int] | None:
    """The entries (key, span) of a top-level entry holding a block mapping, and their indentation; None
    when its value starts on the key's line or some line is not a plain key at that indentation."""
    start, end = span
    line_end = _line_end(padded, start, end)
    key_line = KEY_LINE.match(padded, start, line_end)
    if key_line is None or key_line.group("value"):
        return None
    return _children(padded, line_end, end)


FIRST_CHILD = re.compile(r"(?:\n[ ]*(?=\n))*\n([ ]+)(?=[^ \n])")
_CHILD_LINE: dict[int, re.Pattern[str]] = {}
_SHALLOW_LINE: dict[int, re.Pattern[str]] = {}


def _children(padded: str, start: int, end: int) -> tuple[list[tuple[str, Span]], int] | None:
    """(key, span) of each entry of the block mapping whose lines fill padded[start:end] (`start` is the
    newline before the first), and their indentation; None when some line is not a plain key at the
    mapping's indentation, or is less indented, or is a comment at that depth."""
    first = FIRST_CHILD.match(padded, start, end)
    if first is None:
        return ([], 0) if _BLANK.fullmatch(padded, start, end) is not None else None
    indent = len(first.group(1))
    shallow = _SHALLOW_LINE.get(indent)
    if shallow is None:
        shallow = _SHALLOW_LINE[indent] = re.compile(rf"\n[ ]{{0,{indent - 1}}}[^ \n]")
        _CHILD_LINE[indent] = re.compile(rf"\n[ ]{{{indent}}}(?=[^ \n])")
    if shallow.search(padded, start, end) is not None:
        return None
    children: list[tuple[str, Span]] = []
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
        if children:
            children[-1] = (children[-1][0], (children[-1][1][0], found.start() + 1))
        open_value = not child.group("value")
        children.append((child.group("key"), (found.start() + 1, end)))
    return children, indent


def _metadata_fields(padded: str, span: Span) -> tuple[Any, ...] | None:
    """name, namespace and generateName of a block-style `metadata:` whose entries are plain keys, read
    without the parser; None when the parser is needed."""
    block = _block_children(padded, span)
    if block is None:
        return None
    children, indent = block
    values: dict[str, Any] = {}
    for key, child in children:
        if key in _META_FIELDS:
            value = _one_line_value(padded, child, indent)
            if value is _UNSURE:
                return None
            values[key] = value
    return values.get("name"), values.get("namespace"), values.get("generateName")


def _crd_spec(padded: str, span: Span) -> Any:
    """`group`, `names` and `scope` of a CRD's spec, parsed from their entries alone (None for an empty
    spec); _UNSURE when they cannot be read so."""
    block = _block_children(padded, span)
    if block is None:
        return _UNSURE
    children, indent = block
    if not children:
        return None
    return _load_entries(padded, [span for key, span in children if key in _CRD_FIELDS], indent)


def _load_entries(padded: str, spans: list[Span], indent: int) -> Any:
    """The mapping the entries at `spans` (at `indent`, in order) form, parsed from their lines alone;
    _UNSURE when that fails."""
    text = "".join(dedented(padded, start, end, indent) for start, end in spans)
    try:
        value = goyaml.load(text) if text else {}
    except yaml.YAMLError:
        return _UNSURE
    return value if isinstance(value, dict) else _UNSURE


def dedented(padded: str, start: int, end: int, indent: int) -> str:
    """The lines of padded[start:end] moved left by `indent` columns: an entry read as a document."""
    return "\n".join(line[indent:] for line in padded[start:end].split("\n"))


def _parse_entries(padded: str, entries: dict[str, Span], keys: tuple[str, ...]) -> dict[str, Any] | None:
    """The named top-level entries parsed together, in the document's order; None when that fails."""
    spans = sorted(entries[key] for key in keys if key in entries)
    text = "".join(padded[start:end] for start, end in spans)  # each but the last ends with its newline
    try:
        value = goyaml.load(text) if text else {}
    except yaml.YAMLError:
        return None
    return value if isinstance(value, dict) else None


def emit_yaml(resources: Iterable[Resource]) -> str:
    """The `---`-separated stream: helm's own text for unchanged objects, helm's text with a fresh
    `metadata` block for metadata-only changes, a fresh dump for the rest."""
    parts: list[str] = []
    for resource in resources:
        text = resource.text
        if text is None:
            text = _dumped(resource)
        elif resource.metadata_changed:
            text = _with_new_metadata(resource, text)
        parts += ("---\n", text) if text.endswith("\n") else ("---\n", text, "\n")  # one copy: the join's
    return "".join(parts)


def _with_new_metadata(resource: Resource, text: str) -> str:
    """helm's text with only the `metadata` entry re-serialised (the rest keeps its bytes), when the scan
    located that entry; otherwise the whole object, dumped."""
    head = resource.head
    metadata = resource.mutable_metadata()
    if head is None or head.metadata is None or metadata is None:
        return _dumped(resource)
    start, end = head.metadata
    try:
        block = goyaml.dump({"metadata": metadata})
    except RecursionError:
        raise ManifestError(f"{resource.id}: nested too deeply to write back") from None
    return text[:start] + block + text[end:]


def _dumped(resource: Resource) -> str:
    header = f"# Source: {resource.source}\n" if resource.source else ""
    try:
        return header + goyaml.dump(resource.obj)
    except RecursionError:
        raise ManifestError(f"{resource.id}: nested too deeply to write back") from None


def emit_json(resources: Iterable[Resource]) -> str:
    """One compact JSON object per line, the other stream format Argo CD reads."""
    return "".join(_json(resource) + "\n" for resource in resources)


def _json(resource: Resource) -> str:
    """Strict JSON: `.nan`/`.inf` have no JSON spelling (Kubernetes refuses them too), so they are an error."""
    try:
        return json.dumps(resource.obj, separators=(",", ":"), allow_nan=False)
    except ValueError:
        raise ManifestError(f"{resource.id}: holds .nan or .inf, which JSON (and Kubernetes) cannot carry") from None
    except RecursionError:
        raise ManifestError(f"{resource.id}: nested too deeply to write as JSON") from None


def refuse_oversize(data: bytes, limit: int) -> None:
    """Argo CD fails a manifest response over its gRPC limit with an opaque error, deep in the repo-server;
    say it here, in numbers, instead."""
    if len(data) > limit:
        raise ManifestError(
            f"the output is {len(data):,} bytes, over Argo CD's {limit >> 20} MiB gRPC message limit "
            "(ARGOCD_GRPC_MAX_SIZE_MB); split the app, strip resources, or raise the limit on the repo-server "
            "and this sidecar"
        )
