"""The cheap header scan is held to the full parse, and the metadata splice to a full re-serialisation.

Documents are generated as loose YAML text rich in the constructs that defeat a line-by-line reading:
quotes and flows that continue on later lines (libyaml lets them continue at column 0), block scalars,
multi-line plain scalars, comments, anchors, aliases, tags, duplicate and look-alike keys, odd indentation.
The oracle is the real parser: whenever the scan says it is sure and the document parses, every field the
scan read must equal the parsed one. Text that does not parse makes no claim either way.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cmp import goyaml, manifests
from cmp.manifests import Resource
from cmp.ownership.scope import crd_scopes

SCALARS = [
    "v1",
    "apps/v1",
    "apiextensions.k8s.io/v1",
    "Deployment",
    "CustomResourceDefinition",
    "web",
    "web-1",
    "kube-system",
    "a.b/c",
    "x:y",
    "a b",
    '"Deployment"',
    "'Deployment'",
    '"web"',
    "'web'",
    '""',
    "''",
    '"a\\"b"',
    "'it''s'",
    '"tab\\there"',
    "true",
    "yes",
    "No",
    "on",
    "1",
    "017",
    "0x1F",
    "1e3",
    "1:20",
    "1.5",
    ".inf",
    "2024-01-02",
    "null",
    "~",
    "",
    "=",
    "a #comment",
    "web # trailing",
    "a: b",
    "&anchor web",
    "*anchor",
    "!!str 5",
    "!!int 5",
    "[a, b]",
    "[]",
    "{}",
    "{a: 1}",
    '["x", "y"]',
    "[a, [b]]",
    "|\n  text: here\n  kind: Inside",
    "|-\n    kind: Inside\n\n    more",
    ">\n  folded\n  line",
    "|2\n   indented",
    "|\n",
    '"multi\nkind: Hidden"',
    "'multi\nname: hidden'",
    '"multi\n  line"',
    "'it''s\n  wrapped'",
    '"escaped \\\n  break"',
    '"blank\n\n  line"',
    '"wrapped\n  kind: Hidden" # comment',
    '"wrapped\n  line" junk',
    '!!str "tagged\n  wrapped"',
    '\n"on its own line\nkind: Hidden"',
    '\n"on its own line\n  deeper"',
    '\n  "on its own line\nshallower"',
    "[a,\nkind: Hidden]",
    "{a: 1,\n  b: 2}",
    "plain\n  continued",
    "plain\nkind: Broken",
    '"ends with space "',
    '"back\\\\"',
    "'\"'",
    "a'b",
    'a"b',
    "- item",
]
TOP_KEYS = ["apiVersion", "kind", "metadata", "spec", "items", "data", "status", "rules", "x"]
ODD_KEYS = ['"kind"', "kind ", "? kind", "<<", "&a kind", "kind:x", "Kind", "apiVersion", "metadata"]
META_KEYS = ["name", "namespace", "generateName", "labels", "annotations", "finalizers", "uid", '"name"', "name "]
STRAY_LINES = ["# comment", "", "  # indented comment", "---", "...", "%YAML 1.1", "\tkey: tab", "- loose", "  "]

scalars = st.sampled_from(SCALARS)


def _indented(value: str, indent: int) -> str:
    """A value's continuation lines pushed right (most of the time) or left where they are."""
    first, *rest = value.split("\n")
    return "\n".join([first, *(" " * indent + line if line else line for line in rest)])


@st.composite
def mappings(draw: st.DrawFn, keys: list[str], depth: int, indent: int) -> str:
    """A block mapping's lines at `indent`, values of every style, sometimes nested or sequence-valued."""
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        key = draw(st.sampled_from(keys))
        kind = draw(st.integers(0, 9))
        pad = " " * indent
        if kind <= 5 or depth == 0:
            value = draw(scalars)
            shift = draw(st.sampled_from([indent + 2, indent + 2, 0, indent]))
            lines.append(f"{pad}{key}: {_indented(value, shift)}".rstrip(" ") if value else f"{pad}{key}:")
        elif kind <= 7:
            child = draw(st.sampled_from([indent + 1, indent + 2, indent + 4]))
            lines.append(f"{pad}{key}:")
            lines.append(draw(mappings(["a", "b", "name", "kind", "app.kubernetes.io/name"], depth - 1, child)))
        else:
            item_indent = draw(st.sampled_from([indent, indent + 2]))
            lines.append(f"{pad}{key}:")
            for _ in range(draw(st.integers(1, 3))):
                lines.append(f"{' ' * item_indent}- {_indented(draw(scalars), item_indent + 2)}")
        if draw(st.integers(0, 7)) == 0:
            lines.append(draw(st.sampled_from(STRAY_LINES)))
    return "\n".join(line for line in lines if line is not None)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A document: a `# Source:` line, then top-level entries in any order, with stray lines between."""
    lines = ["# Source: chart/templates/x.yaml"] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(1, 6))):
        roll = draw(st.integers(0, 11))
        if roll == 0:
            key = draw(st.sampled_from(ODD_KEYS))
        else:
            key = draw(st.sampled_from(TOP_KEYS if roll > 3 else ["apiVersion", "kind", "metadata"]))
        if key in ("metadata", "spec") and draw(st.integers(0, 4)) > 0:
            lines.append(f"{key}:")
            indent = draw(st.sampled_from([1, 2, 2, 2, 4]))
            body_keys = META_KEYS if key == "metadata" else ["group", "names", "scope", "versions", "kind"]
            lines.append(draw(mappings(body_keys, 2, indent)))
        elif key == "kind" and draw(st.booleans()):
            lines.append(f"kind: {draw(st.sampled_from(['CustomResourceDefinition', 'Deployment', 'List']))}")
        else:
            value = draw(scalars)
            lines.append(f"{key}: {_indented(value, draw(st.sampled_from([0, 2])))}" if value else f"{key}:")
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(STRAY_LINES)))
    text = "\n".join(line for line in lines if line)
    return text + "\n" if draw(st.integers(0, 9)) else text


SIMPLE = ["v1", "apps/v1", "Deployment", "CustomResourceDefinition", "web", '"1.0"', "'x'", "a.b/c-d"]


@st.composite
def helm_documents(draw: st.DrawFn) -> str:
    """What helm mostly prints: `apiVersion`, `kind`, a block `metadata`, then a body; with a twist now and
    then (a tricky value, an odd line, a look-alike key) so both the fast and the careful reading are held
    to the parser."""
    simple = st.sampled_from(SIMPLE)
    tricky = st.one_of(*[simple] * 8, scalars)
    lines = ["# Source: chart/templates/x.yaml"] if draw(st.booleans()) else []
    lines.append(f"apiVersion: {draw(tricky)}")
    lines.append(f"kind: {draw(tricky)}")
    lines.append("metadata:")
    indent = " " * draw(st.sampled_from([2, 2, 4, 1]))
    keys = draw(st.lists(st.sampled_from([*META_KEYS, "name", "namespace", "labels"]), max_size=5))
    for key in draw(st.permutations(["name", *keys])) if draw(st.integers(0, 4)) else keys:
        if key in ("labels", "annotations"):
            lines.append(f"{indent}{key}:")
            for _ in range(draw(st.integers(0, 3))):
                lines.append(f"{indent}  {draw(st.sampled_from(['a', 'app.kubernetes.io/name', 'b']))}: {draw(tricky)}")
        else:
            lines.append(f"{indent}{key}: {_indented(draw(tricky), len(indent) + 2)}")
        if draw(st.integers(0, 19)) == 0:
            lines.append(draw(st.sampled_from(STRAY_LINES)))
    if draw(st.booleans()):
        lines.append("spec:")
        lines.append(draw(mappings(["group", "names", "scope", "versions", "replicas", "kind", "name"], 2, 2)))
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(TOP_KEYS * 4 + ODD_KEYS))
        lines.append(f"{key}: {_indented(draw(tricky), draw(st.sampled_from([0, 2])))}")
    text = "\n".join(line for line in lines if line)
    return text + "\n" if draw(st.integers(0, 9)) else text


any_documents = st.one_of(documents(), helm_documents(), helm_documents())


def _full(text: str) -> Any:
    try:
        return goyaml.load(text)
    except Exception:
        return ValueError


SETTINGS = settings(
    max_examples=int(os.environ.get("SCAN_EXAMPLES", "800")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(any_documents)
@example(
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: "abc\nkind: Hidden"\n',
)
@example('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    a: "x\n  name: hidden"\n  name: real\n')
@example("kind: A\nmetadata:\n  name: a\nspec: [1,\nitems: [2]]\n")
@example("apiVersion: v1\nkind: A\nmetadata:\n  name: foo\n    continued\n")
def test_a_sure_scan_reads_what_the_parser_reads(text: str) -> None:
    scanned = manifests.scan(text)
    full = _full(text)
    if scanned is None or full is ValueError:
        return
    head, metadata = scanned
    assert isinstance(full, dict)
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
    elif "metadata" in full:
        raise AssertionError("the scan missed a metadata entry")
    if full.get("kind") == "CustomResourceDefinition":
        spec = full.get("spec")
        expected = (
            {key: spec[key] for key in ("group", "names", "scope") if key in spec} if isinstance(spec, dict) else None
        )
        assert head.spec == expected or (head.spec is None and "spec" not in full)


@SETTINGS
@given(any_documents)
def test_resources_read_from_a_scan_equal_those_of_a_full_parse(text: str) -> None:
    """The whole of `parse` (checks and messages included) gives the same resources either way."""
    lazy, lazy_error = _parsed(text, scan=True)
    full, full_error = _parsed(text, scan=False)
    if full_error is not None:
        return  # broken YAML: refused either way, or (in a body the scan never parses) left for Argo CD
    assert lazy_error is None
    assert [_identity(r) for r in lazy] == [_identity(r) for r in full]
    assert crd_scopes(r.identity() for r in lazy) == crd_scopes(r.obj for r in full)
    for ours, theirs in zip(lazy, full, strict=True):
        assert ours.obj == theirs.obj


def _parsed(text: str, *, scan: bool) -> tuple[list[Resource], str | None]:
    original = manifests._scan
    if not scan:
        manifests._scan = lambda text, plain: None  # type: ignore[assignment]
    try:
        return manifests.parse(text), None
    except Exception as error:
        return [], str(error)
    finally:
        manifests._scan = original  # type: ignore[assignment]


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
        resource.text,
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
@given(any_documents, EDITS)
@example(
    "# Source: c/crds/w.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    "metadata: {name: w.example.io}\nspec:\n  group: example.io\n  names: {kind: W}\n",
    [("annotations", "argocd.argoproj.io/sync-options", "Prune=false,Delete=false")],
)
def test_a_spliced_metadata_block_reads_as_a_full_reserialisation(text: str, edits: list[tuple[str, str, str]]) -> None:
    text = text if text.endswith("\n") else text + "\n"  # the stream puts a newline before the next `---`
    scanned = manifests.scan(text)
    full = _full(text)
    if scanned is None or not isinstance(full, dict) or not isinstance(full.get("metadata"), dict):
        return
    head, metadata = scanned
    resource = Resource(None, "c/t.yaml", text, 0, head=head, metadata=metadata)
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
    assert spliced.startswith(text[: head.metadata[0]] if head.metadata else "")
    reread = goyaml.load(spliced)
    assert reread == expected
    assert list(reread) == list(expected)
    assert reread == goyaml.load(goyaml.dump(expected))


def _old_split(stream: str) -> list[tuple[str, str]]:
    """The split before the fast one: `^`-anchored patterns and a line-by-line content test; the oracle."""
    separator = re.compile(r"^---[ \t]*(?:#[^\n]*)?(?:\n|\Z)", re.M)
    source_line = re.compile(r"^# Source: (.+?)[ \t]*$", re.M)
    chunks, source, pending = [], "", ""
    pieces, separators = separator.split(stream), separator.findall(stream)
    for position, text in enumerate(pieces):
        found = source_line.search(text)
        if found:
            source = found.group(1)
        if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
            if text.strip() and position < len(separators):
                pending += text + separators[position]
            continue
        chunks.append((pending + text, source))
        pending = ""
    return chunks


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
        "\u2028",
        "\r\n",
        "  # indented comment\n",
        "#x\x85y\n",
        "\x0c",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(STREAM_PARTS, max_size=12).map("".join))
def test_the_fast_split_cuts_where_the_old_one_did(stream: str) -> None:
    assert [(c.text, c.source) for c in manifests.split(stream)] == _old_split(stream)


def test_a_column_0_line_inside_a_multi_line_quote_is_not_taken_for_a_key() -> None:
    text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: "abc\nkind: Hidden"\n'
    assert manifests.scan(text) is None  # unsure: the document is parsed whole
    (resource,) = manifests.parse(text)
    assert resource.kind == "ConfigMap" and resource.obj["data"]["x"] == "abc kind: Hidden"


def test_helm_style_documents_are_read_without_the_parser() -> None:
    text = (
        "# Source: app/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
        '  name: web\n  namespace: shop\n  labels:\n    app.kubernetes.io/version: "1.0"\nspec:\n  replicas: 1\n'
    )
    head, metadata = manifests.scan(text) or (None, None)
    assert head is not None and metadata is None  # no parse was needed
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


def test_a_generated_crd_is_read_in_one_pass_over_its_schema() -> None:
    padded = "\n" + KUBEBUILDER_CRD
    spec = manifests._crd_rest(padded, padded.index("\nspec:"))
    expected = {
        "group": "example.io",
        "names": {"kind": "W", "plural": "ws", "shortNames": ["w"]},
        "scope": "Namespaced",
    }
    assert spec == expected
    head, metadata = manifests.scan(KUBEBUILDER_CRD) or (None, None)
    assert head is not None and head.spec == expected and metadata is None


@pytest.mark.parametrize(
    "change",
    [
        ("  scope: Namespaced\n", "  # the scope\n  scope: Namespaced\n"),  # a comment at two spaces
        ("  scope: Namespaced\n", '  "scope": Namespaced\n'),  # a quoted key
        ("  scope: Namespaced\n", "  scope: Namespaced\n  group: again\n"),  # a key twice
        ("  scope: Namespaced\n", "  scope: Namespaced\n# a note\n  group: again\n"),  # the spec goes on
        ("status:\n", "spec:\n  group: two\nstatus:\n"),  # spec twice
        ("status:\n", " stray: 1\nstatus:\n"),  # a line at one space
        ("status:\n", "kind: Other\nstatus:\n"),  # an identity key again
    ],
)
def test_an_unusual_crd_is_left_to_the_general_reading(change: tuple[str, str]) -> None:
    text = KUBEBUILDER_CRD.replace(*change, 1)
    padded = "\n" + text
    assert manifests._crd_rest(padded, padded.index("\nspec:")) is manifests._UNSURE
    scanned, full = manifests.scan(text), _full(text)
    if scanned is not None and full is not ValueError:
        assert scanned[0].spec == {key: full["spec"][key] for key in ("group", "names", "scope") if key in full["spec"]}


WRAPPED_DESCRIPTIONS = (
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ws.example.io\n"
    "spec:\n  group: example.io\n  names:\n    kind: W\n    plural: ws\n  scope: Cluster\n  versions:\n"
    "  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          resources:\n"
    "            description: 'Optional: requests and limits for\n              each pod'\n"
    '            type: object\n          selector:\n            description: "Selector picks\n'
    '              \\ objects (see\\nPolicy)."\n            type: string\n'
)


def test_quoted_descriptions_wrapped_onto_deeper_lines_do_not_send_a_crd_to_the_parser() -> None:
    head, metadata = manifests.scan(WRAPPED_DESCRIPTIONS) or (None, None)
    assert head is not None and metadata is None
    assert head.spec == {"group": "example.io", "names": {"kind": "W", "plural": "ws"}, "scope": "Cluster"}


def test_a_quote_that_starts_its_own_line_may_go_on_at_that_depth() -> None:
    text = WRAPPED_DESCRIPTIONS.replace(
        '            description: "Selector picks\n',
        '            description:\n              "Selector picks\n',
    )
    assert text != WRAPPED_DESCRIPTIONS
    head, _ = manifests.scan(text) or (None, None)
    assert head is not None and head.spec is not None and head.spec["scope"] == "Cluster"


@pytest.mark.parametrize(
    "change",
    [
        ("              each pod'", "            each pod'"),  # a line as shallow as the one the quote opens on
        ("description: 'Optional", "description: !!str 'Optional"),  # a tag: the parser reads it
        ("each pod'\n", "each pod' trailing\n"),  # more than a comment after the closing quote
    ],
)
def test_a_quote_continued_otherwise_is_left_to_the_parser(change: tuple[str, str]) -> None:
    assert manifests.scan(WRAPPED_DESCRIPTIONS.replace(*change, 1)) is None
