"""The sidecar's run: uid 999, HOME=/tmp, a read-only repository copy. chartshare's init, generate and
parameters commands (and the helm they run) must write nothing outside the sidecar's /tmp: not into the
repository, not into the machine's shared places. The sidecar's own /tmp emptyDir is stood in for by a
fresh directory that is HOME and TMPDIR.

Needs root (to become uid 999) and an interpreter uid 999 may run; skipped, saying why, otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT

ARGOCD_UID = 999
SHARED_WRITABLE = (Path("/var/tmp"), Path("/run/lock"), Path("/dev/shm"))
APP = "examples/shoong-delivery/apps/dev/notification"


def _interpreter() -> str | None:
    """This Python if uid 999 can run it (it often lives under /root), else the system one of the same version."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
        )
        if probe.returncode == 0 and probe.stdout.strip() == str(sys.version_info[:2]):
            return candidate
    return None


def _snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry under `root`: (mode, size, mtime_ns); symlinks not followed."""
    entries = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            info = os.lstat(os.path.join(folder, name))
            entries[os.path.relpath(os.path.join(folder, name), root)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return entries


def _listing(folder: Path) -> set[str]:
    """The names in a shared folder that belong to uid 999 (other users' processes may come and go)."""
    try:
        return {entry.name for entry in os.scandir(folder) if entry.stat(follow_symlinks=False).st_uid == ARGOCD_UID}
    except OSError:
        return set()


@pytest.fixture
def sidecar(helm: str) -> Iterator[dict[str, Path]]:
    """A read-only copy of the repository's tracked files, the helm binary, and the sidecar's /tmp."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("becoming uid 999 needs root and setpriv")
    base = Path(tempfile.mkdtemp(prefix="chartshare-sidecar-"))
    try:
        base.chmod(0o755)
        repo, tools, scratch = base / "repo", base / "bin", base / "tmp"
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        for name in tracked.decode().split("\0"):
            if name and (ROOT / name).is_file():
                (repo / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, repo / name)
        tools.mkdir()
        shutil.copy2(helm, tools / "helm")
        scratch.mkdir()
        scratch.chmod(0o1777)
        subprocess.run(["chmod", "-R", "a-w,a+rX", str(repo), str(tools)], check=True)
        yield {"base": base, "repo": repo, "helm": tools / "helm", "tmp": scratch}
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def test_the_sidecar_commands_as_uid_999_write_nothing_outside_tmp(sidecar: dict[str, Path]) -> None:
    python = _interpreter()
    if python is None:
        pytest.skip("no Python of this version that uid 999 may run")
    repo, scratch = sidecar["repo"], sidecar["tmp"]
    site = sysconfig.get_paths()["purelib"]
    as_argocd = ["setpriv", f"--reuid={ARGOCD_UID}", f"--regid={ARGOCD_UID}", "--clear-groups", "--inh-caps=-all"]
    values = '["/examples/shoong-delivery/values/common.yaml","/examples/shoong-delivery/values/notification.yaml"]'
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "PYTHONPATH": f"{repo}:{site}",  # bytecode writes into the read-only copy must fail quietly
        "ARGOCD_APP_NAME": "dev-shoong-notification",
        "ARGOCD_APP_NAMESPACE": "shoong",
        "ARGOCD_APP_SOURCE_PATH": APP,
        "ARGOCD_APP_PARAMETERS": f'[{{"name":"values-files","array":{values}}}]',
        "CHARTSHARE_HELM": str(sidecar["helm"]),
        "KUBE_VERSION": "1.31.0",
    }
    probe = subprocess.run(
        [*as_argocd, python, "-c", "import cmp, yaml, typer, jsonpatch"], env=env, capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"uid 999 cannot import chartshare's dependencies here: {probe.stderr.decode()[-200:]}")
    before_repo = _snapshot(repo)
    before_shared = {folder: _listing(folder) for folder in (Path("/tmp"), *SHARED_WRITABLE)}
    results = {
        command: subprocess.run(
            [*as_argocd, python, "-m", "cmp", command],
            cwd=repo / APP,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        for command in ("init", "generate", "parameters")  # the sidecar's three commands, in Argo CD's order
    }
    for command, result in results.items():
        assert result.returncode == 0, f"{command}: {result.stderr}"
        assert "Traceback" not in result.stderr
    assert "kind: Namespace" in results["generate"].stdout
    assert _snapshot(repo) == before_repo, "the repository copy changed"
    for folder, names in before_shared.items():
        assert _listing(folder) == names, f"something new appeared in {folder}"
    assert all(path.lstat().st_uid == ARGOCD_UID for path in scratch.rglob("*"))  # helm's cache, if any
