"""How far the quotes and flow collections of a document that span lines may reach: its floor.

structure.py says why the floor is all a line-by-line reading needs. Every character that may open a quote
or flow spanning lines (a quote, `[` or `{` after a blank, a flow indicator or `:` that does not close on
its line), every alias or tag of YAML's own, is found beforehand by a few literal-first searches (once for
a whole stream): the marks.

A glance comes first: each mark followed as if it opened (every real one is among them), the least
indentation they reach taken. When that is deep enough for what the scan and the text edits read, it is
the floor. Otherwise one reader works it out in one pass over the document's lines, in order, keeping what
each line leaves open (a plain scalar that may go on onto deeper lines, the collection a node alone on the
next line belongs to), and stopping only at the lines holding a mark or what may be a block scalar's
header. Such a line is read as the parser reads block structure, its state taken from the lines above
(each read once, and only back to a key's line, which reads the same whatever precedes it): on a plain
scalar going on, it holds only text; otherwise its node decides, and a quote, flow or block scalar it
opens is followed to its end and passed over whole, so what looked like an opener inside is its content.
Whatever the reader cannot vouch for (an alias, a tag of YAML's own, a quote or flow that never closes, a
line whose state is unknown opening something that spans lines) gives 0: the exact reading decides.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import NamedTuple

from cmp.manifests.lines import content_lines, line_end

NO_FLOOR = 1 << 30

# A quote's content on one line, and quoted scalars on one line (unrolled: a run of plain characters at a time).
_DOUBLE_REST = r'[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
_SINGLE_REST = r"[^'\n]*+(?:''[^'\n]*+)*+'"
_DOUBLE = f'"{_DOUBLE_REST}'
_SINGLE = f"'{_SINGLE_REST}"
_FLAT_FLOW_ITEM = rf"(?:[^\n\"'\[\]{{}}#&*!]++|{_DOUBLE}|{_SINGLE})"
# A character that may open a quote or flow spanning lines: it follows a blank, a flow indicator or `:`,
# and no closing quote (a closing bracket, with nothing nested or risky between) follows on its line.
# (One pattern each: a pattern that starts with a literal character is searched for fast.)
_OPENERS = tuple(
    re.compile(pattern)
    for pattern in (
        rf'"(?<=[ \t\n\[{{,:]")(?!{_DOUBLE_REST})',
        rf"'(?<=[ \t\n\[{{,:]')(?!{_SINGLE_REST})",
        rf"\[(?<=[ \t\n\[{{,:]\[)(?!{_FLAT_FLOW_ITEM}*+\])",
        rf"\{{(?<=[ \t\n\[{{,:]\{{)(?!{_FLAT_FLOW_ITEM}*+\}})",
    )
)
# A quoted scalar, spanning lines or not.
_QUOTED = {'"': re.compile(r'"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"'), "'": re.compile(r"'[^']*+(?:''[^']*+)*+'")}
_DOCUMENT_MARKER = re.compile(r"(?:---|\.\.\.)(?=[ \t\n]|\Z)")
_SHALLOWER: dict[int, re.Pattern[str]] = {}


# An alias, or a tag of YAML's own (`!!bool`, `!<tag:yaml.org,2002:int>`), where a node may start: what
# they make of a value only the exact reading can tell (an alias bomb, an anchor inside itself, a text a
# tag cannot hold are errors to Kubernetes too). Other tags (`!has(` in a wrapped CEL rule, say) go-yaml
# reads as plain strings.
_VALUE_MARKS = (re.compile(r"\*(?<=[ \t\n\[{,:]\*)[A-Za-z0-9_-]"), re.compile(r"!(?<=[ \t\n\[{,:]!)[!<]"))
_ANY_MARK = re.compile("|".join(pattern.pattern for pattern in (*_OPENERS, *_VALUE_MARKS)))


class Marks(NamedTuple):
    """Where a text holds characters that may open a quote or flow spanning lines, and aliases or tags of
    YAML's own (offsets in the text, newline put in front), each list in order."""

    openers: list[int]
    values: list[int]


def marks(padded: str, stretches: Sequence[tuple[int, int]] | None = None) -> Marks:
    """The marks of a text, or of those stretches of it alone (in order): found for a whole stream at
    once, then shared out among its documents."""
    spans = ((0, len(padded)),) if stretches is None else stretches
    return Marks(
        sorted(
            found.start()
            for openers in _OPENERS
            for start, end in spans
            for found in openers.finditer(padded, start, end)
        ),
        sorted(
            found.start()
            for values in _VALUE_MARKS
            for start, end in spans
            for found in values.finditer(padded, start, end)
        ),
    )


def first_mark(padded: str) -> int | None:
    """Where the text's first mark lies (see `marks`), or None when it has none: one search for any of
    them, which stops at the first (a pattern each would read a text without aliases or tags to its end
    twice: 15 against 2 ms on 61 real CRDs)."""
    found = _ANY_MARK.search(padded)
    return None if found is None else found.start()


def floor(padded: str, found: Marks | None = None) -> int:
    """The shallowest indentation a quote or flow spanning lines may reach in the document (NO_FLOOR when
    none spans lines); 0 when one may reach a top-level line, or an alias or a tag of YAML's own may be
    there, or the reading is unsure: the exact reading then decides. `found` are its marks, when already
    found."""
    found = marks(padded) if found is None else found
    if not found.openers and not found.values:
        return NO_FLOOR
    glance = _glance(padded, found)
    if glance >= _DEEP_ENOUGH:
        return glance
    headers = sorted(found.start() for pattern in _HEADER_ENDS for found in pattern.finditer(padded))
    try:
        return _Reader(padded).floor((found.openers, found.values, headers))
    except _Unsure:
        return 0


# A floor this deep leaves every line the scan and the text edits commonly read (the top level, metadata,
# a CRD's spec, a pod template's first levels) to the line-by-line reading.
_DEEP_ENOUGH = 8


def _glance(padded: str, found: Marks) -> int:
    """A floor no deeper than the document's, found without asking which marks really open anything: each
    followed as if it did (every real one is among them, and followed as the parser follows it), the
    least indentation they reach taken; 0 as soon as that is shallower than _DEEP_ENOUGH, or there is an
    alias or a tag of YAML's own, or following them costs more than one pass over the text (a mark inside
    another's content is followed again)."""
    low = NO_FLOOR
    budget = len(padded)
    flows: list[tuple[int, int]] = []
    for at in found.openers:
        try:
            end = _quote_end(padded, at) if padded[at] in "\"'" else _flow_end(padded, at, _FLOW_GLANCE)
        except _Unsure:
            return 0
        budget -= end - at
        low = _shallowest(padded, at, end, low)
        if low < _DEEP_ENOUGH or budget < 0:
            return 0
        if padded[at] in "[{":
            flows.append((at, end))
    for at in found.values:  # one where no node may start (in a scalar or comment on its line) is text
        line_start = padded.rfind("\n", 0, at) + 1
        if _NODE_BEFORE.fullmatch(padded, line_start, at) is not None or any(s < at < e for s, e in flows):
            return 0
    return low


class _Unsure(Exception):
    """The reading cannot vouch for what the document's lines are: the exact reading decides."""


# The state after a line: (threshold, pending). A plain scalar may go on onto the lines indented more than
# `threshold` (None: none goes on); a node alone on the next line belongs to a collection at `pending`.
_State = tuple[int | None, int | None]
_MAYBE: _State = (-2, None)  # unknown: the next line may go on a plain scalar, or be structure
_TOP: _State = (None, -1)  # before the first line


class _Reader:
    """One pass over a document's lines, in order, from one event (a mark, or what may be a block scalar's
    header) to the next: each event's line is read as block structure, unless it goes on a plain scalar
    (found from the lines above, each read once) or lies in what an earlier line opened (a quote, a flow,
    a block scalar's content), which is passed over whole."""

    def __init__(self, padded: str) -> None:
        self.padded = padded
        self.length = len(padded)
        self.resume = 0  # everything before this was read
        self.after: _State = _TOP  # the state after the last line read
        self.states: dict[int, _State] = {}  # line start -> state after it, for lines read from below
        self.low = NO_FLOOR

    def floor(self, events: Sequence[list[int]]) -> int:
        """The floor, reading the lines of `events` (lists of offsets, each in order) in order; the events
        in what a line read opens (a quote, flow or block scalar's content) are passed over."""
        padded = self.padded
        firsts = [0] * len(events)  # each list's first event not passed yet
        while True:
            at = min(
                (found[first] for found, first in zip(events, firsts, strict=True) if first < len(found)), default=-1
            )
            if at < 0:
                return self.low
            line_start = padded.rfind("\n", 0, at) + 1
            keyed = _KEYED.match(padded, line_start) is not None  # a key's line reads the same whatever is above
            self.resume, self.after = self.read(line_start, _TOP if keyed else self.before(line_start), keyed)
            firsts = [
                bisect.bisect_left(found, self.resume, first) for found, first in zip(events, firsts, strict=True)
            ]

    def before(self, line_start: int) -> _State:
        """The state before a line, from the nearest line above that is neither blank nor a comment (a
        comment ends a plain scalar; a node's parent carries over it), each line above read once."""
        padded = self.padded
        chain: list[tuple[int, bool]] = []  # lines above not read yet, nearest first, with a comment below
        position = line_start
        while True:
            above, comment = self.above(position)
            if above < 0:
                base = _TOP
            elif above < self.resume:
                base = self.after
            elif above in self.states:
                base = self.states[above]
            elif _KEYED.match(padded, above) is not None:  # a key's line reads the same whatever is above
                base = self.states[above] = self.read(above, _TOP, True)[1]
            else:
                chain.append((above, comment))
                position = above
                continue
            break
        state = _over_comment(base, comment)
        for above, gap in reversed(chain):
            state = self.states[above] = self.read(above, state, False)[1]
            state = _over_comment(state, gap)
        return state

    def above(self, line_start: int) -> tuple[int, bool]:
        """The start of the nearest line above that is neither blank nor a comment (-1 if none), and
        whether a comment line lies between."""
        padded = self.padded
        comment = False
        position = line_start
        while position > 1:
            start = padded.rfind("\n", 0, position - 1) + 1
            first = _BLANKS.match(padded, start).end()  # type: ignore[union-attr]  # matches empty
            if padded[first] == "#":
                comment = True
            elif padded[first] != "\n":
                return start, comment
            position = start
        return -1, comment

    def read(self, line_start: int, before: _State, keyed: bool) -> tuple[int, _State]:
        """Read the line at `line_start` (and whatever multi-line quote, flow or block scalar it opens),
        which starts with a key or not: where reading goes on, and the state after it."""
        padded = self.padded
        position = _SPACES.match(padded, line_start).end()  # type: ignore[union-attr]  # matches empty
        threshold, pending = before
        unsure = False
        if not keyed:
            if before is _MAYBE:
                unsure = True  # structure, or a plain scalar going on: nothing on it is vouched for
            elif threshold is not None and position - line_start > threshold:
                return line_end(padded, line_start, self.length), (threshold, None)  # a plain scalar going on
        parent: int | None = None
        while padded.startswith(_INDICATORS, position) and padded[position + 1 : position + 2] in _BLANK_OR_END:
            parent = position - line_start
            position = _BLANKS.match(padded, position + 1).end()  # type: ignore[union-attr]  # matches empty
        if parent is None and not keyed:  # a node alone on its line: its parent is above
            parent = pending
            unsure = unsure or pending is None
        end, state = self.node(line_start, position, parent, unsure)
        return end, _MAYBE if unsure else state

    def node(self, line_start: int, position: int, parent: int | None, unsure: bool) -> tuple[int, _State]:
        """Read a node starting at `position`, then the rest of its line (a key's value)."""
        padded = self.padded
        length = self.length
        keyed = False
        node_column = position - line_start
        while True:
            char = padded[position] if position < length else "\n"
            if char == "\n" or char == "#":  # an empty value
                end = line_end(padded, position, length)
                return end, (None, parent)
            if char in "&!":  # properties
                if char == "!" and padded[position + 1 : position + 2] in ("!", "<"):
                    raise _Unsure  # a tag of YAML's own
                position = _BLANKS.match(padded, _TOKEN.match(padded, position).end()).end()  # type: ignore[union-attr]
                continue
            if char in "\"'[{":
                end = _quote_end(padded, position) if char in "\"'" else _flow_end(padded, position)
                spans = padded.find("\n", position, end) >= 0
                after = _BLANKS.match(padded, end).end()  # type: ignore[union-attr]  # matches empty
                if padded.startswith(":", after) and padded[after + 1 : after + 2] in _BLANK_OR_END:
                    if spans or keyed:
                        raise _Unsure  # a key spanning lines, or a second key on a line
                    keyed, parent = True, node_column
                    position = _BLANKS.match(padded, after + 1).end()  # type: ignore[union-attr]
                    node_column = position - line_start
                    continue
                if spans:
                    if unsure:
                        raise _Unsure
                    self.low = _shallowest(padded, position, end, self.low)
                    if self.low == 0:
                        raise _Unsure
                if after < length and padded[after] not in "#\n":
                    raise _Unsure  # something after a quote or flow: not YAML as the scan reads it
                return line_end(padded, after, length), (None, None)
            if char in "|>":
                header = _HEADER_TAIL.match(padded, position)
                if header is None or parent is None or unsure:
                    raise _Unsure
                end = header.end()
                digit = header.group("digit") or header.group("late")
                content = parent + int(digit) if digit else _content_indent(padded, end, parent)
                if content is None:
                    return end, (None, None)
                stop = content_lines(content).match(padded, end).end()  # type: ignore[union-attr]  # matches empty
                return max(stop, end), (None, None)
            if (
                char == "*"
                or char in _RESERVED
                or (char in "-?:" and padded[position + 1 : position + 2] in _BLANK_OR_END)
            ):
                raise _Unsure  # an alias, a reserved indicator, an indicator after a key
            plain_end = _PLAIN_ON_LINE.match(padded, position).end()  # type: ignore[union-attr]  # matches empty
            if padded.startswith(":", plain_end):
                if keyed:
                    raise _Unsure  # `a: b: c`
                keyed, parent = True, node_column
                position = _BLANKS.match(padded, plain_end + 1).end()  # type: ignore[union-attr]
                node_column = position - line_start
                continue
            end = line_end(padded, plain_end, length)
            if plain_end < end:  # a comment ends it
                return end, (None, None)
            if parent is None:
                return end, _MAYBE
            return end, (parent, None)


def _over_comment(state: _State, comment: bool) -> _State:
    """The state past a comment line: no plain scalar goes on over it."""
    return (None, state[1]) if comment and state is not _MAYBE else state


_INDICATORS = ("-", "?", ":")
_BLANK_OR_END = ("", " ", "\t", "\n")
_RESERVED = "%@`\t"
_BLANKS = re.compile(r"[ \t]*+")
_TOKEN = re.compile(r"[^ \t\n]*+")
# A plain scalar's first character and the others on its line; properties (anchors, tags).
_PLAIN_FIRST = r"(?:[^-?:,\[\]{}#&*!|>'\"%@`\s]|[-?:](?=[^ \t\n]))"
_PLAIN_REST = r"(?:[^\n:#]|:(?=[^ \t\n])|(?<=[^ \t\n])#)"
_PROPERTIES = r"(?:[&!][^ \t\n]*+[ \t]++)*+"
# Where a node starts on a line of block structure: indentation, indicators, a key, properties.
_NODE_BEFORE = re.compile(
    r"[ ]*+(?:[-?:][ \t]++)*+"
    rf"(?:{_PROPERTIES}(?:{_PLAIN_FIRST}{_PLAIN_REST}*+|{_DOUBLE}|{_SINGLE})[ \t]*+:[ \t]++)?{_PROPERTIES}"
)
# A line starting with a key: indentation, indicators, properties, a plain or quoted key, `:` and a blank.
_KEYED = re.compile(
    r"[ ]*+(?:[-?:][ \t]++)*+"
    rf"{_PROPERTIES}(?:{_PLAIN_FIRST}{_PLAIN_REST}*+|{_DOUBLE}|{_SINGLE})[ \t]*+:(?:[ \t]|$)",
    re.MULTILINE,
)
# What a plain scalar holds on its line: up to `: ` (a key) or ` #` (a comment), or the line's end.
_PLAIN_ON_LINE = re.compile(r"(?:[^\n:#]|:(?=[^ \t\n])|(?<=[^ \t\n])#)*+")
# A block scalar's header from its `|` or `>`: its indicators, maybe a comment, to the line's end.
_HEADER_TAIL = re.compile(r"[|>](?:(?P<digit>[1-9])[-+]?|[-+](?P<late>[1-9])?)?[ \t]*+(?:#[^\n]*+)?(?=\n|\Z)")


# Where a line may be a block scalar's header: `|` or `>`, then only their indicators (or a comment).
# (One pattern each: a pattern that starts with a literal character is searched for fast.)
_HEADER_ENDS = tuple(re.compile(rf"{mark}(?=[-+1-9]{{0,2}}[ \t]*+(?:#[^\n]*+)?(?:\n|\Z))") for mark in (r"\|", ">"))


def _shallower(limit: int) -> re.Pattern[str]:
    """A line (the newline before it) neither blank nor indented as much as `limit`."""
    limit = min(limit, 1000)
    pattern = _SHALLOWER.get(limit)
    if pattern is None:
        pattern = _SHALLOWER[limit] = re.compile(rf"\n([ ]{{0,{limit - 1}}})(?=[^ \n])")
    return pattern


def _indentation(padded: str, line_start: int) -> int:
    return _SPACES.match(padded, line_start).end() - line_start  # type: ignore[union-attr]  # matches empty


_SPACES = re.compile(r"[ ]*+")


def _content_indent(padded: str, header_end: int, parent: int) -> int | None:
    """The indentation of a block scalar's content, found the way libyaml finds it, from its header line
    (which ends at `header_end`) and its parent's indentation; None when it has no content."""
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
        found = _shallower(low).search(padded, start, end)
        if found is None:
            return low
        low, start = len(found.group(1)), found.end()
    return 0


def _quote_end(padded: str, at: int) -> int:
    """Where a quoted scalar opened at `at` closes (the end of the text when it never does)."""
    closed = _QUOTED[padded[at]].match(padded, at)
    return len(padded) if closed is None else closed.end()


_FLOW_GLANCE = 1 << 9  # how far `_glance` follows a flow (one that goes on longer is asked about)


def _flow_end(padded: str, at: int, span: int = NO_FLOOR) -> int:
    """Where a flow collection opened at `at` closes, read the way the parser reads one: a quote opens a
    scalar only where a node starts, `#` after a blank starts a comment, `:` is an indicator after a
    node or before a blank or an indicator; _Unsure when it never closes (within `span` characters),
    meets a document marker, or holds an alias or a tag of YAML's own."""
    length = min(len(padded), at + span)
    depth = 0
    index = at
    state = _NODE
    while index < length:
        char = padded[index]
        if char in "[{":
            depth += 1
            index += 1
            state = _NODE
        elif char in "]}":
            depth -= 1
            index += 1
            if depth == 0:
                return index
            state = _AFTER
        elif char == ",":
            index += 1
            state = _NODE
        elif char == " " or char == "\t":
            index += 1
        elif char == "\n":
            if _DOCUMENT_MARKER.match(padded, index + 1):
                raise _Unsure
            index += 1
        elif char == "#" and padded[index - 1] in " \t\n":
            index = line_end(padded, index, length)
        elif state == _PLAIN and not (char == ":" and padded[index + 1 : index + 2] in _FLOW_BREAK):
            index = _FLOW_PLAIN.match(padded, index + 1).end()  # type: ignore[union-attr]  # matches empty
        elif char == ":" or (char == "?" and padded[index + 1 : index + 2] in _BLANK_OR_END):
            index += 1
            state = _NODE
        elif state == _NODE and char in "\"'":
            end = _QUOTED[char].match(padded, index)
            if end is None:
                raise _Unsure
            index = end.end()
            state = _AFTER
        elif state == _NODE and (char == "*" or (char == "!" and padded[index + 1 : index + 2] in ("!", "<"))):
            raise _Unsure  # an alias, or a tag of YAML's own
        elif state == _NODE and char in "&!":
            index = _FLOW_TOKEN.match(padded, index).end()  # type: ignore[union-attr]  # one char at least
        else:
            index = _FLOW_PLAIN.match(padded, index + 1).end()  # type: ignore[union-attr]  # matches empty
            state = _PLAIN
    raise _Unsure


_NODE, _PLAIN, _AFTER = range(3)  # in a flow: where a node may start, inside a plain scalar, after a node
_FLOW_BREAK = ("", " ", "\t", "\n", ",", "[", "]", "{", "}")
_FLOW_PLAIN = re.compile(r"[^\[\]{},:#\n \t]*+")
_FLOW_TOKEN = re.compile(r"[^ \t\n,\[\]{}]++")
