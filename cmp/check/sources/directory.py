"""A directory source rendered as Argo CD's repo-server reads one: every `.yaml`, `.yml` and `.json` file of
the source path (its subfolders too with `recurse`), filtered by `include` and `exclude`.

The rules follow reposerver/repository/repository.go: globs are gobwas/glob's, matched against the path
relative to the source folder, `exclude` first; a link must stay inside the repository (a link to
nothing is passed over); a file holding `+argocd:skip-file-rendering` is left out; a JSON file holds one
object; a YAML file that does not parse is an error only when it looks like a manifest (it names
`apiVersion:`, `kind:` and `metadata:`), else it is someone's unrelated YAML and ignored, as Argo CD
ignores it. A `.jsonnet` file is evaluated as Argo CD evaluates it (cmp/check/sources/jsonnet.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from cmp import goyaml
from cmp.check.fleet import globs
from cmp.check.sources.jsonnet import Evaluator
from cmp.errors import ManifestError, ParameterError, PathError
from cmp.manifests import Resource

SUFFIXES = (".yaml", ".yml", ".json", ".jsonnet")
FIELDS = ("recurse", "include", "exclude", "jsonnet", "disableExtensionFilter")
SKIP_MARKER = b"+argocd:skip-file-rendering"
LOOKS_LIKE_A_MANIFEST = (b"apiVersion:", b"kind:", b"metadata:")
MAX_BYTES = 64 << 20  # together, as the repo-server bounds a directory source's files


def manifest_files(app_dir: Path, root: Path, fields: Mapping[str, Any], where: str) -> list[Path]:
    """The files Argo CD reads, in its walk order; raises ParameterError / PathError for bad fields and links."""
    for key in fields:
        if key not in FIELDS:
            raise ParameterError(f"{where}: unknown field {key!r}; Argo CD knows {', '.join(FIELDS)}")
    recurse, any_suffix = _flag(fields, "recurse", where), _flag(fields, "disableExtensionFilter", where)
    include, exclude = _glob(fields, "include", where), _glob(fields, "exclude", where)
    found: list[Path] = []
    for path in _walk(app_dir, recurse):
        relative = path.relative_to(app_dir).as_posix()
        if not any_suffix and not path.name.endswith(SUFFIXES):
            continue
        if path.is_symlink():
            try:
                target = path.resolve(strict=True)
            except FileNotFoundError:
                continue  # Argo CD passes over a link to nothing, with a warning
            if not target.is_relative_to(root):
                raise PathError(f"{where}: {relative} is a link that leads out of the repository")
            if not target.is_file():
                continue
        elif not path.is_file():
            continue
        try:
            if exclude and globs.gobwas_match(exclude, relative):
                continue
            if include and not globs.gobwas_match(include, relative):
                continue
        except globs.BadPattern as problem:
            raise ParameterError(f"{where}: {problem}") from None
        found.append(path)
    return found


def _walk(folder: Path, recurse: bool) -> Iterator[Path]:
    """Go's filepath.Walk: names in lexical order, folders entered where they sort; links not followed."""
    for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if recurse:
                yield from _walk(path, recurse)
        else:
            yield path


def resources(files: list[Path], app_dir: Path, jsonnet: Evaluator | None = None) -> list[Resource]:
    """Every object the files hold, `List`s flattened, as Argo CD would apply them; `.jsonnet` files
    evaluated by `jsonnet` (a source without jsonnet files needs none)."""
    found: list[Resource] = []
    total = 0
    for path in files:
        raw = path.read_bytes()
        total += len(raw)
        if total > MAX_BYTES:
            raise ManifestError(f"{app_dir}: the manifests add up to more than {MAX_BYTES >> 20} MiB")
        if SKIP_MARKER in raw:
            continue
        name = path.relative_to(app_dir).as_posix()
        if name.endswith(".jsonnet"):
            if jsonnet is None:
                raise ManifestError(f"{name}: a jsonnet file, and no jsonnet settings to evaluate it with")
            objects = jsonnet.objects(path, name)
        else:
            objects = _objects(raw, name)
        for obj in objects:
            for item in obj["items"] if isinstance(obj.get("items"), list) else [obj]:
                if not isinstance(item, dict) or not item.get("kind") or not item.get("apiVersion"):
                    raise ManifestError(f"{name}: an item of a List is not a complete Kubernetes object")
                found.append(Resource(item, name, None, len(found)))
    return found


def _objects(raw: bytes, name: str) -> list[dict[str, Any]]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ManifestError(f"{name}: not UTF-8 text (bad byte at offset {error.start})") from None
    if name.endswith(".json"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as error:
            raise ManifestError(
                f"{name}: not valid JSON ({error.msg}, line {error.lineno}); a JSON file holds one object"
            ) from None
        if not _is_object(obj):
            raise ManifestError(f"{name}: a JSON file must hold one Kubernetes object (apiVersion, kind, metadata)")
        return [obj]
    objects: list[dict[str, Any]] = []
    try:
        for document in goyaml.load_all(text):
            if document is None:
                continue
            if not _is_object(document):
                raise ValueError("not a Kubernetes object")
            objects.append(document)
    except (yaml.YAMLError, ValueError) as error:
        if objects or all(mark in raw for mark in LOOKS_LIKE_A_MANIFEST):
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
            raise ManifestError(f"{name}: failed to read the manifest: {problem}") from None
        return []  # not a manifest: Argo CD leaves it out
    return objects


def _is_object(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj.get("kind")) and bool(obj.get("apiVersion"))


def _flag(fields: Mapping[str, Any], key: str, where: str) -> bool:
    value = fields.get(key, False)
    if not isinstance(value, bool):
        raise ParameterError(f"{where}.{key} must be true or false")
    return value


def _glob(fields: Mapping[str, Any], key: str, where: str) -> str:
    value = fields.get(key) or ""
    if not isinstance(value, str):
        raise ParameterError(f"{where}.{key} must be a glob string")
    return value
