"""chartshare.yaml's post-render fields (kustomize's names and shapes), read strictly into cmp/postrender's
types: every problem names the file, the line and the entry (`patches[2].target.kind`), and a patch that is
neither a strategic merge patch nor a JSON 6902 list, or a `path:` outside the repository, is refused here,
before helm runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from cmp import goyaml, tenant_yaml
from cmp.errors import ChartShareError, shortened
from cmp.inputs.paths import MAX_CONFIG_BYTES, resolve_path, shown
from cmp.ownership.reader import AnyKey, Reader
from cmp.postrender.fields import Image, Labels, Patch, PostRender, Target
from cmp.postrender.select import SelectorError, parse_selector

POST_RENDER_KEYS = (
    "patches",
    "images",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "commonLabels",
)
PATCH_ENTRY_KEYS = ("patch", "path", "target", "options", "apps")
TARGET_KEYS = ("group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector")
OPTION_KEYS = ("allowNameChange", "allowKindChange")
IMAGE_KEYS = ("name", "newName", "newTag", "digest", "tagSuffix", "apps")
LABEL_KEYS = ("pairs", "includeSelectors", "includeTemplates", "apps")
JSON6902_KEYS = ("target", "path", "patch", "apps")
JSON6902_OPS = ("add", "remove", "replace", "move", "copy", "test")
LEGACY = {
    "patchesStrategicMerge": "patches (each entry as {path: FILE} or {patch: TEXT})",
    "patchesJson6902": "patches (each entry as {target: ..., patch: TEXT} or {target: ..., path: FILE})",
    "commonLabels": "labels (as [{pairs: {...}, includeSelectors: true}])",
}


class _PatchLoader(goyaml.GoLoader):
    """A patch as kustomize reads it (go-yaml v3): only true and false are booleans; `y`, `yes`, `on`
    stay strings."""


def _v3_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool | str:
    value = str(node.value)
    if value in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return value.lower() == "true"
    return value


_PatchLoader.add_constructor("tag:yaml.org,2002:bool", _v3_bool)


def _load_patch(text: str) -> list[Any]:
    loader = _PatchLoader(text)
    try:
        documents = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                documents.append(loader.construct_document(node))
        return documents
    finally:
        loader.dispose()


def _has_aliases(text: str) -> bool:
    """Anchors and aliases can multiply a small file into a huge one (chartshare.yaml refuses them too)."""
    try:
        return any(
            isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None)
            for event in yaml.parse(text, Loader=yaml.CSafeLoader)
        )
    except yaml.YAMLError:
        return False  # the patch's own reading says what is wrong


def read(reader: Reader, top: dict[str, yaml.Node], path: Path, root: Path) -> PostRender:
    """The post-render fields of a chartshare.yaml's top-level entries (an empty PostRender without any)."""
    if not any(key in top for key in POST_RENDER_KEYS):
        return PostRender()
    loader = _Loader(reader, path, root)
    strategic = loader.items(top, "patchesStrategicMerge", loader.strategic_entry)
    patches = loader.items(top, "patches", loader.patch_entry)
    labels = loader.items(top, "labels", loader.labels_entry)
    if "commonLabels" in top:
        pairs = loader.pairs(top["commonLabels"], "commonLabels")
        labels += (Labels(loader.where(top["commonLabels"], "commonLabels"), pairs, include_selectors=True),)
    annotations = loader.pairs(top["commonAnnotations"], "commonAnnotations") if "commonAnnotations" in top else ()
    json6902 = loader.items(top, "patchesJson6902", loader.json6902_entry)
    images = loader.items(top, "images", loader.image_entry)
    notices = tuple(
        f"notice: {loader.where(top[key], key)}: `{key}` is kustomize's legacy field, applied with its meaning; "
        f"its current form is {current}"
        for key, current in LEGACY.items()
        if key in top
    )
    return PostRender(strategic, patches, labels, annotations, json6902, images, tuple(loader.files), notices)


class _Loader:
    def __init__(self, reader: Reader, path: Path, root: Path) -> None:
        self.reader = reader
        self.path = path
        self.root = root
        self.files: list[Path] = []

    def where(self, node: yaml.Node, place: str) -> str:
        return f"{self.reader.display}:{node.start_mark.line + 1}: {place}"

    def items(self, top: dict[str, yaml.Node], key: str, read: Any) -> tuple[Any, ...]:
        return self.reader.items(top[key], key, read) if key in top else ()

    def apps(self, entries: dict[str, yaml.Node], where: str) -> tuple[str, ...]:
        return self.reader.globs(entries["apps"], f"{where}.apps") if "apps" in entries else ()

    def pairs(self, node: yaml.Node, where: str) -> tuple[tuple[str, str], ...]:
        entries = self.reader.mapping(node, where, AnyKey())
        return tuple((key, self._text(value, f"{where}.{key}")) for key, value in entries.items())

    def _text(self, node: yaml.Node, where: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or not isinstance(self.reader.construct(node, where), str):
            raise self.reader.error(node, where, "must be a string (kustomize reads only strings here; quote it)")
        return str(node.value)

    def _flag(self, entries: dict[str, yaml.Node], key: str, where: str) -> bool:
        return self.reader.scalar(entries[key], f"{where}.{key}", bool, "true or false") if key in entries else False

    def patch_entry(self, node: yaml.Node, where: str) -> Patch:
        entries = self.reader.mapping(node, where, PATCH_ENTRY_KEYS)
        text = self._text_of(node, entries, where)
        target = self._target(entries["target"], f"{where}.target") if "target" in entries else None
        options: dict[str, yaml.Node] = {}
        if "options" in entries:
            options = self.reader.mapping(entries["options"], f"{where}.options", OPTION_KEYS)
        documents, operations = self._parsed(node, text, where, target)
        return Patch(
            self.where(node, where),
            documents,
            operations,
            target,
            allow_name_change=self._flag(options, "allowNameChange", f"{where}.options"),
            allow_kind_change=self._flag(options, "allowKindChange", f"{where}.options"),
            apps=self.apps(entries, where),
        )

    def strategic_entry(self, node: yaml.Node, where: str) -> Patch:
        """A legacy entry: a file's path, or a patch written inline."""
        value = self.reader.string(node, where)
        text = value if "\n" in value.strip() or ":" in value else self._file(node, value, where)
        documents, operations = self._parsed(node, text, where, None)
        if operations is not None:
            raise self.reader.error(
                node, where, "is a JSON 6902 list; patchesStrategicMerge takes strategic merge patches"
            )
        return Patch(self.where(node, where), documents, None)

    def json6902_entry(self, node: yaml.Node, where: str) -> Patch:
        entries = self.reader.mapping(node, where, JSON6902_KEYS)
        if "target" not in entries:
            raise self.reader.error(node, where, "a JSON 6902 patch needs a `target:`")
        target = self._target(entries["target"], f"{where}.target")
        _, operations = self._parsed(node, self._text_of(node, entries, where), where, target)
        if operations is None:
            raise self.reader.error(node, where, "is not a JSON 6902 list of operations")
        return Patch(self.where(node, where), (), operations, target, apps=self.apps(entries, where))

    def image_entry(self, node: yaml.Node, where: str) -> Image:
        entries = self.reader.mapping(node, where, IMAGE_KEYS)
        if "name" not in entries:
            raise self.reader.error(node, where, "missing `name:`, the image the entry is about")
        values = {
            key: self._text(entries[key], f"{where}.{key}") if key in entries else ""
            for key in ("name", "newName", "newTag", "digest", "tagSuffix")
        }
        return Image(
            self.where(node, where),
            values["name"],
            values["newName"],
            values["newTag"],
            values["digest"],
            values["tagSuffix"],
            self.apps(entries, where),
        )

    def labels_entry(self, node: yaml.Node, where: str) -> Labels:
        entries = self.reader.mapping(node, where, LABEL_KEYS)
        if "pairs" not in entries:
            raise self.reader.error(node, where, "missing `pairs:`, the labels to set")
        return Labels(
            self.where(node, where),
            self.pairs(entries["pairs"], f"{where}.pairs"),
            self._flag(entries, "includeSelectors", where),
            self._flag(entries, "includeTemplates", where),
            self.apps(entries, where),
        )

    def _target(self, node: yaml.Node, where: str) -> Target:
        entries = self.reader.mapping(node, where, TARGET_KEYS)
        if not entries:
            raise self.reader.error(node, where, "is empty; give at least one of: " + ", ".join(TARGET_KEYS))
        values = {key: self.reader.string(entries[key], f"{where}.{key}") for key in entries}
        for key in TARGET_KEYS[:5]:
            if key in values:
                try:
                    re.compile(values[key])
                except re.error as error:
                    raise self.reader.error(
                        entries[key], f"{where}.{key}", f"not a regular expression: {error}"
                    ) from None
        for key in TARGET_KEYS[5:]:
            if key in values:
                try:
                    parse_selector(values[key])
                except SelectorError as error:
                    raise self.reader.error(entries[key], f"{where}.{key}", str(error)) from None
        return Target(
            group=values.get("group", ""),
            version=values.get("version", ""),
            kind=values.get("kind", ""),
            name=values.get("name", ""),
            namespace=values.get("namespace", ""),
            label_selector=values.get("labelSelector", ""),
            annotation_selector=values.get("annotationSelector", ""),
        )

    def _text_of(self, node: yaml.Node, entries: dict[str, yaml.Node], where: str) -> str:
        if ("patch" in entries) == ("path" in entries):
            raise self.reader.error(
                node, where, "give one of `patch:` (the patch itself) or `path:` (a file holding it)"
            )
        if "patch" in entries:
            return self.reader.string(entries["patch"], f"{where}.patch")
        return self._file(entries["path"], self.reader.string(entries["path"], f"{where}.path"), f"{where}.path")

    def _file(self, node: yaml.Node, raw: str, where: str) -> str:
        """A patch file, relative to chartshare.yaml's folder, confined to the repository."""
        try:
            found = resolve_path(raw, self.path.parent, self.root, where)
            if not found.is_file():
                raise self.reader.error(node, where, f"{raw!r} is not a file")
            with found.open("rb") as file:
                data = file.read(MAX_CONFIG_BYTES + 1)
        except ChartShareError as error:
            message = str(error).removeprefix(f"{where}: ")
            raise self.reader.error(node, where, message) from None
        except OSError as error:
            raise self.reader.error(node, where, f"cannot read {raw!r}: {error.strerror}") from None
        if len(data) > MAX_CONFIG_BYTES:
            raise self.reader.error(node, where, f"{raw!r} is too large for a patch (limit 1 MiB)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise self.reader.error(node, where, f"{shown(found, self.root)} is not UTF-8 text") from None
        if "&" in text and "*" in text and _has_aliases(text):
            raise self.reader.error(node, where, f"{raw!r} uses YAML anchors and aliases; write the values out")
        try:
            tenant_yaml.check(text, MAX_CONFIG_BYTES)
        except tenant_yaml.Refused as refused:
            raise self.reader.error(node, where, refused.named(shown(found, self.root))) from None
        self.files.append(found)
        return text

    def _parsed(
        self, node: yaml.Node, text: str, where: str, target: Target | None
    ) -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...] | None]:
        """Strategic merge documents, or JSON 6902 operations, as kustomize tells them apart."""
        if not text.strip():
            raise self.reader.error(node, where, "the patch is empty")
        try:
            tenant_yaml.check(text, MAX_CONFIG_BYTES)
        except tenant_yaml.Refused as refused:
            raise self.reader.error(node, where, f"the patch, line {refused.line}: {refused.problem}") from None
        try:
            documents = [document for document in _load_patch(text) if document is not None]
        except (yaml.YAMLError, ValueError) as error:
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
            raise self.reader.error(node, where, f"the patch is not YAML: {problem}") from None
        if len(documents) == 1 and isinstance(documents[0], list):
            if target is None:
                raise self.reader.error(node, where, "a JSON 6902 patch needs a `target:` saying which objects")
            return (), tuple(self._operation(node, op, f"{where}[{i}]") for i, op in enumerate(documents[0]))
        if not documents or not all(isinstance(document, dict) for document in documents):
            raise self.reader.error(
                node, where, "the patch is neither a strategic merge patch (a mapping) nor a JSON 6902 list"
            )
        if target is not None and len(documents) > 1:
            raise self.reader.error(
                node, where, "a patch with a `target:` holds one strategic merge patch, not several"
            )
        if target is None:
            for document in documents:
                meta = document.get("metadata")
                if not document.get("kind") or not isinstance(meta, dict) or not meta.get("name"):
                    raise self.reader.error(
                        node, where, "a strategic merge patch without `target:` needs kind and metadata.name"
                    )
        return tuple(documents), None

    def _operation(self, node: yaml.Node, operation: Any, where: str) -> dict[str, Any]:
        if not isinstance(operation, dict) or operation.get("op") not in JSON6902_OPS:
            shown_op = shortened(json.dumps(operation, default=str), 80)
            raise self.reader.error(
                node, where, f"{shown_op} is not a JSON 6902 operation (op: {', '.join(JSON6902_OPS)})"
            )
        op = operation["op"]
        needs = (
            ("path",)
            + (("value",) if op in ("add", "replace", "test") else ())
            + (("from",) if op in ("move", "copy") else ())
        )
        for key in needs:
            if key not in operation:
                raise self.reader.error(node, where, f"`{op}` needs `{key}`")
        for key in ("path", "from"):
            if key in operation and not (
                isinstance(operation[key], str) and (operation[key] == "" or operation[key].startswith("/"))
            ):
                raise self.reader.error(node, f"{where}.{key}", f"{operation[key]!r} is not a JSON Pointer")
        return operation
