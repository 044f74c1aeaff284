"""The paths a run may touch: each resolved with symlinks followed and kept inside the repository.

Argo CD unpacks the repository for every request and rejects symlinks that leave it; helm, though, follows
whatever a chart or a value file points at (`.Files.Get` included). So every path chartshare hands helm,
and every symlink inside a chart, must resolve inside the repository root. A value-file glob is expanded
folder by folder, each folder checked to be in the repository before it is listed: no name outside it is
ever read, or shown in a message.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Iterable
from pathlib import Path

from cmp.errors import PathError

CONFIG_FILE = "chartshare.yaml"
MAX_CONFIG_BYTES = 1 << 20  # chartshare.yaml is a few rules: anything larger is refused unread
MAX_LISTED = 100_000  # folder entries a value-file glob may list; a repository's folders hold far fewer
_GLOB = re.compile(r"[*?\[]")


def is_glob(pattern: str) -> bool:
    """Whether a shell-style pattern holds a wildcard (else it names one thing, compared as text)."""
    return _GLOB.search(pattern) is not None


def shown(path: Path, root: Path) -> str:
    """How messages name a path: relative to the repository root when inside it."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def find_repo_root(app_dir: Path, source_path: str) -> Path:
    """APP_DIR minus ARGOCD_APP_SOURCE_PATH, else the nearest folder holding `.git`, else APP_DIR."""
    parts = [part for part in Path(source_path.strip("/")).parts if part not in ("", ".")]
    if parts and tuple(app_dir.parts[-len(parts) :]) == tuple(parts):
        return app_dir.parents[len(parts) - 1]
    for folder in (app_dir, *app_dir.parents):
        if (folder / ".git").exists():
            return folder
    return app_dir


def resolved(path: Path, what: str) -> Path:
    """Path.resolve(), whose symlink-loop error (RuntimeError in 3.11, OSError later) becomes a PathError."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        raise PathError(f"{what} is a symlink loop") from None


def resolve_path(raw: str, base: Path, root: Path, what: str) -> Path:
    """A path relative to `base` (or to the repository root with a leading `/`), confined to `root`."""
    candidate = root / raw.lstrip("/") if raw.startswith("/") else base / raw
    found = resolved(candidate, f"{what}: file '{raw}'")
    if not found.is_relative_to(root):
        raise PathError(f"{what}: file '{raw}' resolved to outside repository root")
    if not found.exists():
        raise PathError(f"{what}: file '{raw}' does not exist (looked for {found})")
    return found


def config_file(app_dir: Path, root: Path, chosen: str) -> Path | None:
    """The ownership file: the one `config` names, else chartshare.yaml in the app's folder if there is one."""
    if chosen:
        return resolve_path(chosen, app_dir, root, "config")
    if (app_dir / CONFIG_FILE).exists():
        return resolve_path(CONFIG_FILE, app_dir, root, "config")
    return None


def confine_tree(folder: Path, root: Path, what: str) -> None:
    """Every symlink under `folder` (a chart) must resolve inside the repository: helm follows them
    and renders, or hands to `.Files.Get`, whatever they point at (/etc/passwd, a service-account token)."""
    pending, seen = [folder], {folder}
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError as error:
            raise PathError(f"{what}: cannot read {shown(Path(current), root)}: {error.strerror}") from None
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    raise PathError(f"{what}: symlink {shown(path, root)} is broken or loops") from None
                if not target.is_relative_to(root):
                    raise PathError(
                        f"{what}: symlink {shown(path, root)} resolved to outside repository root ({target})"
                    )
                if target.is_dir() and target not in seen:  # helm walks into it: so do we, once
                    seen.add(target)
                    pending.append(target)
            elif entry.is_dir(follow_symlinks=False):
                pending.append(path)


def resolve_values_files(
    patterns: Iterable[str], app_dir: Path, root: Path, *, ignore_missing: bool = False
) -> tuple[Path, ...]:
    """Value files in the given order; a glob expands to its matches in lexical order, as Argo CD does.
    With `ignore_missing` (Argo CD's ignoreMissingValueFiles) a file or pattern that finds nothing is
    left out instead of being an error; one that resolves outside the repository is still refused."""
    files: list[Path] = []
    for pattern in patterns:
        base = root if pattern.startswith("/") else app_dir
        if not is_glob(pattern):
            if ignore_missing and _missing(pattern, base, root):
                continue
            files.append(resolve_path(pattern, app_dir, root, "values-files"))
            continue
        matches = _expand(pattern, base, root)
        if not matches:
            if ignore_missing:
                continue
            raise PathError(f"values-files: pattern '{pattern}' matched no file")
        files.extend(resolve_path(str(Path(match).relative_to(base)), base, root, "values-files") for match in matches)
    return tuple(files)


def _expand(pattern: str, base: Path, root: Path) -> list[str]:
    """The glob's matches, sorted, as glob.glob finds them, but listing only folders that resolve inside the
    repository; a pattern that would list or step into one outside it is refused by its own name."""
    found = [str(base)]
    listed = 0
    parts = [part for part in pattern.lstrip("/").split("/") if part]
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        below: list[str] = []
        for folder in found:
            if not Path(os.path.realpath(folder)).is_relative_to(root):
                raise PathError(f"values-files: pattern '{pattern}' reaches outside the repository root")
            if not glob.has_magic(part):
                if os.path.lexists(os.path.join(folder, part)):
                    below.append(os.path.join(folder, part))
                continue
            names = _entries(folder, dirs_only=not last)
            listed += len(names)
            if listed > MAX_LISTED:
                raise PathError(f"values-files: pattern '{pattern}' lists more than {MAX_LISTED} files and folders")
            if not part.startswith("."):  # as glob: a wildcard matches no hidden name
                names = [name for name in names if not name.startswith(".")]
            below += [os.path.join(folder, name) for name in fnmatch.filter(names, part)]
        found = below
    return sorted(found)


def _entries(folder: str, *, dirs_only: bool) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [entry.name for entry in entries if not dirs_only or entry.is_dir()]
    except OSError:  # not a folder, or unreadable: nothing matches in it, as with glob
        return []


def _missing(pattern: str, base: Path, root: Path) -> bool:
    """Whether a value file does not exist (a broken link included), once it is known to stay inside."""
    candidate = base / pattern.lstrip("/")
    found = resolved(candidate, f"values-files: file '{pattern}'")
    if not found.is_relative_to(root):
        raise PathError(f"values-files: file '{pattern}' resolved to outside repository root")
    return not found.exists()
