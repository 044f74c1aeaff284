"""The bad-input corpus: one row of tests/corpus/errors.yaml per way to feed chartshare something wrong.

Every row runs the real CLI (`python -m cmp generate`) against a fresh copy of a small repository, on helm 3
and on helm 4, and asserts what Argo CD depends on: the exit status, NOTHING on stdout (Argo CD reads an
empty stdout from a successful run as "prune everything", and a failed run must never leave half a stream),
no traceback, and exactly one stderr line `chartshare: error: ...` that names the cause and where it is.
A few rows feed flag-like data that must stay data: those render (exit 0) and prove nothing they name ran.

Row keys (all optional but `name` and `error`/`exit`):
  files: {path: text | !!binary | {prefix, repeat, times, suffix}}   written under the repository (`{repo}`)
  links: {path: target}    symlinks;  remove: [path];  fifos: [path];  modes: {path: 0644}
  fake_helm: shell body    a fake helm binary for this row instead of the real one
  args / env / app_dir     what to run (defaults: `{repo}/app`, `--repo-root {repo} --app dev-a`)
  exit, error (regex searched in the one stderr line), stdout_contains, never_created, max_seconds,
  killed_pids / cleanup_pids: files under {tmp} holding pids that must be dead / are to be killed after
  cache: corrupt | full    the render cache on, in {tmp}/cache: every entry of a first run corrupted, or
                           the cache on a tmpfs with no room left (needs the right to mount; skipped else)
  notice                   for a run that succeeds: a regex searched in stderr
  deep: {path: depth}      a folder `depth` levels deep (path/d/d/.../d/bottom.txt), made without recursion
  cached: yes | no         for a run that succeeds: whether a second run is a render cache hit
Placeholders: {repo} {tmp} {outside} {helm} (the real helm of this run), {byte:XX} (a raw non-UTF-8 byte).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import deep_folders
import pytest
import yaml

from conftest import TESTS, process_gone, run_cli

ROWS: list[dict[str, Any]] = yaml.safe_load((TESTS / "corpus" / "errors.yaml").read_text(encoding="utf-8"))
CHART = TESTS / "charts" / "shared"
DEFAULT_CONFIG = """apiVersion: chartshare/v1
kind: ChartShare
chart: ../chart
owner: dev-a
rules:
  - match: {group: "", kind: Namespace, name: shoong}
    owner: dev-a
"""


def _fill(text: str, places: dict[str, str]) -> str:
    for key, value in places.items():
        text = text.replace("{" + key + "}", value)
    return re.sub(r"\{byte:([0-9a-f]{2})\}", lambda m: chr(0xDC00 + int(m.group(1), 16)), text)


def _text(content: str | dict[str, Any], places: dict[str, str]) -> str:
    """A string, or {prefix, repeat, times, suffix} for inputs too big to spell out."""
    if isinstance(content, str):
        return _fill(content, places)
    body = _fill(content["repeat"], places) * content["times"]
    return _fill(content.get("prefix", ""), places) + body + _fill(content.get("suffix", ""), places)


def _write(path: Path, content: Any, places: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(_text(content, places), encoding="utf-8")


def _prepare(row: dict[str, Any], tmp: Path, helm: str) -> tuple[list[str], dict[str, str]]:
    repo, outside = tmp / "repo", tmp / "outside"
    places = {"repo": str(repo), "tmp": str(tmp), "outside": str(outside), "helm": helm}
    shutil.copytree(CHART, repo / "chart")
    (repo / "app").mkdir()
    (repo / "app" / "chartshare.yaml").write_text(DEFAULT_CONFIG, encoding="utf-8")
    outside.mkdir()
    (outside / "secret.yaml").write_text("token: stolen\n", encoding="utf-8")
    (outside / "chartshare.yaml").write_text(DEFAULT_CONFIG, encoding="utf-8")
    (tmp / "marker.sh").write_text(f"#!/bin/sh\ntouch {tmp}/EXECUTED\ncat\n", encoding="utf-8")
    (tmp / "marker.sh").chmod(0o755)
    for name in row.get("remove", []):
        (repo / name).unlink()
    for name in row.get("fifos", []):
        os.mkfifo(repo / name)
    for name, content in (row.get("files") or {}).items():
        _write(repo / _fill(name, places), content, places)
    for name, target in (row.get("links") or {}).items():
        link = repo / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(_fill(target, places))
    for name, depth in (row.get("deep") or {}).items():
        deep_folders.make(repo / name, depth)
    for name, mode in (row.get("modes") or {}).items():
        (repo / name).chmod(mode)
    env = {key: _text(value, places) for key, value in (row.get("env") or {}).items()}
    env.setdefault("CHARTSHARE_HELM", helm)
    if "cache" in row or "CHARTSHARE_CACHE" in env:
        env.setdefault("CHARTSHARE_CACHE", str(tmp / "cache"))
        env["CHARTSHARE_RENDER_CACHE"] = "on"
    if "fake_helm" in row:
        fake = tmp / "fake-helm"
        fake.write_text("#!/bin/sh\n" + _fill(row["fake_helm"], places), encoding="utf-8")
        fake.chmod(0o755)
        env["CHARTSHARE_HELM"] = str(fake)
    app_dir = _fill(row.get("app_dir", "{repo}/app"), places)
    args = ["generate", app_dir, "--repo-root", str(repo), "--app", "dev-a"]
    return args + [_fill(str(arg), places) for arg in row.get("args", [])], env


@contextlib.contextmanager
def _cache(row: dict[str, Any], args: list[str], env: dict[str, str]) -> Iterator[None]:
    """The render cache in the state the row asks for."""
    cache = Path(env.get("CHARTSHARE_CACHE", ""))
    if row.get("cache") == "corrupt":
        assert run_cli(args, env=env).exit_code == 0
        for entry in (cache / "renders").iterdir():
            entry.write_bytes(entry.read_bytes()[:-1] + b"!")
    if row.get("cache") != "full":
        yield
        return
    cache.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(cache)]).returncode:
        pytest.skip("a full disk needs the right to mount a tmpfs")
    try:
        (cache / "renders").mkdir(mode=0o700)
        with contextlib.suppress(OSError), (cache / "filler").open("wb") as filler:
            filler.write(b"x" * (1 << 20))
        yield
    finally:
        subprocess.run(["umount", str(cache)], check=True)


@pytest.mark.parametrize("row", ROWS, ids=[row["name"] for row in ROWS])
def test_bad_input(row: dict[str, Any], helm: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    for name, depth in (row.get("deep") or {}).items():
        request.addfinalizer(lambda base=tmp_path / "repo" / name, depth=depth: deep_folders.remove(base, depth))
    args, env = _prepare(row, tmp_path, helm)
    started = time.monotonic()
    try:
        with _cache(row, args, env):
            result = run_cli(args, env=env)
    finally:
        for name in row.get("cleanup_pids", []):  # descendants that escaped chartshare's reach on purpose
            with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
                os.kill(int((tmp_path / name).read_text()), signal.SIGKILL)
    elapsed = time.monotonic() - started
    for name in row.get("killed_pids", []):
        assert process_gone(int((tmp_path / name).read_text())), f"process in {name} outlived chartshare"
    assert "Traceback" not in result.stderr
    assert result.exit_code == row.get("exit", 1), result.stderr
    for path in row.get("never_created", []):
        assert not Path(_fill(path, {"tmp": str(tmp_path)})).exists(), f"{path} was created: something ran"
    if "max_seconds" in row:
        assert elapsed < row["max_seconds"], f"took {elapsed:.1f} s"
    if result.exit_code == 0:
        assert _fill(row["stdout_contains"], {"tmp": str(tmp_path)}) in result.stdout
        if "notice" in row:
            assert re.search(_fill(row["notice"], {"tmp": re.escape(str(tmp_path))}), result.stderr), result.stderr
        if "cached" in row:
            again = run_cli(args, env=env)
            assert again.exit_code == 0 and again.stdout == result.stdout, again.stderr
            assert ("(cached)" in again.stderr) is row["cached"], again.stderr
        return
    assert result.stdout == "", "a failed run must print nothing on stdout"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("chartshare: error: "), result.stderr
    assert "internal error" not in lines[0]
    assert re.search(_fill(row["error"], {}), lines[0]), lines[0]


def test_the_corpus_is_large_enough_and_names_are_unique() -> None:
    names = [row["name"] for row in ROWS]
    assert len(names) == len(set(names))
    assert sum(1 for row in ROWS if row.get("exit", 1) != 0) >= 40
