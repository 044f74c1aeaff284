"""The glob dialects as automata: held to the regular expressions they replace on small inputs, and
linear where those backtrack (a directory source's `include:` of twelve stars over a long name)."""

from __future__ import annotations

import time

import pytest
import regex_globs
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp.check.fleet import globs

DIALECTS = {"gobwas": globs.gobwas_match, "path": globs.path_match, "pathspec": globs.pathspec_match}
REFERENCE = {
    "gobwas": regex_globs.gobwas_match,
    "path": regex_globs.path_match,
    "pathspec": regex_globs.pathspec_match,
}


def _outcome(match: object, pattern: str, text: str) -> bool | str:
    try:
        return bool(match(pattern, text))  # type: ignore[operator]
    except globs.BadPattern:
        return "bad pattern"


@settings(max_examples=3000, deadline=None)
@given(
    st.sampled_from(sorted(DIALECTS)),
    st.text(alphabet="ab/.*?[]!^-{},\\", max_size=10),
    st.text(alphabet="ab/.-]{},\\", max_size=8),
)
def test_each_dialect_matches_as_the_regular_expression_it_replaces(dialect: str, pattern: str, text: str) -> None:
    assert _outcome(DIALECTS[dialect], pattern, text) == _outcome(REFERENCE[dialect], pattern, text)


@pytest.mark.parametrize(
    ("dialect", "pattern", "text", "expected"),
    [
        ("gobwas", "*.yaml", "a/b/c.yaml", True),
        ("gobwas", "{app,base}/*.{yaml,json}", "base/x.json", True),
        ("gobwas", "[!a]*", "ab", False),
        ("path", "apps/*", "apps/a/b", False),
        ("path", "apps/?", "apps/x", True),
        ("pathspec", "apps", "apps/a/values.yaml", True),
        ("pathspec", "apps/*.yaml", "apps/a/b.yaml", True),
    ],
)
def test_what_each_dialect_means(dialect: str, pattern: str, text: str, expected: bool) -> None:
    assert DIALECTS[dialect](pattern, text) is expected


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_twelve_stars_over_a_long_name_end_at_once(dialect: str) -> None:
    """`*a*a*...*b` against a long run of `a`: a backtracking matcher tries every split (over 60 s for
    gobwas' include: before); the automaton visits each state once per character."""
    pattern = "*a" * 12 + "*b"
    name = "a" * 4000
    started = time.monotonic()
    assert DIALECTS[dialect](pattern, name) is False
    assert DIALECTS[dialect](pattern, name + "b") is True
    assert time.monotonic() - started < 10, "linear: a fraction of a second, generous for a loaded machine"


@pytest.mark.parametrize("pattern", ["[a", "{a,b", "a\\", "[]", "[b-a]"])
def test_a_malformed_pattern_is_refused(pattern: str) -> None:
    with pytest.raises(globs.BadPattern):
        globs.gobwas_match(pattern, "a")
