"""helm's stream cut as text: untouched documents keep their bytes, what holds no object stays where it
stood, Lists are flattened for the rules and go out whole when no rule touched them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp import goyaml, manifests
from cmp.errors import ManifestError

STREAM = """---
# Source: app/templates/ns.yaml
apiVersion: v1
kind: Namespace
metadata:
  name: shoong   # trailing comment kept
---
# Source: app/crds/widgets.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: one}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: two}
"""


def test_documents_keep_their_text_and_template() -> None:
    resources = manifests.parse(STREAM)
    assert [r.name for r in resources] == ["shoong", "one", "two"]
    assert [r.source for r in resources] == ["app/templates/ns.yaml", "app/crds/widgets.yaml", "app/crds/widgets.yaml"]
    assert manifests.emit_yaml(resources) == STREAM


def test_a_changed_document_is_reserialised_under_its_source_comment() -> None:
    resource = manifests.parse(STREAM)[0]
    resource.obj["metadata"]["labels"] = {"a": "b"}
    resource.mark_changed()
    assert manifests.emit_yaml([resource]) == (
        "---\n# Source: app/templates/ns.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: shoong\n"
        "  labels:\n    a: b\n"
    )


LIST = """---
# Source: app/templates/classes.yaml
apiVersion: v1
kind: List
items:
- apiVersion: networking.k8s.io/v1
  kind: IngressClass
  metadata:
    name: alb
    labels:
      version: "1.0"
- apiVersion: elbv2.k8s.aws/v1beta1
  kind: IngressClassParams
  metadata:
    name: alb
  spec: {scheme: internet-facing}
"""


def test_lists_are_flattened_for_the_rules_without_being_parsed() -> None:
    items = manifests.parse(LIST)
    assert [(r.kind, r.name) for r in items] == [("IngressClass", "alb"), ("IngressClassParams", "alb")]
    assert [r.labels for r in items] == [{"version": "1.0"}, {}]
    assert manifests.exact_readings(items) == 0
    assert [r.obj for r in items] == goyaml.load(LIST)["items"]


def test_a_list_no_rule_touched_keeps_helms_bytes() -> None:
    assert manifests.emit_yaml(manifests.parse(LIST)) == LIST


def test_a_list_that_lost_an_item_goes_out_as_its_other_items_one_document_each() -> None:
    first, _ = manifests.parse(LIST)
    assert manifests.emit_yaml([first]) == (
        "---\n# Source: app/templates/classes.yaml\napiVersion: networking.k8s.io/v1\nkind: IngressClass\n"
        'metadata:\n  name: alb\n  labels:\n    version: "1.0"\n'
    )


def test_a_list_whose_item_changed_goes_out_as_its_items_one_document_each() -> None:
    first, second = manifests.parse(LIST)
    second.mutable_metadata()["annotations"] = {"a": "b"}  # type: ignore[index]
    second.mark_changed(metadata_only=True)
    out = manifests.emit_yaml([first, second])
    assert out.count("---\n# Source: app/templates/classes.yaml\n") == 2
    assert [goyaml.load(text) for text in out.split("---\n")[1:]] == [
        first.obj,
        {**goyaml.load(LIST)["items"][1], "metadata": {"name": "alb", "annotations": {"a": "b"}}},
    ]
    assert "  spec: {scheme: internet-facing}" not in out and "spec: {scheme: internet-facing}\n" in out


def test_a_list_the_scan_cannot_read_is_read_exactly() -> None:
    stream = "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
    (item,) = manifests.parse(stream)
    assert item.name == "a" and manifests.exact_readings([item]) == 1
    assert manifests.emit_yaml([item]) == stream


def test_empty_and_comment_only_documents_hold_no_object() -> None:
    assert manifests.parse("---\n# Source: x\n---\n\n---\nnull\n") == []


def test_separator_with_trailing_comment_splits_but_dashes_inside_text_do_not() -> None:
    stream = (
        "a: 1\nkind: A\napiVersion: v1\nmetadata: {name: a}\n--- # next\nkind: B\napiVersion: v1\n"
        "metadata: {name: b}\nnote: x---y\n"
    )
    assert [r.kind for r in manifests.parse(stream)] == ["A", "B"]


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        (
            "---\n# Source: c/t.yaml\napiVersion: v1\nmetadata: {name: a}\n",
            r"template c/t.yaml: a document has no `kind`",
        ),
        ("---\n- a\n", "must be a mapping"),
        ("---\n# Source: c/t.yaml\nkind: [\n", r"template c/t.yaml: line \d+: not valid YAML"),
        ("---\nkind: ConfigMap\nmetadata: {name: a}\n", "has no `apiVersion`"),
        ("---\nkind: ConfigMap\napiVersion: v1\n", "has no `metadata.name`"),
    ],
)
def test_documents_argo_cd_would_reject_are_refused(stream: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        manifests.parse(stream)


def _reference_pieces(stream: str) -> list[tuple[str, str]]:
    """Kubernetes' YAMLReader's rule, line by line: a line that is `---` and then only blanks or a comment
    starts a new piece. (separator line, text) of each piece; the first has no separator line."""
    pieces = [("", "")]
    for line in re.findall(r"[^\n]*\n|[^\n]+$", stream):
        if re.fullmatch(r"---[ \t]*(?:#[^\n]*)?\n?", line):
            pieces.append((line, ""))
        else:
            pieces[-1] = (pieces[-1][0], pieces[-1][1] + line)
    return pieces


def _has_content(text: str) -> bool:
    """A line (as str.splitlines cuts them) that is neither blank nor a comment."""
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


STREAM_PARTS = st.sampled_from(
    [
        "---\n",
        "---",
        "--- # doc\n",
        "---  \n",
        "---\t\n",
        "----\n",
        "--- x\n",
        " ---\n",
        "a: ---\n",
        "# Source: c/a.yaml\n",
        "# Source: c/b.yaml  \n",
        "# Source: \n",
        "# Source:  x\n",
        "x# Source: c/no.yaml\n",
        "kind: A\n",
        "\n",
        "  \n",
        "key: v",
        "  # indented comment\n",
        "#x\x85y\n",
        "\u2028",
        "\r\n",
        "\x0c",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(STREAM_PARTS, max_size=12).map("".join))
def test_the_split_cuts_where_kubernetes_yaml_reader_cuts(stream: str) -> None:
    expected, source = [], ""
    for _, text in _reference_pieces(stream):
        found = re.search(r"(?m)^# Source: (.+?)[ \t]*$", text)
        source = found.group(1) if found else source
        if _has_content(text):
            expected.append((text, source))
    assert [(chunk.text, chunk.source) for chunk in manifests.split(stream)] == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(STREAM_PARTS, max_size=12).map("".join))
def test_an_untouched_stream_is_written_back_byte_for_byte(stream: str) -> None:
    try:
        resources = manifests.parse(stream)
    except ManifestError:
        return
    if resources:
        assert manifests.emit_yaml(resources) == stream


def test_json_output_is_one_object_per_line() -> None:
    assert manifests.emit_json(manifests.parse(STREAM)[:1]) == (
        '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shoong"}}\n'
    )


COMMENTED = (
    "---\n# Source: c/crds/crd.yaml\n# generated from upstream\n---\napiVersion: v1\nkind: ConfigMap\n"
    "metadata: {name: a}\n---\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: ConfigMap\n"
    "metadata: {name: b}\n---\n# Source: c/templates/z.yaml\n# only a comment"
)


def test_comment_only_documents_stay_where_helm_put_them_whatever_is_stripped() -> None:
    a, b = manifests.parse(COMMENTED)
    assert a.source == "c/crds/crd.yaml"
    assert manifests.emit_yaml([a, b]) == COMMENTED
    assert manifests.emit_yaml([b]) == COMMENTED.replace(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", ""
    )
    assert manifests.emit_yaml([a]).endswith("metadata: {name: a}\n---\n# Source: c/templates/z.yaml\n# only a comment")


def test_nan_has_no_json_spelling_so_json_output_refuses_it() -> None:
    (resource,) = manifests.parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: .nan}\n")
    with pytest.raises(ManifestError, match=r"ConfigMap a: holds \.nan or \.inf"):
        manifests.emit_json([resource])


def _nested(depth: int) -> str:
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: " + "[" * depth + "]" * depth + "\n"


def test_a_document_too_deep_to_write_back_is_an_error_not_a_crash() -> None:
    (resource,) = manifests.parse(_nested(600))  # libyaml reads up to 1000 levels; the dumper recurses
    resource.mark_changed()
    with pytest.raises(ManifestError, match="ConfigMap a: nested too deeply to write back"):
        manifests.emit_yaml([resource])
    with pytest.raises(ManifestError, match="ConfigMap a: nested too deeply to write as JSON"):
        manifests.emit_json(manifests.parse(_nested(990)))


def test_output_over_the_grpc_limit_is_refused_with_its_size() -> None:
    manifests.refuse_oversize(b"x" * 100, 100)
    with pytest.raises(ManifestError, match=r"the output is 101 bytes, over Argo CD's 0 MiB gRPC message limit"):
        manifests.refuse_oversize(b"x" * 101, 100)
