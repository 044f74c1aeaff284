"""Edits carried out without parsing the document read exactly as the exact path does them, as Kubernetes
reads the result: parse, apply (jsonpatch, or the field set), re-serialise.

Label and annotation patches go on helm's text, or on the metadata parsed alone once it is (after a
rename); a binding's name fields are rewritten where they stand. Whenever the exact path fails, the edit
must not answer: the object path then gives the error in its own words.
"""

from __future__ import annotations

import json
from typing import Any

import jsonpointer
from hypothesis import example, given
from hypothesis import strategies as st
from shapes import JSONPATCH_FAILS, SETTINGS, any_documents, block_documents, jsonpatched

from cmp import goyaml, manifests
from cmp.manifests import names, textpatch

LABEL_KEYS = [
    "app.kubernetes.io/name",
    "helm.sh/chart",
    "team",
    "a",
    "version",
    "on",
    "x y",
    "argocd.argoproj.io/sync-options",
]
VALUES: list[Any] = ["b", "true", "1", "", "two\nlines", " lead", "Prune=false", 1, True, None, {"k": "v"}, ["x"]]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


label_operations = st.one_of(
    st.builds(
        lambda op, field, key, value: {"op": op, "path": f"/metadata/{field}/{_escape(key)}", "value": value},
        st.sampled_from(["add", "add", "replace", "test"]),
        st.sampled_from(["labels", "annotations"]),
        st.sampled_from(LABEL_KEYS),
        st.sampled_from(VALUES),
    ),
    st.builds(
        lambda field, key: {"op": "remove", "path": f"/metadata/{field}/{_escape(key)}"},
        st.sampled_from(["labels", "annotations"]),
        st.sampled_from(LABEL_KEYS),
    ),
    st.builds(
        lambda op, field, value: {"op": op, "path": f"/metadata/{field}", "value": value},
        st.sampled_from(["add", "replace", "test"]),
        st.sampled_from(["labels", "annotations"]),
        st.sampled_from([{"team": "b"}, {}, {"a": "1", "b": "two\nlines"}, "x"]),
    ),
    st.just({"op": "add", "path": "/spec/extra", "value": {"k": "v"}}),
    st.just({"op": "remove", "path": "/metadata/labels"}),
)


def _as_kubernetes_reads(text: str) -> str:
    return json.dumps(goyaml.load(text), sort_keys=True)


@SETTINGS
@given(st.one_of(block_documents(), any_documents), st.lists(label_operations, min_size=1, max_size=4), st.booleans())
@example(
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    team: a\n",
    [{"op": "add", "path": "/metadata/labels/team", "value": "b"}],
    False,
)
@example(
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    team: a\n",
    [{"op": "test", "path": "/metadata/labels/team", "value": "b"}],
    True,
)
def test_label_and_annotation_patches_read_as_jsonpatch_on_the_parsed_object(
    text: str, operations: list[dict[str, Any]], renamed_first: bool
) -> None:
    text = text if text.endswith("\n") else text + "\n"
    try:
        (resource,) = manifests.parse(text)
        full = goyaml.load(text)
    except Exception:
        return
    if resource.parsed or not isinstance(full, dict) or not isinstance(full.get("metadata"), dict):
        return
    if renamed_first:  # the metadata parsed alone, and edited there
        metadata = resource.mutable_metadata()
        assert metadata is not None
        metadata["name"] = "renamed"
        resource.mark_changed(metadata_only=True)
        full = {**full, "metadata": {**full["metadata"], "name": "renamed"}}
    expected = jsonpatched(full, operations)
    if not textpatch.patch_resource(resource, operations):
        return  # left to the object path
    assert expected is not JSONPATCH_FAILS, "the edit answered where jsonpatch fails"
    out = manifests.emit_yaml([resource]).removeprefix("---\n")
    assert goyaml.load(out) == expected
    assert _as_kubernetes_reads(out) == json.dumps(expected, sort_keys=True)
    assert not resource.read_exactly


def test_a_label_added_to_helms_text_keeps_every_other_byte() -> None:
    text = (
        "# Source: c/templates/d.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
        '  labels:\n    app.kubernetes.io/version: "1.0"  # the chart\'s own\nspec:\n  replicas: 1\n'
    )
    (resource,) = manifests.parse(text)
    assert textpatch.patch_resource(resource, [{"op": "add", "path": "/metadata/labels/team", "value": "b"}])
    out = manifests.emit_yaml([resource])
    assert out == text.replace("own\nspec", "own\n    team: b\nspec")
    assert not resource.metadata_parsed, "nothing was parsed"


def test_after_a_rename_a_label_patch_edits_the_parsed_metadata() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {team: a}\ndata:\n  k: v\n"
    (resource,) = manifests.parse(text)
    resource.metadata["name"] = "b"
    resource.mark_changed(metadata_only=True)
    assert textpatch.patch_resource(resource, [{"op": "replace", "path": "/metadata/labels/team", "value": "b"}])
    assert manifests.emit_yaml([resource]) == (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels:\n    team: b\ndata:\n  k: v\n"
    )
    assert not resource.parsed


# --- name fields ---------------------------------------------------------------------------------------------


@st.composite
def bindings(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A binding as charts write one (roleRef and subjects in block style, names plain or quoted, subjects
    indented or not, comments now and then), and the pointers of its name fields."""
    name = st.sampled_from(["manager", "'manager'", '"manager"', "viewer", "team-a-sa"])
    dash = draw(st.sampled_from(["", "  "]))
    subjects = ["subjects:"]
    count = draw(st.integers(1, 3))
    for _ in range(count):
        subjects += [f"{dash}- kind: ServiceAccount", f"{dash}  name: {draw(name)}", f"{dash}  namespace: team-a"]
        if draw(st.booleans()):
            subjects.append(f"{dash}  # a comment")
    role_ref = ["roleRef:", "  apiGroup: rbac.authorization.k8s.io", "  kind: ClusterRole", f"  name: {draw(name)}"]
    if draw(st.booleans()):
        role_ref.append("  # after the name")
    body = [role_ref, subjects]
    if draw(st.booleans()):
        body.reverse()
    head = ["apiVersion: rbac.authorization.k8s.io/v1", "kind: ClusterRoleBinding", "metadata:", "  name: b"]
    if draw(st.booleans()):
        body.insert(0, head[2:])
        head = head[:2]
    lines = ["# Source: c/templates/rbac.yaml", *head, *(line for part in body for line in part)]
    pointers = ["/roleRef/name"] + [f"/subjects/{index}/name" for index in range(count)]
    return "\n".join(lines) + "\n", pointers


@SETTINGS
@given(bindings(), st.data())
def test_a_name_field_rewritten_on_the_text_reads_as_the_object_with_that_field_set(
    binding: tuple[str, list[str]], data: st.DataObject
) -> None:
    text, pointers = binding
    pointer = data.draw(st.sampled_from(pointers))
    new = data.draw(st.sampled_from(["team-b-manager", "1", "yes", "x:y", "a b"]))
    (resource,) = manifests.parse(text)
    expected = goyaml.load(text)
    view = names.fields(resource, ["/roleRef/name", "/subjects/*/name"])
    assert dict(view) == {key: expected[key] for key in ("roleRef", "subjects")}
    old = jsonpointer.resolve_pointer(expected, pointer)
    jsonpointer.set_pointer(expected, pointer, new)
    names.replace_name(resource, pointer, old, new)
    assert goyaml.load(manifests.emit_yaml([resource]).removeprefix("---\n")) == expected
    if new == "team-b-manager":
        assert not resource.parsed, "a plain name in a block mapping is rewritten on the text"


def test_a_name_field_in_a_flow_mapping_is_set_on_the_object() -> None:
    text = "apiVersion: v1\nkind: RoleBinding\nmetadata:\n  name: b\nroleRef: {kind: Role, name: old}\n"
    (resource,) = manifests.parse(text)
    names.replace_name(resource, "/roleRef/name", "old", "new")
    assert resource.parsed and resource.obj["roleRef"] == {"kind": "Role", "name": "new"}


def test_fields_of_a_document_the_text_cannot_serve_are_the_object() -> None:
    (resource,) = manifests.parse('{"apiVersion": "v1", "kind": "A", "metadata": {"name": "a"}, "spec": {"x": 1}}')
    assert names.fields(resource, ["/spec/x"]) is resource.obj
