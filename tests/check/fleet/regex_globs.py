"""The reference the glob automata (cmp/check/fleet/globs.py) are held to: the regular expressions check
translated each dialect to before (right on every input, but backtracking: twelve stars take minutes).

They differ where it matters: a git generator's `directories` use Go's path.Match (`*` stops at `/`); its
`files` go to `git ls-files` as a pathspec (`*` crosses `/`, and a pattern without wildcards also names
every file under that folder); a directory source's `include` and `exclude` use gobwas/glob without
separators (`*` crosses `/`, and `{a,b}` picks one of several patterns). A pattern none of them can read
raises BadPattern, so a typo is reported rather than quietly matching nothing.
"""

from __future__ import annotations

import functools
import re

from cmp.check.fleet.globs import BadPattern

_WILDCARDS = frozenset("*?[")


def path_match(pattern: str, name: str) -> bool:
    """Go's path.Match: `*` and `?` never match `/`; `[^...]` negates a class."""
    return _compiled("path", pattern).fullmatch(name) is not None


def pathspec_match(pattern: str, path: str) -> bool:
    """git's default pathspec: wildcards cross `/`; a literal pattern names a file or a whole folder."""
    if not _WILDCARDS.intersection(pattern):
        folder = pattern.rstrip("/")
        return path == folder or path.startswith(folder + "/") or folder in ("", ".")
    return _compiled("pathspec", pattern).fullmatch(path) is not None


def gobwas_match(pattern: str, text: str) -> bool:
    """gobwas/glob compiled without separators: `*` crosses `/`, `[!...]` negates, `{a,b}` alternates."""
    return _compiled("gobwas", pattern).fullmatch(text) is not None


@functools.lru_cache(maxsize=512)
def _compiled(dialect: str, pattern: str) -> re.Pattern[str]:
    regex, end = _translate(dialect, pattern, 0, inside_braces=False)
    if end != len(pattern):
        raise BadPattern(f"glob {pattern!r}: unexpected {pattern[end]!r} at position {end}")
    return re.compile(regex, re.S)


def _translate(dialect: str, pattern: str, position: int, *, inside_braces: bool) -> tuple[str, int]:
    """The regex for pattern[position:], up to the end (or, inside braces, to the next `,` or `}`)."""
    star, single = ("[^/]*", "[^/]") if dialect == "path" else (".*", ".")
    out: list[str] = []
    while position < len(pattern):
        char = pattern[position]
        if inside_braces and char in ",}":
            break
        if char == "*":
            out.append(star)
        elif char == "?":
            out.append(single)
        elif char == "[":
            regex, position = _character_class(dialect, pattern, position)
            out.append(regex)
            continue
        elif char == "\\":
            if position + 1 == len(pattern):
                raise BadPattern(f"glob {pattern!r} ends with a lone backslash")
            position += 1
            out.append(re.escape(pattern[position]))
        elif char == "{" and dialect == "gobwas":
            regex, position = _alternatives(pattern, position)
            out.append(regex)
            continue
        else:
            out.append(re.escape(char))
        position += 1
    return "".join(out), position


def _alternatives(pattern: str, position: int) -> tuple[str, int]:
    """`{a,b,...}` at `position`: one of the comma-separated patterns, each read as a glob itself."""
    choices: list[str] = []
    position += 1
    while True:
        regex, position = _translate("gobwas", pattern, position, inside_braces=True)
        choices.append(regex)
        if position >= len(pattern):
            raise BadPattern(f"glob {pattern!r} opens a '{{' it never closes")
        if pattern[position] == "}":
            return "(?:" + "|".join(choices) + ")", position + 1
        position += 1  # past the comma


def _character_class(dialect: str, pattern: str, position: int) -> tuple[str, int]:
    """`[...]` at `position`: ranges, escapes, and negation (`^` in Go's dialect, `!` or `^` elsewhere)."""
    end = position + 1
    negated = False
    if end < len(pattern) and (pattern[end] == "^" or (pattern[end] == "!" and dialect != "path")):
        negated = True
        end += 1
    members: list[str] = []
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
            members.append(f"{re.escape(char)}-{re.escape(high)}")
            end += 3
        else:
            members.append(re.escape(char))
            end += 1
        first = False
    if end >= len(pattern) or not members:
        raise BadPattern(f"glob {pattern!r} has an unclosed or empty '['")
    return f"[{'^' if negated else ''}{''.join(members)}]", end + 1
