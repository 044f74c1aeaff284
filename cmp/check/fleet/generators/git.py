"""The git generator, read from a checkout: one parameter set per matching folder (`directories`) or per
object in each matching JSON/YAML file (`files`).

Argo CD lists every folder of the repository except hidden ones and matches `directories[].path` with Go's
path.Match (an `exclude: true` entry wins over any include); `files[].path` goes to `git ls-files` as a
pathspec, and a file holds one object or a list of them. check reads the checkout's working tree instead
of a revision: `revision` is ignored, and said once. A pattern that climbs out of the repository (`..`, an
absolute path) is bad input: Argo CD would match nothing there, which is never what was meant.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from cmp import goyaml
from cmp.check.fleet import globs
from cmp.check.fleet.generators.context import Context, Unevaluated
from cmp.check.fleet.generators.params import GeneratorError, Params, flatten, path_params, with_values

REVISION_NOTE = "git generators: `revision` is ignored; check reads each checkout as it is"
MAX_FILE_BYTES = 4 << 20


def generate(spec: Mapping[str, Any], where: str, context: Context) -> list[Params]:
    url = spec.get("repoURL")
    if not isinstance(url, str) or not url:
        raise GeneratorError(f"{where}.repoURL is missing")
    checkout = context.repositories.checkout_of(url)
    if checkout is None:
        raise Unevaluated(
            f"{where}.repoURL {url} is neither a remote of --repo-root nor given with --repo {url}=DIR, so check "
            "has no checkout to read"
        )
    if spec.get("revision"):
        context.notes.add(REVISION_NOTE)
    prefix = str(spec.get("pathParamPrefix") or "")
    directories, files = spec.get("directories"), spec.get("files")
    if directories and files:
        raise GeneratorError(f"{where} sets both directories and files; Argo CD reads only directories then")
    if directories:
        found = [
            path_params(folder, go=context.go_template, prefix=prefix)
            for folder in _matching(_patterns(directories, f"{where}.directories"), _folders(checkout))
        ]
    elif files:
        found = [
            params
            for path in _files(checkout, files, where)
            for params in _file_params(checkout, path, where, context, prefix)
        ]
    else:
        raise GeneratorError(f"{where} needs directories or files")
    return [with_values(spec.get("values"), params, context.go_template, context.options, where) for params in found]


def _patterns(entries: Any, where: str) -> list[tuple[str, bool]]:
    """(path, exclude) of each entry, refusing paths that leave the repository."""
    if not isinstance(entries, list):
        raise GeneratorError(f"{where} must be a list of {{path, exclude}}")
    patterns = []
    for position, entry in enumerate(entries):
        place = f"{where}[{position}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str) or not entry["path"]:
            raise GeneratorError(f"{place} needs a path")
        path = entry["path"]
        if path.startswith("/") or ".." in PurePosixPath(path).parts:
            raise GeneratorError(
                f"{place}.path {path!r} leaves the repository; paths are relative to the repository root"
            )
        exclude = entry.get("exclude", False)
        if not isinstance(exclude, bool):
            raise GeneratorError(f"{place}.exclude must be true or false")
        patterns.append((path, exclude))
    return patterns


def _matching(patterns: list[tuple[str, bool]], folders: list[str]) -> Iterator[str]:
    for folder in folders:
        try:
            hits = [exclude for pattern, exclude in patterns if globs.path_match(pattern, folder)]
        except globs.BadPattern as problem:
            raise GeneratorError(str(problem)) from None
        if hits and not any(hits):
            yield folder


def _folders(checkout: Path) -> list[str]:
    """Every folder of the checkout but hidden ones (and their contents), links not followed, in walk order."""
    found: list[str] = []
    for folder, subfolders, _ in os.walk(checkout):
        subfolders[:] = sorted(
            name for name in subfolders if not name.startswith(".") and not os.path.islink(os.path.join(folder, name))
        )
        found += [Path(folder, name).relative_to(checkout).as_posix() for name in subfolders]
    return sorted(found)


def _files(checkout: Path, entries: Any, where: str) -> list[str]:
    """The files the include patterns name, less those an exclude names, sorted."""
    patterns = _patterns(entries, f"{where}.files")
    every = list(_every_file(checkout))
    try:
        chosen = {
            path
            for path in every
            for pattern, exclude in patterns
            if not exclude and globs.pathspec_match(pattern, path)
        }
        dropped = {
            path for path in chosen for pattern, exclude in patterns if exclude and globs.pathspec_match(pattern, path)
        }
    except globs.BadPattern as problem:
        raise GeneratorError(str(problem)) from None
    return sorted(chosen - dropped)


def _every_file(checkout: Path) -> Iterator[str]:
    for folder, subfolders, names in os.walk(checkout):
        subfolders[:] = sorted(name for name in subfolders if name != ".git")
        for name in sorted(names):
            yield Path(folder, name).relative_to(checkout).as_posix()


def _file_params(checkout: Path, path: str, where: str, context: Context, prefix: str) -> list[Params]:
    """The parameter sets of one file: each object it holds, with the path parameters of its folder."""
    target = (checkout / path).resolve()
    if not target.is_relative_to(checkout.resolve()):
        raise GeneratorError(f"{where}: {path} is a link that leads out of the repository")
    try:
        raw = target.read_bytes()
    except OSError as error:
        raise GeneratorError(f"{where}: cannot read {path}: {error.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise GeneratorError(f"{where}: {path} is too large ({len(raw)} bytes) for a generator file")
    try:
        loaded = goyaml.load(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, yaml.YAMLError):
        raise GeneratorError(f"{where}: {path} is neither JSON nor YAML") from None
    objects = loaded if isinstance(loaded, list) else [loaded]
    folder = str(PurePosixPath(path).parent)
    found = []
    for position, obj in enumerate(objects):
        if not isinstance(obj, Mapping):
            raise GeneratorError(
                f"{where}: {path}{f' item {position}' if isinstance(loaded, list) else ''} is not an object"
            )
        paths = path_params(folder, go=context.go_template, prefix=prefix, filename=PurePosixPath(path).name)
        found.append({**obj, **paths} if context.go_template else {**flatten(obj), **paths})
    return found
