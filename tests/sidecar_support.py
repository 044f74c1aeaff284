"""Helpers for the sidecar tests: a checkout of the repository, a sidecar PATH, the example Applications."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from conftest import ROOT

SIDECAR_UID = 999  # plugin.yaml's sidecar runs as the argocd user, as Argo CD's install requires


def tracked_files(root: Path = ROOT) -> list[str]:
    """What a git checkout of this tree holds: tracked files plus new, not ignored ones."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted({name for name in listed.split("\0") if name and (root / name).exists()})


def checkout(target: Path, *, read_only: bool = False) -> Path:
    """A copy of the repository as the repo-server holds it (no virtualenv, no caches)."""
    for name in tracked_files():
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, destination, follow_symlinks=False)
    if read_only:
        for current, _dirs, files in os.walk(target):
            for name in files:
                path = Path(current) / name
                if not path.is_symlink():
                    path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) | 0o444)
            Path(current).chmod(0o555)
    return target


def make_writable(top: Path) -> None:
    for current, dirs, _files in os.walk(top):
        Path(current).chmod(0o755)
        for name in dirs:
            (Path(current) / name).chmod(0o755)


def shared_tmp(prefix: str) -> Path:
    """A folder under /tmp that uid 999 can enter (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


def sidecar_bin(target: Path, **programs: Path) -> Path:
    """A PATH folder holding `helm` and `chartshare` as the image has them on its PATH."""
    target.mkdir(parents=True, exist_ok=True)
    for name, program in programs.items():
        (target / name).symlink_to(program)
    return target


def sidecar_env(bin_dir: Path, home: Path, **extra: str) -> dict[str, str]:
    """The sidecar container's own environment: no ARGOCD_*, a PATH with helm and chartshare, HOME."""
    return {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", **extra}


def example_applications(root: Path = ROOT) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every Argo CD Application manifest under examples/ (any file, any document)."""
    for path in sorted((root / "examples").rglob("*.y*ml")):
        if path.suffix not in (".yaml", ".yml"):
            continue
        try:
            documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue
        for document in documents:
            if (
                isinstance(document, dict)
                and document.get("kind") == "Application"
                and str(document.get("apiVersion", "")).startswith("argoproj.io/")
            ):
                yield f"{path.relative_to(root)}:{document['metadata']['name']}", document


def plugin_applications(root: Path = ROOT) -> list[tuple[str, dict[str, Any]]]:
    """The example Applications whose source is a plugin (single or among `sources`): the sidecar's work.
    Those of a remote chart need its repository: tests/test_example_remote_chart.py serves it."""
    from emulator import Application

    found = []
    for name, doc in example_applications(root):
        app = Application.from_manifest(doc)
        config = root / app.path / "chartshare.yaml"
        remote = config.is_file() and isinstance((yaml.safe_load(config.read_text()) or {}).get("chart"), dict)
        if app.plugin is not None and not remote:
            found.append((name, doc))
    return found


def git_revision() -> str:
    found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    return found.stdout.strip() if found.returncode == 0 else "0" * 40
