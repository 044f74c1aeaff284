"""The three glob dialects Argo CD matches repository paths with, each compiled to an automaton.

They differ where it matters: a git generator's `directories` use Go's path.Match (`*` stops at `/`); its
`files` go to `git ls-files` as a pathspec (`*` crosses `/`, and a pattern without wildcards also names
every file under that folder); a directory source's `include` and `exclude` use gobwas/glob without
separators (`*` crosses `/`, and `{a,b}` picks one of several patterns). A pattern none of them can read
raises BadPattern, so a typo is reported rather than quietly matching nothing.

A pattern is tenant input, so it is matched by simulating its automaton (a set of states advanced one
character at a time, as gobwas/glob and Go's path.Match never backtrack either): time linear in the name
for a given pattern, where a regular expression of twelve stars backtracks for minutes. The regular
expressions this module once built are kept by its tests as the reference it is held to.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

_WILDCARDS = frozenset("*?[")


class BadPattern(ValueError):
    """A glob its dialect refuses (an unclosed `[` or `{`, a trailing backslash)."""


def path_match(pattern: str, name: str) -> bool:
    """Go's path.Match: `*` and `?` never match `/`; `[^...]` negates a class."""
    return _compiled("path", pattern).matches(name)


def pathspec_match(pattern: str, path: str) -> bool:
    """git's default pathspec: wildcards cross `/`; a literal pattern names a file or a whole folder."""
    if not _WILDCARDS.intersection(pattern):
        folder = pattern.rstrip("/")
        return path == folder or path.startswith(folder + "/") or folder in ("", ".")
    return _compiled("pathspec", pattern).matches(path)


def gobwas_match(pattern: str, text: str) -> bool:
    """gobwas/glob compiled without separators: `*` crosses `/`, `[!...]` negates, `{a,b}` alternates."""
    return _compiled("gobwas", pattern).matches(text)


class _Test(NamedTuple):
    """What one character must be: `ranges` of characters (a literal is one range), or any character
    (`ranges` None); `negated` turns it round; `slash` says whether `/` may be it (not for path's `*`, `?`)."""

    ranges: tuple[tuple[str, str], ...] | None
    negated: bool = False
    slash: bool = True

    def __call__(self, char: str) -> bool:
        if char == "/" and not self.slash:
            return False
        if self.ranges is None:
            return True
        return any(low <= char <= high for low, high in self.ranges) != self.negated


class _Step(NamedTuple):
    """A state: `test` consumes one character to `out`; a `loop` (a star) stays on it and may also move on
    to `out` without consuming; without a test, `outs` are moves that consume nothing (`{a,b}`, the end)."""

    test: _Test | None
    out: int
    loop: bool = False
    outs: tuple[int, ...] = ()


class _Automaton:
    """States in a list (0: the accepting one); `start` the first."""

    def __init__(self) -> None:
        self.states: list[_Step] = [_Step(None, -1)]
        self.start = 0

    def add(self, step: _Step) -> int:
        self.states.append(step)
        return len(self.states) - 1

    def matches(self, text: str) -> bool:
        """Whether the whole of `text` matches: every state the text so far can be in, one character at a
        time (at most one visit per state per character: linear time, whatever the pattern)."""
        current = self._closure([self.start])
        for char in text:
            moved = []
            for index in current:
                state = self.states[index]
                if state.test is not None and state.test(char):
                    moved.append(index if state.loop else state.out)
            if not moved:
                return False
            current = self._closure(moved)
        return 0 in current

    def _closure(self, indexes: list[int]) -> set[int]:
        """The states reachable from `indexes` without consuming a character."""
        seen: set[int] = set()
        pending = list(indexes)
        while pending:
            index = pending.pop()
            if index in seen:
                continue
            seen.add(index)
            state = self.states[index]
            if state.test is None:
                pending.extend(state.outs)
            elif state.loop:
                pending.append(state.out)
        return seen


# A pattern read into a sequence of items: a character test, a star (a test repeated), or alternatives.
_Item = tuple[str, object]


@functools.lru_cache(maxsize=512)
def _compiled(dialect: str, pattern: str) -> _Automaton:
    items, end = _parse(dialect, pattern, 0, inside_braces=False)
    if end != len(pattern):
        raise BadPattern(f"glob {pattern!r}: unexpected {pattern[end]!r} at position {end}")
    automaton = _Automaton()
    automaton.start = _build(automaton, items, 0)
    return automaton


def _build(automaton: _Automaton, items: list[_Item], after: int) -> int:
    """The state that matches `items` and then goes on to `after` (built from the end backwards)."""
    for kind, value in reversed(items):
        if kind == "one":
            assert isinstance(value, _Test)
            after = automaton.add(_Step(value, after))
        elif kind == "star":
            assert isinstance(value, _Test)
            after = automaton.add(_Step(value, after, loop=True))
        else:
            assert isinstance(value, list)
            after = automaton.add(_Step(None, after, outs=tuple(_build(automaton, choice, after) for choice in value)))
    return after


def _parse(dialect: str, pattern: str, position: int, *, inside_braces: bool) -> tuple[list[_Item], int]:
    """The items of pattern[position:], up to the end (or, inside braces, to the next `,` or `}`)."""
    slash = dialect != "path"  # Go's path.Match: `*` and `?` never match `/`
    any_char = _Test(None, slash=slash)
    out: list[_Item] = []
    while position < len(pattern):
        char = pattern[position]
        if inside_braces and char in ",}":
            break
        if char == "*":
            out.append(("star", any_char))
        elif char == "?":
            out.append(("one", any_char))
        elif char == "[":
            test, position = _character_class(dialect, pattern, position)
            out.append(("one", test))
            continue
        elif char == "\\":
            if position + 1 == len(pattern):
                raise BadPattern(f"glob {pattern!r} ends with a lone backslash")
            position += 1
            out.append(("one", _literal(pattern[position])))
        elif char == "{" and dialect == "gobwas":
            choices, position = _alternatives(pattern, position)
            out.append(("any of", choices))
            continue
        else:
            out.append(("one", _literal(char)))
        position += 1
    return out, position


def _literal(char: str) -> _Test:
    return _Test(((char, char),))


def _alternatives(pattern: str, position: int) -> tuple[list[list[_Item]], int]:
    """`{a,b,...}` at `position`: one of the comma-separated patterns, each read as a glob itself."""
    choices: list[list[_Item]] = []
    position += 1
    while True:
        items, position = _parse("gobwas", pattern, position, inside_braces=True)
        choices.append(items)
        if position >= len(pattern):
            raise BadPattern(f"glob {pattern!r} opens a '{{' it never closes")
        if pattern[position] == "}":
            return choices, position + 1
        position += 1  # past the comma


def _character_class(dialect: str, pattern: str, position: int) -> tuple[_Test, int]:
    """`[...]` at `position`: ranges, escapes, and negation (`^` in Go's dialect, `!` or `^` elsewhere)."""
    end = position + 1
    negated = False
    if end < len(pattern) and (pattern[end] == "^" or (pattern[end] == "!" and dialect != "path")):
        negated = True
        end += 1
    members: list[tuple[str, str]] = []
    first = True
    while end < len(pattern) and (pattern[end] != "]" or (first and dialect == "pathspec")):
        char = pattern[end]
        if char == "\\" and end + 1 < len(pattern):
            end += 1
            char = pattern[end]
        if end + 2 < len(pattern) and pattern[end + 1] == "-" and pattern[end + 2] != "]":
            high = pattern[end + 2]
            if high < char:
                raise BadPattern(f"glob {pattern!r} has the empty range {char}-{high}")
            members.append((char, high))
            end += 3
        else:
            members.append((char, char))
            end += 1
        first = False
    if end >= len(pattern) or not members:
        raise BadPattern(f"glob {pattern!r} has an unclosed or empty '['")
    return _Test(tuple(members), negated), end + 1
