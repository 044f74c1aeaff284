"""The helm call: argv that cannot be hijacked, a deadline that holds, and helm's faults told apart."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cmp.errors import HelmError
from cmp.helm.process import run_helm
from cmp.helm.template import HelmInvocation, helm_args
from cmp.inputs.config import Template
from conftest import ROOT, clean_env, process_gone


def test_include_crds_is_always_said_so_helm_2_fails_fast() -> None:
    call = HelmInvocation(Path("."), Template("web"))
    assert helm_args(call)[-1] == "--include-crds"
    skip = HelmInvocation(Path("."), Template("web", include_crds=False))
    assert helm_args(skip)[-1] == "--include-crds=false"


def _script(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "fake-helm"
    script.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    script.chmod(0o755)
    return script


def test_a_hang_is_stopped_at_the_deadline_with_its_whole_process_group(tmp_path: Path) -> None:
    helm = _script(tmp_path, f"sleep 300 &\necho $! > {tmp_path}/child\nsleep 300\n")
    started = time.monotonic()
    with pytest.raises(HelmError, match=r"did not finish within 1 s and was stopped"):
        run_helm([str(helm)], cwd=tmp_path, timeout=1, what="helm template")
    assert time.monotonic() - started < 5
    assert process_gone(int((tmp_path / "child").read_text()))


def test_a_descendant_that_left_the_group_cannot_hold_the_deadline_open(tmp_path: Path) -> None:
    helm = _script(tmp_path, f"setsid sleep 300 &\necho $! > {tmp_path}/escaped\nsleep 300\n")
    started = time.monotonic()
    try:
        with pytest.raises(HelmError, match=r"did not finish within 1 s"):
            run_helm([str(helm)], cwd=tmp_path, timeout=1, what="helm template")
        assert time.monotonic() - started < 5
    finally:
        with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
            os.kill(int((tmp_path / "escaped").read_text()), signal.SIGKILL)


def test_leftovers_of_a_helm_that_succeeded_are_killed(tmp_path: Path) -> None:
    helm = _script(tmp_path, f"sleep 300 >/dev/null 2>&1 &\necho $! > {tmp_path}/child\necho ok\n")
    assert run_helm([str(helm)], cwd=tmp_path, timeout=5, what="helm template") == "ok\n"
    assert process_gone(int((tmp_path / "child").read_text()))


def test_a_leftover_holding_helms_output_open_does_not_hold_the_answer(tmp_path: Path) -> None:
    helm = _script(tmp_path, f"sleep 300 &\necho $! > {tmp_path}/child\necho ok\n")
    started = time.monotonic()
    assert run_helm([str(helm)], cwd=tmp_path, timeout=30, what="helm template") == "ok\n"
    assert time.monotonic() - started < 20
    assert process_gone(int((tmp_path / "child").read_text()))


def test_output_beyond_what_a_pipe_holds_and_stdin_arrive_whole(tmp_path: Path) -> None:
    block = "".join(f"line {number:07d}\n" for number in range(8 << 20 >> 4))  # 8 MiB
    (tmp_path / "big").write_text(block, encoding="utf-8")
    helm = _script(tmp_path, f"cat {tmp_path}/big\ncat\nhead -c 100000 {tmp_path}/big >&2\n")
    secret = b"a secret that never appears in argv\n"
    out = run_helm([str(helm)], cwd=tmp_path, timeout=30, what="helm template", stdin=secret)
    assert out == block + secret.decode()
    failing = _script(tmp_path, f"cat {tmp_path}/big\necho 'Error: it broke' >&2\nexit 1\n")
    with pytest.raises(HelmError, match=r"failed \(exit status 1\): Error: it broke$"):
        run_helm([str(failing)], cwd=tmp_path, timeout=30, what="helm template")


def test_sigterm_takes_helms_process_group_down_with_chartshare(tmp_path: Path) -> None:
    """helm runs in a session of its own, so Argo CD's SIGTERM to chartshare's group never reaches it:
    chartshare must pass it on, and still say why it stopped."""
    helm = _script(tmp_path, f"sleep 300 &\necho $! > {tmp_path}/child\necho $$ > {tmp_path}/helm\nsleep 300\n")
    chart = ROOT / "tests" / "charts" / "shared"
    process = subprocess.Popen(
        [sys.executable, "-m", "cmp", "generate", str(chart), "--app", "web", "--helm", str(helm)],
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60  # a loaded machine starts Python slowly
    written = tmp_path / "helm"  # written last: both pids are there once it holds one
    while not (written.exists() and written.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert written.exists() and written.read_text().strip(), "helm never started"
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 143
    assert out == ""
    assert err == "chartshare: error: stopped by SIGTERM; helm and everything it started were killed\n"
    assert process_gone(int((tmp_path / "helm").read_text())) and process_gone(int((tmp_path / "child").read_text()))


def test_helm_log_lines_stay_out_of_the_first_words_of_an_error(tmp_path: Path, helm: str) -> None:
    """helm 4 logs `level=INFO msg=...`, helm 3 `load.go:120: ...`, before the error of a chart whose
    requirements.yaml names a dependency that was never built: the error starts with helm's `Error:`."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "requirements.yaml").write_text(
        "dependencies:\n- {name: redis, version: 1.0.0, repository: https://charts.example.com}\n"
    )
    with pytest.raises(HelmError) as raised:
        run_helm([helm, "template", "."], cwd=tmp_path, timeout=30, what="helm template")
    message = str(raised.value)
    assert message.lower().startswith("helm template failed (exit status 1): error: an error occurred while checking")
    assert message.rstrip('"').endswith("We recommend migrating dependencies to Chart.yaml.")
    assert "; helm also logged: " in message and "\n" not in message


def test_no_descriptor_left_for_helm_s_output_is_one_clear_error(tmp_path: Path) -> None:
    import resource

    helm = _script(tmp_path, "echo ok\n")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    held = []
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        with contextlib.suppress(OSError):
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        with pytest.raises(HelmError, match=r"^cannot set up helm template's output: Too many open files$"):
            run_helm([str(helm)], cwd=tmp_path, timeout=5, what="helm template")
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert run_helm([str(helm)], cwd=tmp_path, timeout=5, what="helm template") == "ok\n"


def test_helm_runs_at_gogc_200_unless_the_environment_sets_gogc(tmp_path: Path) -> None:
    helm = _script(tmp_path, 'echo "GOGC=${GOGC-unset} HOME=${HOME-unset}"\n')
    home = {"HOME": str(tmp_path)}
    said = run_helm([str(helm)], cwd=tmp_path, timeout=5, what="helm template", env=home)
    assert said == f"GOGC=200 HOME={tmp_path}\n"
    kept = run_helm([str(helm)], cwd=tmp_path, timeout=5, what="helm template", env={**home, "GOGC": "100"})
    assert kept == f"GOGC=100 HOME={tmp_path}\n"
    inherited = run_helm([str(helm)], cwd=tmp_path, timeout=5, what="helm template")
    assert inherited.startswith("GOGC=200 " if "GOGC" not in os.environ else f"GOGC={os.environ['GOGC']} ")


def test_an_argument_list_over_the_system_s_limit_is_named_with_its_fix(helm: str, tmp_path: Path) -> None:
    """exec refuses a command line over Linux's bounds (E2BIG): the values are too large, not the binary."""
    with pytest.raises(HelmError) as refused:
        run_helm([helm, "template", ".", f"--set=big={'x' * 200_000}"], cwd=tmp_path, timeout=5, what="helm template")
    message = str(refused.value)
    assert message.startswith("helm template cannot be started: its 4 arguments (")
    assert "the longest 200010" in message and "E2BIG" in message and "values file" in message
    assert "cannot be run" not in message


def test_parameters_that_make_helm_s_command_line_too_long_end_in_one_named_line(helm: str) -> None:
    """Argo CD hands parameters over in the environment, and helm gets them again as arguments: 12 api
    versions of 100 KB each fit chartshare's start, not helm's (2 MiB for both together)."""
    versions = {f"PARAM_API_VERSIONS_{index}": f"example.com/v{index}/" + "x" * 100_000 for index in range(12)}
    app = ROOT / "examples" / "shoong-delivery" / "apps" / "dev" / "notification"
    argv = [sys.executable, "-m", "cmp", "generate", str(app), "--app", "dev-shoong-notification"]
    done = subprocess.run(
        [*argv, "--repo-root", str(ROOT), "--helm", helm],
        env=clean_env(versions),
        capture_output=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.startswith(b"chartshare: error: helm template cannot be started: its ")
    assert done.stderr.count(b"\n") == 1 and b"E2BIG" in done.stderr, done.stderr
