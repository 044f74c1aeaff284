"""How a command ends when it is interrupted (SIGINT, Ctrl-C): every command, not only generate, exits 130
with one line on stderr and nothing on stdout, and takes the helm it started along."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, process_gone

CHARTSHARE = str(Path(sys.executable).parent / "chartshare")
EXAMPLE = ROOT / "examples" / "shoong-delivery"
NOTIFICATION = EXAMPLE / "apps" / "dev" / "notification"


def _slow_helm(folder: Path) -> tuple[Path, Path]:
    """A helm that notes its pid and then hangs, as a chart with a stalled lookup or dependency would."""
    pids = folder / "helm.pid"
    slow = folder / "helm"
    slow.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 60\n")
    slow.chmod(0o755)
    return slow, pids


def _chart_with_a_dependency(folder: Path) -> Path:
    """A chart whose file:// dependency init builds with helm."""
    for name, extra in (
        ("sub", ""),
        ("app", "dependencies:\n  - {name: sub, version: 0.1.0, repository: file://../sub}\n"),
    ):
        (folder / name / "templates").mkdir(parents=True)
        (folder / name / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n{extra}")
    return folder / "app"


def _command(name: str, slow: Path, folder: Path) -> list[str]:
    if name == "generate":
        return ["generate", str(NOTIFICATION), "--app", "dev-shoong-notification", "--repo-root", str(ROOT)]
    if name == "parameters":
        return ["parameters", str(NOTIFICATION), "--app", "dev-shoong-notification", "--repo-root", str(ROOT)]
    if name.startswith("check"):  # one render at a time in this process, or two in a pool of workers
        jobs = "2" if name.endswith("pool") else "1"
        mapped = ["--repo", f"https://git.example.com/platform/gitops.git={ROOT}"]
        return ["check", str(EXAMPLE / "argocd"), "--repo-root", str(ROOT), *mapped, "--no-cache", "--jobs", jobs]
    chart = _chart_with_a_dependency(folder)
    return ["init", str(chart), "--repo-root", str(folder)]


def _helms(pids: Path) -> list[int]:
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


@pytest.mark.parametrize("name", ["generate", "check", "check in a pool", "init", "parameters"])
def test_sigint_ends_every_command_in_one_line_and_130(name: str, tmp_path: Path) -> None:
    slow, pids = _slow_helm(tmp_path)
    argv = [CHARTSHARE, *_command(name, slow, tmp_path), "--helm", str(slow)]
    command = subprocess.Popen(argv, cwd=ROOT, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(_helms(pids)) < (2 if name.endswith("pool") else 1) and command.poll() is None:
            assert time.monotonic() < deadline, "helm never started"
            time.sleep(0.05)
        assert command.poll() is None, command.communicate()
        command.send_signal(signal.SIGINT)
        # not waiting for helm's deadline (45 s): the renders in flight are stopped
        out, err = command.communicate(timeout=30)
    finally:
        command.kill()
    assert (command.returncode, out, err) == (130, b"", b"chartshare: error: interrupted\n")
    for helm in _helms(pids):
        assert process_gone(helm, within=10), "helm outlived the interrupted command"
