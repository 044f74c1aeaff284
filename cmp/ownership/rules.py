"""chartshare.yaml: loaded strictly, once, into frozen rules (the types of ruleset.py).

Every problem is reported with the file, the line, the place in the file (`rules[2].match.kind`) and the
offending value, and an unknown key names the nearest valid one: a typo in an ownership rule must never
silently fall back to "keep everything", which is exactly the contention this file exists to stop.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from cmp import goyaml, tenant_yaml
from cmp.errors import ConfigError
from cmp.inputs.paths import MAX_CONFIG_BYTES
from cmp.model import CHART_NAME, DIGEST, EXACT_VERSION, REMOTE_SCHEMES, Action, RemoteChart
from cmp.ownership import postrender_fields
from cmp.ownership.reader import AnyKey, Reader, describe
from cmp.ownership.ruleset import (
    API_VERSION,
    CACHE_CHOICES,
    KIND,
    OTHERS_CHOICES,
    PATCH_OPS,
    PLACEHOLDERS,
    UNOWNED_CHOICES,
    UNRENAMEABLE,
    Match,
    Ownership,
    ReferenceSpec,
    Rule,
    owns,
)
from cmp.ownership.scope import parse_kind_entry

__all__ = [
    "API_VERSION",
    "CACHE_CHOICES",
    "CHART_KEYS",
    "FROM_KEYS",
    "KIND",
    "MATCH_KEYS",
    "OTHERS_CHOICES",
    "PATCH_KEYS",
    "PATCH_OPS",
    "PLACEHOLDERS",
    "REFERENCE_KEYS",
    "RULE_KEYS",
    "TOP_KEYS",
    "UNOWNED_CHOICES",
    "UNRENAMEABLE",
    "Match",
    "Ownership",
    "ReferenceSpec",
    "Rule",
    "compose",
    "load",
    "owns",
    "parse",
    "read_match",
    "read_rule",
]


def load(path: Path, display: str | None = None, root: Path | None = None) -> Ownership:
    """Read and validate chartshare.yaml; raises ConfigError naming file, line, place and value."""
    display = display or str(path)
    try:
        if not path.is_file():  # a FIFO would block open() for ever, a device never end
            raise ConfigError(f"{display}: not a regular file")
        with path.open("rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)  # never more than the limit in memory
            size = max(len(raw), os.fstat(file.fileno()).st_size)
    except OSError as error:
        raise ConfigError(f"{display}: cannot read: {error.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{display}: {size} bytes is too large for an ownership file (limit 1 MiB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{display}: not UTF-8 text (bad byte at offset {error.start})") from None
    return parse(text, path, display, root)


def parse(text: str, path: Path, display: str, root: Path | None = None) -> Ownership:
    """`root`: the repository, which files a patch's `path:` names must be in (default: the file's folder)."""
    node = compose(text, display)
    if node is None:
        raise ConfigError(f"{display}: the file is empty; it needs at least apiVersion: {API_VERSION} and kind: {KIND}")
    return _ownership(Reader(display, goyaml.GoLoader("")), node, path, path.parent if root is None else root)


def compose(text: str, display: str) -> yaml.Node | None:
    """The file's one YAML document as nodes (None when empty), as go-yaml reads it; anchors and aliases
    refused; every YAML error one ConfigError naming the file and line. The fleet policy is read so too."""
    loader = goyaml.GoLoader(text)
    try:
        _refuse_aliases(text, display)  # chartshare.yaml's own rule, said first: no anchors at all
        tenant_yaml.refuse(text, display, MAX_CONFIG_BYTES)  # depth, before anything is composed
        node: yaml.Node | None = loader.get_single_node()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{display}{line}: not valid YAML: {error.problem or error.context}") from None
    except yaml.YAMLError as error:  # a ReaderError (control character...): a position, and a two-line str()
        position = getattr(error, "position", None)
        line = f":{text.count(chr(10), 0, position) + 1}" if isinstance(position, int) else ""
        raise ConfigError(f"{display}{line}: not valid YAML: {str(error).splitlines()[0]}") from None
    finally:
        loader.dispose()
    return node


def _refuse_aliases(text: str, display: str) -> None:
    """Anchors and aliases can multiply a small file into a huge one; rules never need them."""
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = event.start_mark.line + 1 if event.start_mark else 0
            raise ConfigError(f"{display}:{line}: YAML anchors and aliases are not allowed here; write the value out")


TOP_KEYS = (
    "apiVersion",
    "kind",
    "chart",
    "cache",
    "owner",
    "unowned",
    "allowEmpty",
    "rules",
    "references",
    "clusterScopedKinds",
    "namespacedKinds",
    *postrender_fields.POST_RENDER_KEYS,
)
CHART_KEYS = ("repository", "name", "version", "digest")
RULE_KEYS = ("match", "owner", "others", "protect", "renameTo", "patch")
MATCH_KEYS = ("group", "version", "kind", "name", "namespace", "labels", "template")
REFERENCE_KEYS = ("group", "kind", "from", "path")
FROM_KEYS = ("group", "kind")
PATCH_KEYS = ("op", "path", "value", "from")


def _ownership(reader: Reader, node: yaml.Node, path: Path, root: Path) -> Ownership:
    top = reader.mapping(node, "", TOP_KEYS)
    for key, expected in (("apiVersion", API_VERSION), ("kind", KIND)):
        if key not in top:
            raise reader.error(node, "", f"missing {key}: {expected}")
        value = reader.string(top[key], key)
        if value != expected:
            raise reader.error(top[key], key, f"{value!r} is not supported; use {expected!r}")
    rules = reader.items(top["rules"], "rules", lambda n, w: read_rule(reader, n, w)) if "rules" in top else ()
    return Ownership(
        path=path,
        chart=_chart(reader, top["chart"]) if "chart" in top else ".",
        owners=reader.globs(top["owner"], "owner") if "owner" in top else (),
        unowned=Action(reader.choice(top["unowned"], "unowned", UNOWNED_CHOICES)) if "unowned" in top else Action.FAIL,
        allow_empty=reader.scalar(top["allowEmpty"], "allowEmpty", bool, "true or false")
        if "allowEmpty" in top
        else False,
        rules=tuple(rules),
        references=reader.items(top["references"], "references", lambda n, w: _reference(reader, n, w))
        if "references" in top
        else (),
        cluster_scoped_kinds=_kind_list(reader, top, "clusterScopedKinds"),
        namespaced_kinds=_kind_list(reader, top, "namespacedKinds"),
        display=reader.display,
        cache=reader.choice(top["cache"], "cache", CACHE_CHOICES) if "cache" in top else "auto",
        post_render=postrender_fields.read(reader, top, path, root),
    )


def _chart(reader: Reader, node: yaml.Node) -> str | RemoteChart:
    """A folder (a string), or a remote chart: {repository, name, version, digest}."""
    if not isinstance(node, yaml.MappingNode):
        return reader.scalar(node, "chart", str, "a folder, or a mapping {repository, name, version}")
    entries = reader.mapping(node, "chart", CHART_KEYS)
    for key in CHART_KEYS[:3]:
        if key not in entries:
            raise reader.error(
                node,
                "chart",
                f"missing `{key}`; a remote chart needs repository, name and version (digest is optional)",
            )
    repository = reader.string(entries["repository"], "chart.repository")
    parts = urlsplit(repository)
    if not repository.startswith(REMOTE_SCHEMES) or not parts.hostname:
        raise reader.error(
            entries["repository"], "chart.repository", f"{repository!r} is not an https://, http:// or oci:// URL"
        )
    if parts.username is not None or parts.password is not None:
        raise reader.error(
            entries["repository"],
            "chart.repository",
            "credentials do not belong in the URL (this file is in Git); put them in CHARTSHARE_REPOSITORIES",
        )
    name = reader.string(entries["name"], "chart.name")
    if not CHART_NAME.match(name):
        raise reader.error(
            entries["name"], "chart.name", f"{name!r} is not a chart name (letters, digits, '.', '_', '-')"
        )
    return RemoteChart(repository, name, _version(reader, entries["version"]), _digest(reader, entries.get("digest")))


def _version(reader: Reader, node: yaml.Node) -> str:
    """One exact version, as written (`1.10` must not become the number 1.1): Argo CD pins one too."""
    text = str(node.value) if isinstance(node, yaml.ScalarNode) else ""
    if EXACT_VERSION.match(text):
        return text
    if not isinstance(node, yaml.ScalarNode) or not text:
        raise reader.error(node, "chart.version", f"must be one exact version like 1.2.3, got {describe(node)}")
    what = "a range" if re.search(r"[\^~<>=*| ,]|^[xX]|\.[xX*]", text) else "not an exact version"
    raise reader.error(
        node, "chart.version", f"{text!r} is {what}; pin one exact version (MAJOR.MINOR.PATCH, e.g. 1.16.2)"
    )


def _digest(reader: Reader, node: yaml.Node | None) -> str:
    if node is None:
        return ""
    digest = reader.string(node, "chart.digest")
    if not DIGEST.match(digest.lower()):
        raise reader.error(
            node, "chart.digest", f"{digest!r} is not sha256:<64 hex digits> (the sha256 of the chart's .tgz)"
        )
    return digest.lower()


def _kind_list(reader: Reader, top: dict[str, yaml.Node], key: str) -> tuple[str, ...]:
    if key not in top:
        return ()

    def entry(node: yaml.Node, where: str) -> str:
        value = reader.string(node, where)
        try:
            parse_kind_entry(value)
        except ValueError as error:
            raise reader.error(node, where, str(error)) from None
        return value

    return reader.items(top[key], key, entry)


def read_rule(reader: Reader, node: yaml.Node, where: str) -> Rule:
    entries = reader.mapping(node, where, RULE_KEYS)
    if "match" not in entries:
        raise reader.error(node, where, "missing `match:`; say which resources the rule is about")
    match = read_match(reader, entries["match"], f"{where}.match")
    owners = reader.globs(entries["owner"], f"{where}.owner") if "owner" in entries else ()
    default_others = "strip" if owners else "keep"
    others = (
        Action(reader.choice(entries["others"], f"{where}.others", OTHERS_CHOICES))
        if "others" in entries
        else Action(default_others)
    )
    rename_to = ""
    if "renameTo" in entries:
        if others is not Action.RENAME:
            raise reader.error(entries["renameTo"], f"{where}.renameTo", "is used only with `others: rename`")
        rename_to = _template(reader, entries["renameTo"], f"{where}.renameTo")
    if others is Action.RENAME:
        for (group, kind), why in UNRENAMEABLE.items():
            if match.kind == kind and match.group in (None, group):
                raise reader.error(
                    entries["others"],
                    f"{where}.others",
                    f"cannot rename {'an' if kind[0] in 'AEIOU' else 'a'} {kind}: {why}; "
                    "use `others: strip` and one owner instead",
                )
    return Rule(
        position=int(where.rpartition("[")[2].rstrip("]")),
        line=node.start_mark.line + 1,
        match=match,
        owners=owners,
        others=others,
        protect=reader.scalar(entries["protect"], f"{where}.protect", bool, "true or false")
        if "protect" in entries
        else None,
        rename_to=rename_to or "{release}-{name}",
        patch=reader.items(entries["patch"], f"{where}.patch", lambda n, w: _patch(reader, n, w))
        if "patch" in entries
        else (),
        others_written="others" in entries,
    )


def read_match(reader: Reader, node: yaml.Node, where: str) -> Match:
    entries = reader.mapping(node, where, MATCH_KEYS)
    if not entries:
        raise reader.error(node, where, "is empty; give at least one of: " + ", ".join(MATCH_KEYS))
    labels: tuple[tuple[str, str], ...] = ()
    if "labels" in entries:
        label_nodes = reader.mapping(entries["labels"], f"{where}.labels", AnyKey())
        labels = tuple(
            sorted((key, reader.string(value, f"{where}.labels.{key}")) for key, value in label_nodes.items())
        )
    globs = {key: reader.glob(value, f"{where}.{key}") for key, value in entries.items() if key != "labels"}
    return Match(labels=labels, **globs)


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def _template(reader: Reader, node: yaml.Node, where: str) -> str:
    value = reader.string(node, where)
    for name in _PLACEHOLDER.findall(value):
        if name not in PLACEHOLDERS:
            raise reader.error(
                node, where, f"unknown placeholder {{{name}}}; use " + ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            )
    if "{name}" not in value and "{" not in value:
        raise reader.error(node, where, f"{value!r} gives every renamed object the same name; include {{name}}")
    return value


def _patch(reader: Reader, node: yaml.Node, where: str) -> dict[str, Any]:
    entries = reader.mapping(node, where, PATCH_KEYS)
    if "op" not in entries or "path" not in entries:
        raise reader.error(node, where, "a JSON Patch operation needs `op` and `path`")
    op = reader.choice(entries["op"], f"{where}.op", PATCH_OPS)
    operation: dict[str, Any] = {"op": op, "path": _pointer(reader, entries["path"], f"{where}.path")}
    if op in ("add", "replace", "test"):
        if "value" not in entries:
            raise reader.error(node, where, f"`{op}` needs a `value`")
        operation["value"] = reader.construct(entries["value"], f"{where}.value")
    if op in ("move", "copy"):
        if "from" not in entries:
            raise reader.error(node, where, f"`{op}` needs a `from` path")
        operation["from"] = _pointer(reader, entries["from"], f"{where}.from")
    extra = set(entries) - set(operation) - {"value", "from"}
    unused = {"value"} & set(entries) - set(operation) | {"from"} & set(entries) - set(operation)
    if extra or unused:
        key = sorted(extra | unused)[0]
        raise reader.error(entries[key], f"{where}.{key}", f"is not used by `{op}`")
    return operation


def _pointer(reader: Reader, node: yaml.Node, where: str) -> str:
    value = reader.string(node, where)
    if value and not value.startswith("/"):
        raise reader.error(
            node, where, f"{value!r} is not a JSON Pointer; it must start with '/' (e.g. /metadata/labels)"
        )
    if re.search(r"~[^01]|~$", value):
        raise reader.error(node, where, f"{value!r}: '~' must be written ~0, and '/' inside a key ~1")
    return value


def _reference(reader: Reader, node: yaml.Node, where: str) -> ReferenceSpec:
    entries = reader.mapping(node, where, REFERENCE_KEYS)
    for key in ("kind", "from", "path"):
        if key not in entries:
            raise reader.error(node, where, f"missing `{key}`; a reference is {{kind, from: {{group, kind}}, path}}")
    source = reader.mapping(entries["from"], f"{where}.from", FROM_KEYS)
    if "kind" not in source:
        raise reader.error(entries["from"], f"{where}.from", "missing `kind`")
    return ReferenceSpec(
        group=reader.string(entries["group"], f"{where}.group") if "group" in entries else None,
        kind=reader.string(entries["kind"], f"{where}.kind"),
        from_group=reader.string(source["group"], f"{where}.from.group") if "group" in source else None,
        from_kind=reader.string(source["kind"], f"{where}.from.kind"),
        path=_pointer(reader, entries["path"], f"{where}.path"),
        line=node.start_mark.line + 1,
    )
