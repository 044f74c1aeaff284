"""A patch carried out on helm's text must read exactly as jsonpatch's result on the parsed object.

The documents are generated (shapes.py): loose YAML rich in what defeats a line-by-line reading, valid
block-style documents with every shape real charts hold, and helm-like Deployments. The oracle is
jsonpatch on the full parse: whenever the text patch answers, its text parses to what jsonpatch gives;
when jsonpatch fails, the text patch must not answer (the object path then reports the failure with its
own words).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from shapes import JSONPATCH_FAILS, SETTINGS, any_documents, block_documents, jsonpatched

from cmp import goyaml, manifests
from cmp.manifests import textpatch
from cmp.manifests.resource import with_floor
from cmp.model import Action, App, Decision
from cmp.ownership.rewrite.apply import apply_decisions

TOP = ["spec", "spec", "spec", "data", "x", "status", "new"]
KEYS = ["group", "names", "scope", "versions", "a", "b", "name", "kind", "replicas", "app.kubernetes.io/name", "new"]
ODD_TOKENS = ["0", "-", "on", "metadata", "items", "a~1b", ""]
VALUES: list[Any] = [
    "v",
    "two\nlines\n",
    "on",
    "1",
    "",
    " lead",
    1,
    2.5,
    True,
    None,
    {},
    [],
    {"pool": "other"},
    {"a": {"b": [1, "x"]}},
    ["--flag", {"k": "v"}],
]

paths = st.tuples(
    st.sampled_from(TOP * 3 + ODD_TOKENS), st.lists(st.sampled_from(KEYS * 3 + ODD_TOKENS), max_size=3)
).map(lambda tokens: "/" + "/".join(token.replace("~", "~0").replace("/", "~1") for token in [tokens[0], *tokens[1]]))
operations = st.lists(
    st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "add", "replace", "remove", "test", "move"]), "path": paths},
        optional={"value": st.sampled_from(VALUES), "from": paths},
    ).filter(lambda operation: ("value" in operation) == (operation["op"] in ("add", "replace", "test"))),
    min_size=1,
    max_size=3,
)


PLAIN = [
    "v",
    "web-1",
    '"quoted"',
    "'single'",
    "1",
    "true",
    "on",
    "null",
    "",
    "{}",
    "[]",
    "[a, b]",
    "|\n  text\n  more",
    "a #c",
]


@st.composite
def plain_mapping(draw: st.DrawFn, depth: int, indent: int) -> str:
    """Block mappings as helm writes them: plain keys, one-line values, nested mappings, indentless or
    indented sequences, block scalars, now and then a comment or a blank line."""
    lines = []
    for key in draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=4, unique=True)):
        pad = " " * indent
        roll = draw(st.integers(0, 5))
        if roll <= 2 or depth == 0:
            value = draw(st.sampled_from(PLAIN))
            lines.append(f"{pad}{key}: {value.replace(chr(10), chr(10) + pad)}" if value else f"{pad}{key}:")
        elif roll <= 4:
            lines.append(f"{pad}{key}:")
            lines.append(draw(plain_mapping(depth - 1, indent + draw(st.sampled_from([2, 2, 4])))))
        else:
            items = draw(st.sampled_from([indent, indent + 2]))
            lines.append(f"{pad}{key}:")
            lines += [f"{' ' * items}- {draw(st.sampled_from(PLAIN[:4]))}" for _ in range(draw(st.integers(1, 2)))]
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", f"{pad}  # deeper comment"])))
    return "\n".join(lines)


@st.composite
def helm_like(draw: st.DrawFn) -> str:
    head = "# Source: c/templates/t.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
    body = [f"{key}:\n{draw(plain_mapping(2, 2))}" for key in draw(st.lists(st.sampled_from(TOP), unique=True))]
    text = head + "\n".join(body)
    return text + "\n" if draw(st.integers(0, 5)) else text


@SETTINGS
@given(st.one_of(any_documents, block_documents(), helm_like(), helm_like()), operations)
@example(
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w\nspec:\n  replicas: 1\n  template:\n"
    "    spec:\n      containers:\n      - name: app\n",
    [{"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"pool": "other"}}],
)
@example(  # the second operation reads /spec's lines as the first left them, moved along by its edit
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w\nspec:\n  template:\n    spec:\n"
    "      containers:\n      - name: app\n  revisionHistoryLimit: 5\n  replicas: 1\nstatus: {}\n",
    [
        {"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"pool": "other"}},
        {"op": "replace", "path": "/spec/revisionHistoryLimit", "value": 2},
        {"op": "remove", "path": "/spec/template/spec/containers"},
    ],
)
@example("kind: A\nmetadata:\n  name: a\nspec:\n  a: 1", [{"op": "add", "path": "/spec/b", "value": "v"}])
@example("kind: A\nmetadata:\n  name: a\nspec:\n  a: |+\n    keep\n\n", [{"op": "add", "path": "/spec/b", "value": 1}])
def test_a_text_patch_reads_as_jsonpatch_on_the_parsed_object(text: str, ops: list[dict[str, Any]]) -> None:
    scanned = manifests.scan(text if text.endswith("\n") else text + "\n")
    if scanned is None or scanned.items is not None:
        return  # only documents the scan reads come here
    try:
        full = goyaml.load(text)
    except Exception:
        return
    if not isinstance(full, dict):
        return
    found = textpatch.apply(text, ops, with_floor(scanned.head, text).floor)
    if found is None:
        return
    patched = found.text
    expected = jsonpatched(full, ops)
    assert expected is not JSONPATCH_FAILS, "the text patch answered where jsonpatch fails"
    assert goyaml.load(patched) == expected
    if patched == text:
        assert expected == full


def _patched(text: str, operations: list[dict[str, Any]]) -> str | None:
    """The text patch of a document the scan read, under the floor it found."""
    scanned = manifests.scan(text)
    assert scanned is not None
    patched = textpatch.apply(text, operations, with_floor(scanned.head, text).floor)
    return None if patched is None else patched.text


DEPLOYMENT = """\
# Source: chart/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  revisionHistoryLimit: 5
  template:
    spec:
      containers:
      - name: app
        image: "registry.example.com/app:1.0"
      securityContext:
        runAsNonRoot: true
status: {}
"""


def test_an_added_entry_goes_at_the_end_of_its_mapping_and_the_rest_keeps_helms_bytes() -> None:
    patched = _patched(
        DEPLOYMENT,
        [
            {"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"pool": "other"}},
            {"op": "replace", "path": "/spec/revisionHistoryLimit", "value": 2},
        ],
    )
    assert patched == DEPLOYMENT.replace("Limit: 5", "Limit: 2").replace(
        "        runAsNonRoot: true\n", "        runAsNonRoot: true\n      nodeSelector:\n        pool: other\n"
    )


def test_a_value_already_there_leaves_the_text_as_it_is() -> None:
    ops = [{"op": "replace", "path": "/spec/revisionHistoryLimit", "value": 5}]
    assert _patched(DEPLOYMENT, ops) == DEPLOYMENT
    assert _patched(DEPLOYMENT, [{"op": "test", "path": "/spec/revisionHistoryLimit", "value": 5}]) == DEPLOYMENT


@pytest.mark.parametrize(
    "operation",
    [
        {"op": "add", "path": "/spec/template/spec/containers/0/name", "value": "x"},  # a sequence on the way
        {"op": "add", "path": "/spec/template/spec/containers/-", "value": {"name": "y"}},
        {"op": "move", "from": "/spec/revisionHistoryLimit", "path": "/spec/limit"},
        {"op": "replace", "path": "/metadata/name", "value": "b"},  # identity stays with the object path
        {"op": "add", "path": "/metadata/labels/a/b", "value": "c"},  # below a label
        {"op": "add", "path": "/items", "value": []},
        {"op": "add", "path": "/spec/on", "value": 1},  # `on:` reads as a bool key
        {"op": "add", "path": "/status/phase", "value": "x"},  # a flow value on the way
        {"op": "replace", "path": "/spec/missing", "value": 1},  # fails: the object path says why
        {"op": "remove", "path": "/spec/missing"},
        {"op": "add", "path": "/spec/missing/deeper", "value": 1},
        {"op": "test", "path": "/spec/revisionHistoryLimit", "value": 6},
        {"op": "add", "path": "", "value": {}},
    ],
)
def test_what_the_text_cannot_take_is_left_to_the_object(operation: dict[str, Any]) -> None:
    assert _patched(DEPLOYMENT, [operation]) is None


def test_rename_then_patch_keeps_both_edits_and_helms_bytes_elsewhere() -> None:
    (resource,) = manifests.parse(DEPLOYMENT)
    decision = Decision(
        Action.RENAME,
        "owned by others",
        rule=0,
        rename_to="{app}-{name}",
        patch=({"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"pool": "other"}},),
    )
    emitted, _ = apply_decisions([resource], [decision], App("other", "other", "default"))
    assert emitted[0].patched == 1
    assert emitted[0].renamed_from == "web"
    assert resource.changed
    assert not resource.parsed, "patched as text: the object was never parsed"
    out = manifests.emit_yaml([resource]).removeprefix("---\n")
    assert out.startswith("# Source: chart/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\n")
    assert '  image: "registry.example.com/app:1.0"\n' in out  # helm's quoting survives
    obj = goyaml.load(out)
    assert obj["metadata"]["name"] == "other-web"
    assert obj["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "other"}


@pytest.mark.parametrize(
    "line",
    ['  "replicas": 1', "  'replicas': 1", "  ? replicas\n  : 1", "  <<: {replicas: 1}", "  {replicas: 1}: x"],
)
def test_a_key_the_plain_search_could_miss_sends_the_patch_to_the_object(line: str) -> None:
    text = f"apiVersion: v1\nkind: A\nmetadata:\n  name: a\nspec:\n  other: 2\n{line}\n"
    assert _patched(text, [{"op": "add", "path": "/spec/replicas", "value": 3}]) is None


def test_a_comment_where_an_entry_seems_to_end_sends_the_patch_to_the_object() -> None:
    text = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\nspec:\n  a:\n    x: 1\n  # note\n    z: 2\n  b: 3\n"
    assert goyaml.load(text)["spec"]["a"] == {"x": 1, "z": 2}
    assert _patched(text, [{"op": "replace", "path": "/spec/a", "value": 0}]) is None
