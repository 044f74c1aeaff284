"""Generated YAML text for the property tests of helm's text (what real charts hold, and what breaks readers),
and the oracle of the text edits.

Two families. `loose_documents` are YAML text rich in the constructs that defeat a line-by-line reading:
quotes and flows that continue on later lines at any depth (libyaml lets both continue even at column 0),
block scalars, multi-line plain scalars, comments, anchors, aliases, tags, duplicate and look-alike keys,
odd indentation; much of it is not valid YAML. `block_documents` are valid block-style documents as
helm and controller-gen write them, whatever their deep content: controller-gen's wrapped quoted
descriptions (continuations starting with `[` and holding unbalanced quotes, or with `&`), CEL rules whose
plain or quoted scalar wraps onto lines starting with `&&`, `!=`, `!has(`, `*`, `|2-` and `>+` blocks,
tabs in block scalars, anchors deep inside, quoted keys, comments at odd depths, flow sequences spanning
lines (ClusterRoles).
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import jsonpatch
import jsonpointer
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

JSONPATCH_FAILS = object()


def jsonpatched(obj: Any, operations: list[dict[str, Any]]) -> Any:
    """What jsonpatch makes of the object (the oracle of every text edit), or JSONPATCH_FAILS."""
    try:
        return jsonpatch.JsonPatch(operations).apply(obj)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, KeyError):
        return JSONPATCH_FAILS


SETTINGS = settings(
    max_examples=int(os.environ.get("SCAN_EXAMPLES", "800")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# --- loose text ------------------------------------------------------------------------------------------------

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
    "!local 5",
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
    "|2-\n   lead\n  kind: Out",
    ">+\n  keep\n\n",
    "|\n  \ttab: bed\n  kind: Inside",
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
    '\'operations\n["CREATE, "UPDATE", "CONNECT"],\nkind: Hidden\'',
    '"operations\n[\\"CREATE, \\"UPDATE\\"],\n  end"',
    "'HTTP\n& HTTPS traffic.'",
    "route HTTP\n& HTTPS",
    "self.a\n&& self.b",
    "self.a\n!= ''",
    "a ||\n!has(self.x)",
    "size(self)\n* 2",
    "size(self)\n*b",
    "x\n!!str y",
    "'rule\n!has(l.tls) : true)'",
    "[a,\nkind: Hidden]",
    '[\n"x",\n"y"\n]',
    "{a: 1,\n  b: 2}",
    "[a, # c ]\n  b]",
    "[a'b, c]",
    "[a 'b]', c]",
    "plain\n  continued",
    "plain\nkind: Broken",
    "plain [x\n  y]",
    'plain "q\n  r',
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
STRAY_LINES = [
    "# comment",
    "",
    "  # indented comment",
    "---",
    "...",
    "%YAML 1.1",
    "\tkey: tab",
    "- loose",
    "  ",
    '  "quoted": key',
    "   # odd comment",
]

scalars = st.sampled_from(SCALARS)


def _indented(value: str, indent: int) -> str:
    """A value's continuation lines pushed right (most of the time) or left where they are."""
    first, *rest = value.split("\n")
    return "\n".join([first, *(" " * indent + line if line else line for line in rest)])


@st.composite
def loose_mappings(draw: st.DrawFn, keys: list[str], depth: int, indent: int) -> str:
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
            lines.append(draw(loose_mappings(["a", "b", "name", "kind", "app.kubernetes.io/name"], depth - 1, child)))
        else:
            item_indent = draw(st.sampled_from([indent, indent + 2]))
            lines.append(f"{pad}{key}:")
            for _ in range(draw(st.integers(1, 3))):
                lines.append(f"{' ' * item_indent}- {_indented(draw(scalars), item_indent + 2)}")
        if draw(st.integers(0, 7)) == 0:
            lines.append(draw(st.sampled_from(STRAY_LINES)))
    return "\n".join(line for line in lines if line is not None)


@st.composite
def loose_documents(draw: st.DrawFn) -> str:
    """A document: a `# Source:` line, then top-level entries in any order, with stray lines between."""
    lines = ["# Source: chart/templates/x.yaml"] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(1, 6))):
        roll = draw(st.integers(0, 11))
        if roll == 0:
            key = draw(st.sampled_from(ODD_KEYS))
        else:
            key = draw(st.sampled_from(TOP_KEYS if roll > 3 else ["apiVersion", "kind", "metadata"]))
        if key in ("metadata", "spec", "items") and draw(st.integers(0, 4)) > 0:
            lines.append(f"{key}:")
            if key == "items":
                for _ in range(draw(st.integers(0, 2))):
                    lines.append("- " + draw(loose_mappings(["apiVersion", "kind", "metadata", "x"], 1, 2)).lstrip())
                continue
            indent = draw(st.sampled_from([1, 2, 2, 2, 4]))
            body_keys = META_KEYS if key == "metadata" else ["group", "names", "scope", "versions", "kind"]
            lines.append(draw(loose_mappings(body_keys, 2, indent)))
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
        lines.append(draw(loose_mappings(["group", "names", "scope", "versions", "replicas", "kind", "name"], 2, 2)))
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(TOP_KEYS * 4 + ODD_KEYS))
        lines.append(f"{key}: {_indented(draw(tricky), draw(st.sampled_from([0, 2])))}")
    text = "\n".join(line for line in lines if line)
    return text + "\n" if draw(st.integers(0, 9)) else text


any_documents = st.one_of(loose_documents(), helm_documents(), helm_documents())

# --- valid block style, as generators write it -----------------------------------------------------------------

# A value as it follows `key: `, its continuation lines at `{i}` (deeper than the key): every one is valid
# YAML at any depth, and each is a shape found in real charts.
DEEP_VALUES = [
    "plain words, with:colons and 'quotes' and \"more\"",
    "'Optional: requests and limits for\n{i}each pod'",
    '"Selector picks\n{i}\\ objects (see\\nPolicy)."',
    '\'Operations is the list\n{i}["CREATE, "UPDATE", "CONNECT", "DELETE"],\n{i}or * for all\'',
    '"Operations is the list\n{i}[\\"CREATE\\", \\"UPDATE\\"], or\n{i}\\"*\\" for all"',
    "'Route traffic for HTTP\n{i}& HTTPS traffic.'",
    "Route traffic for HTTP\n{i}& HTTPS traffic.",
    "self.all(l, has(l.name))\n{i}&& l.port != 0",
    "self.x == 1\n{i}!= false",
    "a ||\n{i}!has(self.tls)",
    "size(self) * 2\n{i}* 3 <= 64",
    "'self.all(l, l.protocol in [''HTTP'', ''TCP''] ?\n{i}!has(l.tls) : true)'",
    "'self.all(l, (l.protocol == ''TLS'' ? has(l.tls)\n{i}&& l.tls.mode != '''' : true))'",
    "tls must not be specified for protocols ['HTTP', 'TCP',\n{i}'UDP']",
    "|2-\n{i} The idle timeout, with a leading space.\n{i} Inherited otherwise.",
    '|-\n{i}* They select different targets.\n{i}  kind: not a key\n\n{i}"unbalanced',
    ">+\n{i}folded\n{i}text\n",
    "|\n{i}Tabbed:\tline\n{i}\tstarts with a tab",
    "&anchor value",
    "&anchor [a, b]",
    "[a,\n{i}b]",
    '\n{i}[\n{i}  "buckets",\n{i}  "bucketaccesses/status"\n{i}]',
    '{a: 1,\n{i}b: "x\n{i}y"}',
    "value # a comment",
    "'it''s quoted'",
    '""',
    "1",
    "true",
    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))$",
    "'[a-z]+'",
]
DEEP_KEYS = [
    "description",
    "type",
    "rule",
    "message",
    "pattern",
    "x-kubernetes-validations",
    '"quoted key"',
    "'single key'",
    "properties",
    "name",
    "kind",
    "apiVersion",
    "metadata",
    "spec",
    "namespace",
    "items",
    "group",
    "scope",
]


_ANCHORS = itertools.count()


def _deep_value(template: str, indent: int) -> str:
    """The value at a key indented by `indent`, each anchor named afresh (PyYAML refuses one twice)."""
    return template.replace("{i}", " " * (indent + 2)).replace("&anchor", f"&a{next(_ANCHORS)}")


@st.composite
def block_mappings(draw: st.DrawFn, depth: int, indent: int) -> list[str]:
    """The lines of a block mapping at `indent`: unique keys, values of the shapes above, nested mappings,
    sequences of mappings (indented or not), comment lines at any depth."""
    lines: list[str] = []
    pad = " " * indent
    for key in draw(st.lists(st.sampled_from(DEEP_KEYS), min_size=1, max_size=4, unique=True)):
        roll = draw(st.integers(0, 9))
        if roll <= 4 or depth == 0:
            lines.append(f"{pad}{key}: {_deep_value(draw(st.sampled_from(DEEP_VALUES)), indent)}")
        elif roll <= 6:
            lines.append(f"{pad}{key}:")
            lines += draw(block_mappings(depth - 1, indent + draw(st.sampled_from([2, 2, 4]))))
        else:
            dash = indent + draw(st.sampled_from([0, 2]))
            lines.append(f"{pad}{key}:")
            for _ in range(draw(st.integers(1, 2))):
                first, *rest = draw(block_mappings(depth - 1, dash + 2))
                lines += [" " * dash + "- " + first[dash + 2 :], *rest]
        if draw(st.integers(0, 6)) == 0:
            lines.append(" " * draw(st.integers(0, indent + 4)) + "# a comment: [unbalanced 'quote")
    return lines


@st.composite
def block_documents(draw: st.DrawFn) -> str:
    """A valid block-style document as helm prints one: its `# Source:` line, `apiVersion`, `kind`, a block
    `metadata` with plain or quoted identity values, then a body (a CRD's spec at two spaces, or another
    kind's) whose deep content takes every shape above; entries now and then in another order, comment
    lines between."""
    kind = draw(st.sampled_from(["CustomResourceDefinition", "ConfigMap", "Deployment", "ClusterRole"]))
    crd = kind == "CustomResourceDefinition"
    step = draw(st.sampled_from([2, 2, 4]))
    pad = " " * step
    name = draw(st.sampled_from(["web", "ws.example.io", '"quoted-name"', "'single'"]))
    metadata = [[f"{pad}name: {name}"]]
    if draw(st.booleans()):
        namespace = draw(st.sampled_from(["shop", '"team-a"']))
        metadata.append([f"{pad}namespace: {namespace}"])
    if draw(st.booleans()):
        metadata.append([f"{pad}labels:", f"{pad}{pad}app.kubernetes.io/name: web", f"{pad}{pad}helm.sh/chart: c-1"])
    if draw(st.booleans()):
        metadata.append([f"{pad}annotations:", *draw(block_mappings(0, step * 2))])
    draw(st.randoms()).shuffle(metadata)
    entries = {
        "apiVersion": [f"apiVersion: {'apiextensions.k8s.io/v1' if crd else draw(st.sampled_from(['v1', 'apps/v1']))}"],
        "kind": [f"kind: {kind}"],
        "metadata": ["metadata:", *(line for entry in metadata for line in entry)],
    }
    if crd:
        scope = draw(st.sampled_from(["Namespaced", "Cluster"]))
        spec = ["spec:", "  group: example.io", "  names:", "    kind: W", "    plural: ws", f"  scope: {scope}"]
        spec += ["  versions:", "  - name: v1", "    schema:", "      openAPIV3Schema:"]
        spec += draw(block_mappings(3, 8))
        entries["spec"] = spec
    else:
        entries["spec"] = ["spec:", *draw(block_mappings(3, step))]
    for key in draw(st.lists(st.sampled_from(["data", "status", "rules"]), max_size=2, unique=True)):
        entries[key] = [f"{key}:", *draw(block_mappings(2, step))]
    order = list(entries)
    if draw(st.integers(0, 4)) == 0:
        draw(st.randoms()).shuffle(order)
    lines = ["# Source: chart/templates/x.yaml"]
    for key in order:
        lines += entries[key]
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["# between entries", "", "   # deeper"])))
    return "\n".join(lines) + "\n"
