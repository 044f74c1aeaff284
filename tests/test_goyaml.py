"""Scalars read the way go-yaml reads them, and written back so that go-yaml reads the same value."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from cmp import goyaml


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("=", "="),  # PyYAML's !!value, found in popular CRDs' enums
        ("1:20", "1:20"),  # not sexagesimal
        ("1e3", 1000.0),
        ("y", True),
        ("N", False),
        ("on", True),
        ("017", 15),  # Go base-0 octal
        ("0x1F", 31),
        ("0b101", 5),
        ("1_000", 1000),
        ("09", 9.0),
        ("~", None),
        ("", None),
        ("8080:80", "8080:80"),
        ("2001-12-14", "2001-12-14T00:00:00Z"),
        ("2001-12-14T21:59:43-05:00", "2001-12-14T21:59:43-05:00"),
        ("'2001-12-14'", "2001-12-14"),
        ("'yes'", "yes"),
    ],
)
def test_plain_scalars_resolve_like_go_yaml(text: str, value: object) -> None:
    assert goyaml.load(f"v: {text}") == {"v": value}


def test_infinity_and_nan_are_floats() -> None:
    loaded = goyaml.load("a: .inf\nb: -.Inf\nc: .nan")
    assert loaded["a"] == math.inf and loaded["b"] == -math.inf and math.isnan(loaded["c"])


@pytest.mark.parametrize("text", ["yes", "y", "1e3", "017", "0x1F", "2001-12-14", "null", "~", "", "1_0", ".5"])
def test_strings_that_look_like_other_types_are_quoted(text: str) -> None:
    dumped = goyaml.dump({"v": text})
    assert goyaml.load(dumped) == {"v": text}
    assert dumped != f"v: {text}\n"


def test_dump_never_writes_anchors() -> None:
    shared = {"a": 1}
    assert "&" not in goyaml.dump({"x": shared, "y": shared})


def test_multiline_strings_use_literal_blocks() -> None:
    assert goyaml.dump({"script": "echo one\necho two\n"}) == "script: |\n  echo one\n  echo two\n"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_dump_then_load_is_the_identity(value: object) -> None:
    assert goyaml.load(goyaml.dump({"v": value})) == {"v": value}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1e_", "1e_"),  # go-yaml strips `_`, fails to parse `1e`, keeps the text
        ("._", "._"),
        ("1e999", "1e999"),  # out of float64 range: Go's ParseFloat fails, so a string
        ("9" * 5000, "9" * 5000),  # beyond int64/uint64 and float64: a string, never Infinity
        ("18446744073709551615", 18446744073709551615),  # uint64 max is still an integer
        ("18446744073709551616", 1.8446744073709552e19),  # one more: Go falls back to a float
        ("0o" + "7" * 5000, "0o" + "7" * 5000),
        ("008", 8.0),  # found by fuzz/fuzz.py: not octal, so Go's ParseFloat reads it (int("008", 8) crashed)
        ("!!binary aGVsbG8=", "hello"),  # go-yaml decodes !!binary into a string
        ("!!set {a, b}", {"a": None, "b": None}),
        ("!!omap [{a: 1}]", [{"a": 1}]),
    ],
)
def test_odd_scalars_read_as_go_yaml_reads_them(text: str, value: object) -> None:
    assert goyaml.load(f"x: {text}\n") == {"x": value}


@pytest.mark.parametrize("text", ["!!bool maybe", "!!float abc", "!!int zz", "!!binary '*'"])
def test_an_explicit_tag_the_text_does_not_fit_is_a_yaml_error(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        goyaml.load(f"x: {text}\n")


def _laughs(levels: int, fanout: int = 10) -> str:
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fanout) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_anything_expands_it() -> None:
    with pytest.raises(yaml.YAMLError, match="excessive aliasing"):
        goyaml.load(_laughs(10))  # a billion "lol"s in a few hundred bytes


def test_modest_anchors_and_merges_load_as_go_yaml_reads_them() -> None:
    assert goyaml.load(_laughs(3)) == {"a0": ["lol"], "a1": [["lol"]] * 10, "a2": [[["lol"]] * 10] * 10}
    assert goyaml.load("a: &x {b: 1}\nc: {<<: *x, d: 2}\n") == {"a": {"b": 1}, "c": {"b": 1, "d": 2}}


def test_an_anchor_that_contains_itself_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="contains itself"):
        goyaml.load("a: &x [1, *x]\n")


def test_every_document_of_a_stream_gets_the_alias_guard() -> None:
    assert list(goyaml.load_all("a: &x [1]\nb: *x\n---\n---\nc: 2\n")) == [{"a": [1], "b": [1]}, None, {"c": 2}]
    with pytest.raises(yaml.YAMLError, match="excessive aliasing"):
        list(goyaml.load_all("ok: 1\n---\n" + _laughs(10)))
