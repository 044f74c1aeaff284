"""helm's stream split as text: untouched documents keep their bytes, Lists are flattened."""

from __future__ import annotations

import pytest

from cmp import manifests
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


def test_lists_are_flattened_like_argo_cd_does() -> None:
    stream = "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
    (item,) = manifests.parse(stream)
    assert item.name == "a" and item.changed


def test_empty_and_comment_only_documents_are_dropped() -> None:
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


def test_json_output_is_one_object_per_line() -> None:
    assert manifests.emit_json(manifests.parse(STREAM)[:1]) == (
        '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shoong"}}\n'
    )


def test_a_comment_only_document_is_glued_to_the_next_one_so_helms_bytes_survive() -> None:
    stream = (
        "---\n# Source: c/crds/crd.yaml\n# generated from upstream\n---\napiVersion: v1\nkind: ConfigMap\n"
        "metadata: {name: a}\n"
    )
    (resource,) = manifests.parse(stream)
    assert resource.source == "c/crds/crd.yaml"
    assert manifests.emit_yaml([resource]) == stream


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
