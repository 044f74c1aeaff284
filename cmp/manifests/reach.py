"""How far the quotes and flow collections of a document that span lines may reach: its floor.

structure.py says why the floor is all a line-by-line reading needs. It is worked out from every
character that may open a quote or flow spanning lines (a quote, `[` or `{` that follows a blank, a flow
indicator or `:`, and does not close on its line: a superset of the real openers), each followed to where
it would close and the least indentation of the lines it would span taken. Some open nothing, and are
passed over when what they would reach matters: one inside a plain scalar or a comment on its line (read
as if that line were structure), one in a block scalar's content (found by walking back to the block's
header), and one inside a quote or flow that surely opens (it starts a node on a line that is structure,
inside nothing followed before it), whose content it is. A header that vouched so is itself checked
against every quote and flow followed. An alias, or a tag of YAML's own, sends the document to the exact
reading.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import NamedTuple

from cmp.manifests.lines import content_lines, line_end

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


class _Followed(NamedTuple):
    """A quote or flow followed to its end: where it opens and ends, and the farthest end of those followed
    before it (what may hold it)."""

    start: int
    end: int
    covered_to: int


# Following a quote or flow that reaches lines indented less than this, it is worth finding out whether
# it opens anything at all.
_WORTH_A_LOOK = 8


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


def floor(padded: str, found: Marks | None = None) -> int:
    """The shallowest indentation a quote or flow spanning lines may reach in the document (NO_FLOOR when
    none spans lines); 0 when one may reach a top-level line, or an alias or a tag of YAML's own may be
    there: the exact reading then decides. `found` are its marks, when already found."""
    found = marks(padded) if found is None else found
    if not found.openers and not found.values:
        return NO_FLOOR
    return _Reach(padded).floor(found)


class _Reach:
    """One document's openers, followed in the text's order; what is worked out once is kept."""

    def __init__(self, padded: str) -> None:
        self.padded = padded
        self.followed: list[_Followed] = []
        self.headers: list[int] = []  # block scalars whose content was taken to hold what looked like an opener
        self.real: dict[int, bool] = {}  # whether a followed opener surely opens a quote or flow
        self.blocks: list[tuple[int, int]] | None = None  # the block scalars, listed when first needed

    def floor(self, found: Marks) -> int:
        padded = self.padded
        low = NO_FLOOR
        farthest = 0
        for at in found.openers:
            if _inert(padded, at):
                continue  # inside a plain scalar or a comment: no opener
            if padded[at] in "\"'":
                end = _quote_end(padded, at)
            else:  # a flow that does not close soon is asked about first: it costs more to follow than a quote
                end = _flow_end(padded, at, _FLOW_GLANCE)
                if end < 0 and at < farthest and self.nested(at):
                    continue  # a quote's content
                end = end if end >= 0 else _flow_end(padded, at, _FLOW_SPAN)
            if _shallower(_WORTH_A_LOOK).search(padded, at, end) is not None:
                if (at < farthest and self.nested(at)) or self.in_block_scalar(at):
                    continue  # a quote's content, or a block scalar's
                low = _shallowest(padded, at, end, low)
                if low == 0:
                    return 0
            elif low > _WORTH_A_LOOK:
                low = _shallowest(padded, at, end, low)
            self.followed.append(_Followed(at, end, farthest))
            farthest = max(farthest, end)
        flows = [(entry.start, entry.end) for entry in self.followed if padded[entry.start] in "[{"]
        for at in found.values:
            # (a flow's lines are no block lines: `,` and `[` mean something there)
            inside_flow = any(start < at < end for start, end in flows)
            if (not _inert(padded, at) or inside_flow) and not self.in_block_scalar(at):
                return 0
        checked = 0
        while checked < len(self.headers):  # a header that vouched may itself sit inside a quote or flow
            header = self.headers[checked]
            checked += 1
            for entry in self.covering(header):
                if not self.nested(entry.start) and not self.in_block_scalar(entry.start):
                    return 0
        return low

    def covering(self, at: int) -> list[_Followed]:
        """The quotes and flows followed whose span holds `at` (those before it that reach past it)."""
        found = []
        for entry in reversed(self.followed):
            if entry.start < at < entry.end:
                found.append(entry)
            if entry.covered_to <= at and entry.start < at:
                break  # nothing before this one reaches `at`
        return found

    def nested(self, at: int) -> bool:
        """Whether `at` lies inside a quote or flow followed before it that surely opens one: then it is
        that scalar's or collection's content. (Only one that opens surely vouches: a quote that merely
        looks like one may hide a real opener within what it would span.)"""
        return any(self.surely_opens(entry.start) for entry in self.covering(at))

    def surely_opens(self, at: int) -> bool:
        """Whether the quote or flow followed at `at` surely opens: it starts a node on its line, and that
        line is structure (no block scalar's content, no plain scalar going on from the line above, inside
        no quote or flow followed before it, unless that one is the content of one that surely opens)."""
        known = self.real.get(at)
        if known is not None:
            return known
        self.real[at] = False  # (while it is worked out: what it would vouch for cannot vouch for it)
        padded = self.padded
        line_start = padded.rfind("\n", 0, at) + 1
        answer = (
            _NODE_BEFORE.fullmatch(padded, line_start, at) is not None
            and self.holder_of(line_start) is None
            and not _plain_may_go_on(padded, line_start)
            and all(self.nested(entry.start) for entry in self.covering(at))
        )
        self.real[at] = answer
        return answer

    def in_block_scalar(self, at: int) -> bool:
        """Whether `at` lies in the content of a block scalar; its header is recorded, to be checked
        against every quote and flow followed."""
        header = self.holder_of(self.padded.rfind("\n", 0, at) + 1)
        if header is not None:
            self.headers.append(header)
        return header is not None

    def holder_of(self, line_start: int) -> int | None:
        """The header of a block scalar whose content holds the line, or None."""
        if self.blocks is None:
            self.blocks = _block_scalars(self.padded)
        found = bisect.bisect_left(self.blocks, (line_start,)) - 1
        if found >= 0 and line_start < self.blocks[found][1]:
            return self.blocks[found][0]
        return None


# Where a line may be a block scalar's header: `|` or `>`, then only their indicators (or a comment).
# (One pattern each: a pattern that starts with a literal character is searched for fast.)
_HEADER_ENDS = tuple(re.compile(rf"{mark}(?=[-+1-9]{{0,2}}[ \t]*+(?:#[^\n]*+)?(?:\n|\Z))") for mark in (r"\|", ">"))


def _block_scalars(padded: str) -> list[tuple[int, int]]:
    """(header line start, content end) of each block scalar, in order, read the way libyaml reads them;
    a header inside another's content is content."""
    found: list[tuple[int, int]] = []
    covered = 0
    for mark in sorted(found.start() for pattern in _HEADER_ENDS for found in pattern.finditer(padded)):
        if mark < covered:
            continue
        start = padded.rfind("\n", 0, mark) + 1
        end = line_end(padded, mark, len(padded))
        header = _BLOCK_HEADER.fullmatch(padded, start, end)
        content = None if header is None else _content_indent(padded, end, header)
        if content is None:
            continue
        stop = content_lines(content).match(padded, end).end()  # type: ignore[union-attr]  # matches empty
        if stop > end:
            found.append((start, stop))
            covered = stop
    return found


# Where a node starts on a line of block structure: indentation, indicators, a key, properties.
_NODE_BEFORE = re.compile(
    r"[ ]*+(?:[-?:][ \t]++)*+"
    rf"(?:{_PROPERTIES}(?:{_PLAIN_FIRST}{_PLAIN_REST}*+|{_DOUBLE}|{_SINGLE})[ \t]*+:[ \t]++)?{_PROPERTIES}"
)


# A line of block structure: indentation, indicators, maybe a key, then what its value starts with.
_LINE = re.compile(
    r"(?P<indent>[ ]*+)(?P<indicators>(?:[-?:][ \t]++)*+)"
    rf"(?:(?P<key>(?:{_PLAIN_FIRST}{_PLAIN_REST}*+|{_DOUBLE}|{_SINGLE}))[ \t]*+:(?:[ \t]++|$))?"
    rf"{_PROPERTIES}(?P<value>[^\n]*+)"
)


def _plain_may_go_on(padded: str, line_start: int) -> bool:
    """Whether the line starting at `line_start` may go on a plain scalar of the line above (the nearest
    one not blank): that line's value is a plain scalar whose parent is less indented than this line, or
    the line above cannot be read as structure."""
    end = line_start - 1
    while end > 0:
        start = padded.rfind("\n", 0, end) + 1
        if padded[start:end].strip(" "):
            break
        end = start - 1
    else:
        return False
    above = _LINE.fullmatch(padded, start, end)
    if above is None:
        return True
    value = above.group("value")
    if not value or value.startswith("#"):
        return False  # a comment ends a plain scalar; an empty value makes the next line a node of its own
    if value[0] in "|>\"'[{":
        return True  # a block scalar's content, or a quote or flow going on: not structure
    if above.group("key") is None and not above.group("indicators"):
        return True  # the line above is itself the rest of something
    parent = len(above.group("indent")) + (len(above.group("indicators")) if above.group("key") else 0)
    if above.group("key") is None:
        indicators = above.group("indicators")
        parent = len(above.group("indent")) + max(indicators.rfind(mark) for mark in "-?:")
    return _indentation(padded, line_start) > parent and " #" not in value


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
        found = _shallower(low).search(padded, start, end)
        if found is None:
            return low
        low, start = len(found.group(1)), found.end()
    return 0


def _quote_end(padded: str, at: int) -> int:
    """Where a quoted scalar opened at `at` closes (the end of the text when it never does)."""
    closed = _QUOTED[padded[at]].match(padded, at)
    return len(padded) if closed is None else closed.end()


_FLOW_GLANCE = 1 << 9  # how far a flow is followed before asking whether it opens at all
_FLOW_SPAN = 1 << 12  # a flow longer than this is taken to reach the end (it is no flow helm writes)


def _flow_end(padded: str, at: int, span: int) -> int:
    """Where a flow collection opened at `at` closes, read the way libyaml reads one: quotes open scalars
    only where a node may start, `#` after a blank starts a comment. Where it guesses, it guesses long,
    never short. The end of the text when it never closes (or at a document marker), or does not within
    `span` characters: then -1 if `span` is the glance, the end of the text otherwise."""
    depth = 0
    index = at
    length = len(padded)
    stop = min(length, at + span)
    while index < stop:
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
    return -1 if index < length and span == _FLOW_GLANCE else length
