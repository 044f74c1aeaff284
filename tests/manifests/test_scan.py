"""The scan is held to the exact reading, and the metadata splice to a full re-serialisation.

On loose text (shapes.py), much of it broken, the scan must never read a field otherwise than the exact
reading whenever it answers and the document parses (text that does not parse makes no claim either way).
On valid block-style documents, whatever their deep content, it must always answer, and read exactly
what the exact reading reads: every document of such a render is identified without being parsed.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from shapes import SETTINGS, any_documents, block_documents

from cmp import goyaml, manifests
from cmp.manifests import Resource
from cmp.manifests.resource import FLOOR_UNREAD, with_floor
from cmp.ownership.scope import crd_scopes


def _full(text: str) -> Any:
    try:
        return goyaml.load(text)
    except Exception:
        return ValueError


def _crd_fields(spec: Any) -> dict[str, Any] | None:
    return {key: spec[key] for key in ("group", "names", "scope") if key in spec} if isinstance(spec, dict) else None


def _assert_read_as_exactly(text: str, scanned: manifests.Scanned, full: Any) -> None:
    """Every field the scan read equals the exact reading's."""
    head, metadata = scanned.head, scanned.metadata
    assert isinstance(full, dict)
    assert scanned.items is None
    assert not isinstance(full.get("items"), list)
    assert (head.api_version, head.kind) == (full.get("apiVersion"), full.get("kind"))
    parsed_metadata = full.get("metadata")
    meta = parsed_metadata if isinstance(parsed_metadata, dict) else {}
    assert (head.name, head.namespace) == (meta.get("name"), meta.get("namespace"))
    if metadata is not None or head.generate_name is not None:
        assert head.generate_name == meta.get("generateName")
    if metadata is not None:
        assert metadata == parsed_metadata
    if head.metadata is not None:
        start, end = head.metadata
        assert _full(text[start:end]) == {"metadata": parsed_metadata}
    else:
        assert "metadata" not in full, "the scan missed a metadata entry"
    if full.get("kind") == "CustomResourceDefinition":
        assert head.spec == _crd_fields(full.get("spec")) or (head.spec is None and "spec" not in full)


@SETTINGS
@given(any_documents)
@example('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: "abc\nkind: Hidden"\n')
@example('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    a: "x\n  name: hidden"\n  name: real\n')
@example("kind: A\nmetadata:\n  name: a\nspec: [1,\nitems: [2]]\n")
@example("apiVersion: v1\nkind: A\nmetadata:\n  name: foo\n    continued\n")
@example('apiVersion: v1\nkind: A\nmetadata:\n  name: a\ndata:\n  x: |\n    "open\n  y: [a,\n# c\nkind: B]\n')
@example("apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  x: 'it''s\n  name: b'\n")
@example('apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  x: "[a,\n  name: b"\n')
@example(  # below the first mark, a quote reaching spec's entries (a CRD read without its floor)
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ks.g\nspec:\n"
    '  group: g\n  names:\n    kind: K\n    plural: ks\n  versions:\n  - name: "v1\n  scope: Cluster"\n'
)
@example(  # below the first mark, a flow reaching spec's entries
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ks.g\nspec:\n"
    "  group: g\n  names:\n    kind: K\n    plural: ks\n  scope: Cluster\n  versions: [\n  {name: v1}]\n"
)
@example(  # a quote that opens in names, the last field
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ks.g\nspec:\n"
    '  group: g\n  scope: Cluster\n  names:\n    kind: K\n    plural: "ks\n  group: h"\n'
)
@example('apiVersion: v1\nkind: A\nmetadata:\n  name: a\ndata:\n  x: "abc\nmetadata:\n  name: b"\n')
@example(  # a column-0 line in a quote, taken for a key that changes nothing: the identity stands
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ks.g\nspec:\n"
    "  group: g\n  names:\n    kind: K\n    plural: ks\n  scope: Cluster\n  versions:\n  - name: v1\n"
    '    description: "a\nfoo: b"\n'
)
@example(  # a comment at one space among spec's lines below the mark, and a quote there
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ks.g\nspec:\n"
    '  group: g\n  names:\n    kind: K\n    plural: ks\n  scope: Cluster\n  versions:\n  - name: "v1\n # x"\n'
)
@example(  # after spec, a quote reaching a line at two spaces that names a CRD field, and one at one space
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ks.g\nspec:\n"
    '  group: g\n  names:\n    kind: K\n    plural: ks\n  scope: Cluster\nstatus:\n  x: "a\n  group: h\n b"\n'
)
def test_a_sure_scan_reads_what_the_exact_reading_reads(text: str) -> None:
    scanned = manifests.scan(text)
    full = _full(text)
    if scanned is None or full is ValueError or scanned.items is not None:
        return
    _assert_read_as_exactly(text, scanned, full)


@SETTINGS
@given(block_documents())
def test_every_block_style_document_is_identified_without_the_exact_reading(text: str) -> None:
    scanned = manifests.scan(text)
    assert scanned is not None, "the scan gave up on a block-style document"
    _assert_read_as_exactly(text, scanned, goyaml.load(text))
    (fast,), (exact,) = manifests.parse(text), manifests.parse(text, exact=True)
    assert manifests.exact_readings([fast]) == 0
    assert fast.id == exact.id
    assert crd_scopes([fast.identity()]) == crd_scopes([exact.obj])
    assert fast.obj == exact.obj


@SETTINGS
@given(any_documents)
def test_resources_read_from_a_scan_equal_those_of_the_exact_reading(text: str) -> None:
    """The whole of `parse` (checks and messages included) gives the same resources either way."""
    lazy, lazy_error = _parsed(text, exact=False)
    full, full_error = _parsed(text, exact=True)
    if full_error is not None:
        return  # broken YAML: refused either way, or (in a body the scan never parses) left for Argo CD
    assert lazy_error is None
    assert [_identity(r) for r in lazy] == [_identity(r) for r in full]
    assert crd_scopes(r.identity() for r in lazy) == crd_scopes(r.obj for r in full)
    for ours, theirs in zip(lazy, full, strict=True):
        assert ours.obj == theirs.obj


def _parsed(text: str, *, exact: bool) -> tuple[list[Resource], str | None]:
    try:
        return manifests.parse(text, exact=exact), None
    except Exception as error:
        return [], str(error)


def _identity(resource: Resource) -> tuple[Any, ...]:
    return (
        resource.id,
        resource.api_version,
        resource.version,
        resource.kind_is_text,
        resource.generate_name,
        resource.labels,
        resource.metadata,
        resource.source,
    )


EDITS = st.lists(
    st.tuples(
        st.sampled_from(["annotations", "labels", "name", "namespace", "finalizers"]),
        st.sampled_from(["a", "argocd.argoproj.io/sync-options", "x:y", "true", "1", "", "two\nlines", " lead"]),
        st.sampled_from(["Prune=false,Delete=false", "yes", "1:20", "=", "a: b", "#", "multi\nline\n", "é", ""]),
    ),
    min_size=1,
    max_size=4,
)


@SETTINGS
@given(st.one_of(any_documents, block_documents()), EDITS)
@example(
    "# Source: c/crds/w.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    "metadata: {name: w.example.io}\nspec:\n  group: example.io\n  names: {kind: W}\n",
    [("annotations", "argocd.argoproj.io/sync-options", "Prune=false,Delete=false")],
)
@example(
    "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations:\n    x: |+\n      keep\n\n# note\nspec: {}\n",
    [("labels", "a", "b")],
)
def test_a_spliced_metadata_block_reads_as_a_full_reserialisation(text: str, edits: list[tuple[str, str, str]]) -> None:
    text = text if text.endswith("\n") else text + "\n"  # the stream puts a newline before the next `---`
    scanned = manifests.scan(text)
    full = _full(text)
    if scanned is None or scanned.items is not None or not isinstance(full, dict):
        return
    if not isinstance(full.get("metadata"), dict):
        return
    resource = Resource(None, "c/t.yaml", text, 0, head=scanned.head, metadata=scanned.metadata)
    editable = resource.mutable_metadata()
    assert editable == full["metadata"]
    assert editable is not None
    for field, key, value in edits:
        if field in ("name", "namespace"):
            editable[field] = value
        elif field == "finalizers":
            editable[field] = [key, value]
        else:
            target = editable.get(field)
            editable[field] = {**(target if isinstance(target, dict) else {}), key: value}
    resource.mark_changed(metadata_only=True)
    expected = {**full, "metadata": editable}
    spliced = manifests.emit_yaml([resource]).removeprefix("---\n")
    head = scanned.head
    assert spliced.startswith(text[: head.metadata[0]] if head.metadata else "")
    reread = goyaml.load(spliced)
    assert reread == expected
    assert list(reread) == list(expected)
    assert reread == goyaml.load(goyaml.dump(expected))
    assert not resource.read_exactly


def test_a_column_0_line_inside_a_multi_line_quote_is_not_taken_for_a_key() -> None:
    text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: "abc\nkind: Hidden"\n'
    assert manifests.scan(text) is None  # unsure: the exact reading decides
    (resource,) = manifests.parse(text)
    assert resource.kind == "ConfigMap" and resource.obj["data"]["x"] == "abc kind: Hidden"
    assert manifests.exact_readings([resource]) == 1


def test_helm_style_documents_are_read_without_the_parser() -> None:
    text = (
        "# Source: app/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
        '  name: web\n  namespace: shop\n  labels:\n    app.kubernetes.io/version: "1.0"\nspec:\n  replicas: 1\n'
    )
    scanned = manifests.scan(text)
    assert scanned is not None and scanned.metadata is None  # no parse was needed
    head = scanned.head
    assert (head.api_version, head.kind, head.name, head.namespace) == ("apps/v1", "Deployment", "web", "shop")
    assert (
        text[slice(*head.metadata)]
        == 'metadata:\n  name: web\n  namespace: shop\n  labels:\n    app.kubernetes.io/version: "1.0"\n'
    )


def test_protecting_a_crd_keeps_its_schema_bytes() -> None:
    schema = "  versions:\n    - name: v1\n      schema: {openAPIV3Schema: {type: object}}\n"
    text = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: w.example.io\n"
        "spec:\n  group: example.io\n  names: {kind: W, plural: ws}\n  scope: Cluster\n" + schema
    )
    (resource,) = manifests.parse(text)
    resource.mutable_metadata()["annotations"] = {"argocd.argoproj.io/sync-options": "Prune=false"}  # type: ignore[index]
    resource.mark_changed(metadata_only=True)
    out = manifests.emit_yaml([resource])
    assert out.endswith("scope: Cluster\n" + schema)
    assert not resource.parsed
    assert "  annotations:\n    argocd.argoproj.io/sync-options: Prune=false\n" in out


KUBEBUILDER_CRD = (
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ws.example.io\n"
    "spec:\n  group: example.io\n  names:\n    kind: W\n    plural: ws\n    shortNames:\n    - w\n"
    "  scope: Namespaced\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n"
    "        description: |\n          group: not this one\n\n        type: object\n  - name: v2\n"
    "status:\n  acceptedNames:\n    kind: ''\n"
)
KUBEBUILDER_SPEC = {"group": "example.io", "names": {"kind": "W", "plural": "ws", "shortNames": ["w"]}}


def test_a_generated_crd_is_read_without_its_schema() -> None:
    scanned = manifests.scan(KUBEBUILDER_CRD)
    assert scanned is not None and scanned.metadata is None
    assert scanned.head.spec == {**KUBEBUILDER_SPEC, "scope": "Namespaced"}


@pytest.mark.parametrize(
    "change",
    [
        ("  scope: Namespaced\n", "  # the scope\n  scope: Namespaced\n"),  # a comment at two spaces
        ("  scope: Namespaced\n", "  scope: Namespaced\n# a note\n  versions: []\n"),  # a comment at column 0
        ("  scope: Namespaced\n", '  "scope": Namespaced\n'),  # a quoted key
        ("  scope: Namespaced\n", "  scope: Namespaced\n  group: again\n"),  # a key twice
        ("status:\n", "spec:\n  group: two\nstatus:\n"),  # spec twice
        ("status:\n", " stray: 1\nstatus:\n"),  # a line at one space
        ("status:\n", "kind: Other\nstatus:\n"),  # an identity key again
        ("spec:\n  group", "spec:\n    group"),  # the spec's entries at four spaces
    ],
)
def test_an_unusual_crd_is_read_as_the_exact_reading_reads_it(change: tuple[str, str]) -> None:
    text = KUBEBUILDER_CRD.replace(*change, 1)
    assert text != KUBEBUILDER_CRD
    scanned, full = manifests.scan(text), _full(text)
    if full is ValueError:
        return
    if scanned is not None:
        _assert_read_as_exactly(text, scanned, full)
    (fast,), (exact,) = manifests.parse(text), manifests.parse(text, exact=True)
    assert crd_scopes([fast.identity()]) == crd_scopes([exact.obj])


WRAPPED_DESCRIPTIONS = (
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ws.example.io\n"
    "spec:\n  group: example.io\n  names:\n    kind: W\n    plural: ws\n  scope: Cluster\n  versions:\n"
    "  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          resources:\n"
    "            description: 'Optional: requests and limits for\n              each pod'\n"
    '            type: object\n          selector:\n            description: "Selector picks\n'
    '              \\ objects (see\\nPolicy)."\n            type: string\n'
)


def test_quoted_descriptions_wrapped_onto_deeper_lines_do_not_send_a_crd_to_the_parser() -> None:
    scanned = manifests.scan(WRAPPED_DESCRIPTIONS)
    assert scanned is not None and scanned.metadata is None
    assert scanned.head.floor == FLOOR_UNREAD  # its identity lies above every quote: no floor was needed
    assert with_floor(scanned.head, WRAPPED_DESCRIPTIONS).floor == 14  # the wrapped lines
    assert scanned.head.spec == {"group": "example.io", "names": {"kind": "W", "plural": "ws"}, "scope": "Cluster"}


@pytest.mark.parametrize(
    "change",
    [
        ('            description: "Selector picks\n', '            description:\n              "Selector picks\n'),
        ("              each pod'", "            each pod'"),  # as shallow as the line the quote opens on
        ("              each pod'", "  each pod'"),  # as shallow as the spec's entries
        ("description: 'Optional", "description: !!str 'Optional"),  # a tag of YAML's own
        ("each pod'\n", "each pod' # a comment\n"),
    ],
)
def test_a_quote_continued_anywhere_reads_as_the_exact_reading_reads_it(change: tuple[str, str]) -> None:
    text = WRAPPED_DESCRIPTIONS.replace(*change, 1)
    assert text != WRAPPED_DESCRIPTIONS
    scanned = manifests.scan(text)
    if scanned is not None:
        _assert_read_as_exactly(text, scanned, goyaml.load(text))


@pytest.mark.parametrize(
    "change",
    [
        ("              each pod'", "  each pod'"),  # a quote reaching the spec's entries
        ("              each pod'", "each pod'"),  # a quote reaching column 0
    ],
)
def test_what_the_scan_cannot_vouch_for_goes_to_the_exact_reading(change: tuple[str, str]) -> None:
    assert manifests.scan(WRAPPED_DESCRIPTIONS.replace(*change, 1)) is None


@pytest.mark.parametrize(
    "change",
    [
        ("description: 'Optional", "description: !!str 'Optional"),  # a tag of YAML's own
        ("            type: object\n", "            type: &t object\n            other: *t\n"),  # an alias
    ],
)
def test_a_tag_or_alias_below_the_identity_leaves_edits_to_the_exact_reading(change: tuple[str, str]) -> None:
    """Below every line the identity rests on, a tag or alias changes a value of the schema, not the
    identity; an edit of the text (which needs the floor) goes to the object."""
    text = WRAPPED_DESCRIPTIONS.replace(*change, 1)
    scanned = manifests.scan(text)
    assert scanned is not None and scanned.head.floor == FLOOR_UNREAD
    _assert_read_as_exactly(text, scanned, goyaml.load(text))
    assert with_floor(scanned.head, text).floor == 0


def test_a_stray_quote_in_a_block_scalar_opens_nothing() -> None:
    text = (
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  notes: |-\n    say "hello\n'
        "  more: |\n    it's [open\nkind: Ignored\n"
    ).replace("kind: Ignored\n", "other: x\n")
    scanned = manifests.scan(text)
    assert scanned is not None and scanned.head.name == "a"


def test_a_quote_inside_a_wrapped_quoted_description_opens_nothing() -> None:
    text = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ws.example.io\n"
        "spec:\n  group: example.io\n  names:\n    kind: W\n  scope: Cluster\n  versions:\n  - name: v1\n"
        "    schema:\n      openAPIV3Schema:\n        description: 'Valid values are:\n"
        '          ["CREATE, "UPDATE], or * for all of them.\'\n        type: object\n'
        'status:\n  message: "done"\n'
    )
    scanned = manifests.scan(text)
    assert scanned is not None
    _assert_read_as_exactly(text, scanned, goyaml.load(text))


# prometheus-operator's descriptions: braces, brackets, backquotes and quotes, plain and quoted, wrapped
OPERATOR_CRD = (
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ps.monitoring.io\n"
    "spec:\n  group: monitoring.io\n  names:\n    kind: P\n  scope: Namespaced\n  versions:\n  - name: v1\n"
    "    schema:\n      openAPIV3Schema:\n        properties:\n          selector:\n"
    "            description: 'Selects `{job=\"node\"}` [30s, 1m] {unclosed \"open it''s\n"
    '              [see: {{ $labels.instance }} `"quoted"`\'\n'
    "            type: string\n          relabel:\n"
    '            description: "Matches {__name__=~\\"up|scrape_.*\\"} [`Authorization`]\n'
    '              {a: b, c: [d]} it\'s \\"open"\n'
    "            type: string\n          plain:\n"
    "            description: Example {app=x} and [a, b]\n"
    '              "open [see {unclosed\n'
    "              'single and `back` quotes\n"
    "            type: string\n"
)

# kube-prometheus-stack's dashboards: JSON in block scalars, each line opening what the block holds
DASHBOARD = (
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: board\n  labels:\n    grafana_dashboard: "1"\n'
    'data:\n  board.json: |-\n    {\n      "panels": [\n        {\n'
    '          "targets": [{"expr": "sum(rate(x{job=\\"a\\"}[5m]))", "legendFormat": "{{pod}}"}],\n'
    '          "title": "Requests [0] of \'svc\'"\n        }\n      ],\n      "uid": "b"\n    }\n'
    '  other.json: |\n    [\n      "unbalanced\n    ]\n'
)


@pytest.mark.parametrize("text", [OPERATOR_CRD, DASHBOARD], ids=["operator-crd", "dashboard"])
def test_operator_bundles_are_identified_without_the_exact_reading(text: str) -> None:
    scanned = manifests.scan(text)
    assert scanned is not None
    _assert_read_as_exactly(text, scanned, goyaml.load(text))


@pytest.mark.parametrize(
    "change",
    [
        ("  board.json: |-\n", "  board.json:\n"),  # the JSON is no block scalar's content: a flow
        ("    [\n", "  y: [\nkind: X\n"),  # a flow reaching column 0
    ],
)
def test_what_a_block_scalar_no_longer_holds_is_read_as_structure(change: tuple[str, str]) -> None:
    text = DASHBOARD.replace(*change, 1)
    scanned = manifests.scan(text)
    full = _full(text)
    if scanned is not None and full is not ValueError:
        _assert_read_as_exactly(text, scanned, full)
    assert scanned is None or full is not ValueError


@given(st.text(alphabet=" \t\n:,-#ab1\"'[]{}*!&<|>\\", max_size=120))
def test_the_first_mark_is_the_first_of_any_kind(text: str) -> None:
    from cmp.manifests import reach

    padded = "\n" + text
    starts = [found.start() for pattern in (*reach._OPENERS, *reach._VALUE_MARKS) if (found := pattern.search(padded))]
    assert reach.first_mark(padded) == min(starts, default=None)
