"""Which lines of a block-style document are its structure, found without parsing it.

In block style a line's indentation says where it belongs: a block scalar's content and a plain scalar's
continuation lines are deeper than the mapping that holds them, so a line at indentation n that is neither
blank nor a comment is an entry (or an item) of the mapping at n, whatever the deeper lines hold: wrapped
CEL rules starting with `&&`, `!has(` or `*`, `|2-` blocks, tabs, anchors. Only a quoted scalar or a flow
collection spanning lines escapes that rule: libyaml lets either go on at any indentation, even at column 0
(`a:\\n  b: "x\\nkind: y"` reads as {'a': {'b': 'x kind: y'}}).

So the reading rests on one number, the document's `floor`: the shallowest indentation of any line that a
quote or flow spanning lines may reach. Every line shallower than the floor is structure. The floor is
worked out from every character that may open such a quote or flow (a quote, `[` or `{` that follows a
blank, a flow indicator or `:`, and does not close on its line: a superset of the real openers), each
followed to where it would close; one that sits inside a plain scalar or a comment on its line (read as if
that line were structure) opens nothing, and is passed over.
"""

from __future__ import annotations

import re

from cmp.manifests.lines import FIRST_CHILD, ITEM_AT, KEY_LINE, Span, line_end

NO_FLOOR = 1 << 30

_DOUBLE = r'"(?:[^"\\\n]|\\.)*+"'
_SINGLE = r"'(?:[^'\n]|'')*+'"
_FLAT_FLOW_ITEM = rf"(?:[^\n\"'\[\]{{}}#&*!]|{_DOUBLE}|{_SINGLE})"
# A character that may open a quote or flow spanning lines: it follows a blank, a flow indicator or `:`,
# and no closing quote (a closing bracket, with nothing nested or risky between) follows on its line.
# (One pattern each: a pattern that starts with a literal character is searched for fast.)
_OPENERS = tuple(
    re.compile(pattern)
    for pattern in (
        r'"(?<=[ \t\n\[{,:]")(?!(?:[^"\\\n]|\\.)*+")',
        r"'(?<=[ \t\n\[{,:]')(?!(?:[^'\n]|'')*+')",
        rf"\[(?<=[ \t\n\[{{,:]\[)(?!{_FLAT_FLOW_ITEM}*+\])",
        rf"\{{(?<=[ \t\n\[{{,:]\{{)(?!{_FLAT_FLOW_ITEM}*+\}})",
    )
)
# What may come before such a character on a line that is structure, for it to open nothing: the line's
# indentation and indicators, keys and properties, then a plain scalar it sits in, or a comment.
_PLAIN_FIRST = r"(?:[^-?:,\[\]{}#&*!|>'\"%@`\s]|[-?:](?=[^ \t\n]))"
_PLAIN_REST = r"(?:[^\n:#]|:(?=[^ \t\n])|(?<=[^ \t\n])#)"
_PROPERTIES = r"(?:[&!][^ \t\n]*+[ \t]++)*+"
_INERT_BEFORE = re.compile(
    r"[ ]*+(?:[-?:][ \t]++)*+"
    rf"(?:{_PROPERTIES}{_PLAIN_FIRST}{_PLAIN_REST}*+:[ \t]++)*+"
    rf"{_PROPERTIES}(?:{_PLAIN_FIRST}{_PLAIN_REST}*+|(?:{_PLAIN_FIRST}{_PLAIN_REST}*+)?(?<=[ \t\n])#[^\n]*+)"
)
# A quoted scalar, spanning lines or not.
_QUOTED = {'"': re.compile(r'"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"'), "'": re.compile(r"'[^']*+(?:''[^']*+)*+'")}
_FLOW_TEXT = re.compile(r"[^\[\]{}\"'#\n]++")
_DOCUMENT_MARKER = re.compile(r"(?:---|\.\.\.)(?=[ \t\n]|\Z)")
_SHALLOWER: dict[int, re.Pattern[str]] = {}


# An alias, or a tag of YAML's own (`!!bool`, `!<tag:yaml.org,2002:int>`), where a node may start: what
# they make of a value only the exact reading can tell (an alias bomb, an anchor inside itself, a text a
# tag cannot hold are errors to Kubernetes too). Other tags (`!has(` in a wrapped CEL rule, say) go-yaml
# reads as plain strings.
_VALUE_MARKS = (re.compile(r"\*(?<=[ \t\n\[{,:]\*)[A-Za-z0-9_-]"), re.compile(r"!(?<=[ \t\n\[{,:]!)[!<]"))


def floor(padded: str) -> int:
    """The shallowest indentation a quote or flow spanning lines may reach in the document (NO_FLOOR when
    none spans lines); 0 when one may reach a top-level line, or an alias or a tag of YAML's own may be
    there: the exact reading then decides."""
    followed: list[tuple[int, int, int]] = []  # (opener, end, least indentation reached) of each one followed
    headers: list[int] = []  # block scalars whose content was taken to hold what looked like an opener
    for openers in _OPENERS:
        for found in openers.finditer(padded):
            at = found.start()
            if _inert(padded, at):
                continue  # inside a plain scalar or a comment: no opener
            end = _quote_end(padded, at) if padded[at] in "\"'" else _flow_end(padded, at)
            reach = _shallowest(padded, at, end, NO_FLOOR)
            if reach < _WORTH_A_LOOK and _skipped(padded, at, headers):
                continue
            if reach == 0:
                return 0
            followed.append((at, end, reach))
    flows = [(at, end) for at, end, _ in followed if padded[at] in "[{"]
    for marks in _VALUE_MARKS:
        for found in marks.finditer(padded):
            at = found.start()
            # (a flow's lines are no block lines: `,` and `[` mean something there)
            if (not _inert(padded, at) or any(start < at < end for start, end in flows)) and not _skipped(
                padded, at, headers
            ):
                return 0
    checked = 0
    while checked < len(headers):  # a header taken for one may itself sit inside a quote or flow followed
        header = headers[checked]
        checked += 1
        for entry in [entry for entry in followed if entry[0] < header < entry[1]]:
            if not _skipped(padded, entry[0], headers):
                return 0
            followed.remove(entry)
    return min((reach for _, _, reach in followed), default=NO_FLOOR)


# Following a quote or flow that reaches lines indented less than this, it is worth finding out whether
# it opens anything at all: it may stand in a block scalar's content (a description's stray quote).
_WORTH_A_LOOK = 8


def _inert(padded: str, at: int) -> bool:
    """Whether the character at `at` sits inside a plain scalar or a comment on its line, read as a line
    of block structure."""
    return _INERT_BEFORE.fullmatch(padded, padded.rfind("\n", 0, at) + 1, at) is not None


# A block scalar's header line: indentation, indicators, a plain key, properties, then `|` or `>` with
# its chomping and indentation indicators, and maybe a comment.
_BLOCK_HEADER = re.compile(
    r"(?P<indent>[ ]*+)(?P<indicators>(?:[-?:][ \t]++)*+)"
    rf"(?P<key>{_PROPERTIES}(?:{_PLAIN_FIRST}{_PLAIN_REST}*+|{_DOUBLE}|{_SINGLE})[ \t]*+:[ \t]++)?"
    rf"{_PROPERTIES}[|>](?:(?P<digit>[1-9])[-+]?|[-+](?P<late>[1-9])?)?[ \t]*+(?:#[^\n]*+)?"
)
_WALK_LIMIT = 400  # lines to walk back, looking for a block scalar's header


def _skipped(padded: str, at: int, headers: list[int]) -> bool:
    """Whether `at` lies in the content of a block scalar (found by walking back to the first line less
    indented than every line between, that is a block scalar's header whose content reaches `at`); the
    header is recorded, to be checked against every quote and flow followed."""
    line_start = padded.rfind("\n", 0, at) + 1
    shallowest = _indentation(padded, line_start)
    end = line_start - 1  # the newline before the line
    for _ in range(_WALK_LIMIT):
        if shallowest == 0 or end <= 0:
            return False
        start = padded.rfind("\n", 0, end) + 1
        line = padded[start:end]
        end = start - 1
        indent = _indentation(padded, start)
        if indent == len(line) or indent >= shallowest:
            continue  # blank, or as deep: no header of a block holding `at`
        header = _BLOCK_HEADER.fullmatch(line)
        if header is not None:
            content = _content_indent(padded, start + len(line), header)
            if content is not None and content <= shallowest:
                headers.append(start)
                return True
        shallowest = indent
    return False


def _indentation(padded: str, line_start: int) -> int:
    end = line_start
    while end < len(padded) and padded[end] == " ":
        end += 1
    return end - line_start


def _content_indent(padded: str, header_end: int, header: re.Match[str]) -> int | None:
    """The indentation of a block scalar's content, found the way libyaml finds it, from its header line
    (which ends at `header_end`); None when it has no content, or its parent's indentation is not on the
    header line."""
    if header.group("key") is not None:
        parent = len(header.group("indent")) + len(header.group("indicators"))
    elif header.group("indicators"):
        indicators = header.group("indicators")
        parent = len(header.group("indent")) + max(indicators.rfind(mark) for mark in "-?:")
    else:
        return None  # `|` alone on its line
    digit = header.group("digit") or header.group("late")
    if digit:
        return parent + int(digit)
    widest = 0
    position = header_end
    while position < len(padded):
        start = position + 1
        end = line_end(padded, start, len(padded))
        indent = _indentation(padded, start)
        if indent < end - start:
            content = max(indent, widest, parent + 1)
            return content if indent == content else None
        widest = max(widest, end - start)
        position = end
    return None


def _shallowest(padded: str, start: int, end: int, low: int) -> int:
    """The least indentation of a line (neither blank nor empty) starting in padded[start:end], if less than
    `low`; `low` otherwise."""
    while low > 0:
        limit = min(low, 1000)
        pattern = _SHALLOWER.get(limit)
        if pattern is None:
            pattern = _SHALLOWER[limit] = re.compile(rf"\n([ ]{{0,{limit - 1}}})(?=[^ \n])")
        found = pattern.search(padded, start, end)
        if found is None:
            return low
        low, start = len(found.group(1)), found.end()
    return 0


def _quote_end(padded: str, at: int) -> int:
    """Where a quoted scalar opened at `at` closes (the end of the text when it never does)."""
    closed = _QUOTED[padded[at]].match(padded, at)
    return len(padded) if closed is None else closed.end()


def _flow_end(padded: str, at: int) -> int:
    """Where a flow collection opened at `at` closes (the end of the text when it never does), read the
    way libyaml reads one: quotes open scalars only where a node may start, `#` after a blank starts a
    comment. Where it guesses, it guesses long, never short."""
    depth = 0
    index = at
    length = len(padded)
    while index < length:
        char = padded[index]
        if char in "[{":
            depth += 1
            index += 1
        elif char in "]}":
            depth -= 1
            index += 1
            if depth == 0:
                return index
        elif char in "\"'":
            if padded[index - 1] in " \t\n[{,:":
                index = _quote_end(padded, index)
            else:
                index += 1  # inside a plain scalar
        elif char == "#":
            index = line_end(padded, index, length) if padded[index - 1] in " \t\n" else index + 1
        elif char == "\n":
            if _DOCUMENT_MARKER.match(padded, index + 1):
                return length
            index += 1
        else:
            index = _FLOW_TEXT.match(padded, index).end()  # type: ignore[union-attr]  # one char at least
    return length


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
