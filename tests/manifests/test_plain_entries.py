"""Entries read line by line when every line is plain (a CRD's `group`, `names` and `scope`): whatever that
reading answers, the loader answers the same; anything else is left to the loader."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cmp import goyaml
from cmp.manifests.lines import _plain_block, load_entries

KEYS = st.sampled_from(["kind", "plural", "group", "names", "a.b/c", "on", "y", "null", "x_1", "k-2", "Kind"])
VALUES = st.sampled_from(
    ["W", "widgets", "example.io", "a b", "a:b", "http://x/y", "1", "1.0", "true", "no", "~", "null", "-x",
     ".5", "0x1F", "2001-12-14", '"quoted"', "'single'", "'it''s'", '"esc\\"x"', "a # c", "a  b", "é", "&a x",
     "*a", "!t x", "[a]", "{a: b}", "|", ">-", "a: b", "a:", "x y:z"]
)  # fmt: skip


def _block(depth: int) -> st.SearchStrategy[Any]:
    leaf = VALUES
    if depth == 0:
        return leaf
    return st.one_of(
        leaf,
        st.lists(VALUES, min_size=1, max_size=3),
        st.dictionaries(KEYS, st.deferred(lambda: _block(depth - 1)), min_size=1, max_size=3),
    )


def _written(mapping: dict[str, Any], indent: int, step: int, indentless: bool) -> str:
    pad = " " * indent
    lines = []
    for key, value in mapping.items():
        if isinstance(value, dict):
            lines.append(f"{pad}{key}:\n" + _written(value, indent + step, step, indentless))
        elif isinstance(value, list):
            item_pad = pad if indentless else " " * (indent + step)
            lines.append(f"{pad}{key}:\n" + "".join(f"{item_pad}- {item}\n" for item in value))
        else:
            lines.append(f"{pad}{key}: {value}\n")
    return "".join(lines)


@settings(max_examples=600, deadline=None)
@given(
    st.dictionaries(KEYS, _block(2), min_size=1, max_size=4),
    st.sampled_from([2, 4]),
    st.booleans(),
)
def test_what_the_plain_reading_answers_the_loader_answers(
    mapping: dict[str, Any], step: int, indentless: bool
) -> None:
    text = _written(mapping, 0, step, indentless)
    plain = _plain_block(text)
    if plain is None:
        return
    loaded = goyaml.load(text)
    assert plain == loaded and repr(plain) == repr(loaded), text


def test_a_crd_s_names_are_read_without_the_loader_and_odd_ones_with_it() -> None:
    text = "group: example.io\nnames:\n  kind: W\n  plural: ws\n  shortNames:\n  - w\nscope: Namespaced\n"
    assert _plain_block(text) == goyaml.load(text)
    for odd in ("group: 1.0\n", "names:\n  kind: W # c\n", "names: {kind: W}\n", "on: x\n", "a: b\na: c\n"):
        assert _plain_block(odd) is None, odd
    padded = "\n" + text
    assert load_entries(padded, [(1, len(padded))], 0) == goyaml.load(text)
