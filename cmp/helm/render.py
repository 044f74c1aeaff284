"""Running `helm template`: the arguments (pure) and the one subprocess call.

The arguments match Argo CD's native Helm source, so an app that moves to chartshare renders the same
objects. helm runs in its own process group under chartshare's deadline: Argo CD SIGKILLs a plugin at 60 s
without a word, so helm must be stopped, and the reason printed, before then.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import tempfile

    from cmp.inputs.config import Config

from cmp.errors import HelmError

_STDERR_LIMIT = 2000  # Argo CD shows stderr in its UI; a whole helm trace would bury the cause
HELM2_SIGN = "unknown flag: --include-crds"  # how helm 2 answers every argv helm_args builds


class HelmInvocation(NamedTuple):
    """What to render and how; everything but the binary and the deadline comes from the parameters."""

    chart_dir: Path
    release: str
    namespace: str = ""
    values_files: tuple[Path, ...] = ()
    values_inline: str = ""
    set_values: tuple[tuple[str, str], ...] = ()
    set_strings: tuple[tuple[str, str], ...] = ()
    include_crds: bool = True
    skip_tests: bool = False
    kube_version: str = ""
    api_versions: tuple[str, ...] = ()


def invocation(config: Config, chart: Path) -> HelmInvocation:
    """What a generate run's configuration asks helm to render from `chart`."""
    return HelmInvocation(
        chart_dir=chart,
        release=config.release,
        namespace=config.namespace,
        values_files=config.values_files,
        values_inline=config.values_inline,
        set_values=config.set_values,
        set_strings=config.set_strings,
        include_crds=config.include_crds,
        skip_tests=config.skip_tests,
        kube_version=config.kube_version,
        api_versions=config.api_versions,
    )


def helm_args(call: HelmInvocation, inline_values_file: Path | None = None) -> list[str]:
    """`helm template` argv; every value travels as `--flag=value`, so none can pose as a flag."""
    args = ["template", ".", f"--name-template={call.release}"]
    if call.namespace:
        args.append(f"--namespace={call.namespace}")
    if call.kube_version:
        args.append(f"--kube-version={call.kube_version}")
    args += [f"--api-versions={entry}" for entry in call.api_versions]
    args += [f"--values={path}" for path in call.values_files]
    if inline_values_file is not None:
        args.append(f"--values={inline_values_file}")
    args += [f"--set={key}={value}" for key, value in call.set_values]
    args += [f"--set-string={key}={value}" for key, value in call.set_strings]
    # Always said, `=false` included: helm 2 has no such flag, so a helm 2 binary fails at once with
    # "unknown flag: --include-crds" instead of rendering with helm 2's rules (see HELM2_SIGN).
    args.append("--include-crds" if call.include_crds else "--include-crds=false")
    if call.skip_tests:
        args.append("--skip-tests")
    return args


def run_helm(helm: str, call: HelmInvocation, timeout: float, meanwhile: Callable[[], object] | None = None) -> str:
    """Render the chart and return helm's stdout; any failure is a HelmError carrying helm's stderr.
    `meanwhile` runs while helm renders.

    A render started early for exactly this binary, invocation and deadline (see launch.py) is used
    instead of a new one; one started for anything else is killed."""
    running = take_early(helm, call, timeout) or start_helm(helm, call, timeout)
    if meanwhile is not None:
        try:
            meanwhile()
        except BaseException:
            running.kill()
            raise
    return running.finish()


_early: RunningHelm | None = None


def start_early(helm: str, call: HelmInvocation, timeout: float) -> None:
    """Start a render that a later `run_helm` with the same arguments will use."""
    global _early
    discard_early()
    _early = start_helm(helm, call, timeout)


def take_early(helm: str, call: HelmInvocation, timeout: float) -> RunningHelm | None:
    """The early render when it was started with these very arguments; otherwise it is killed."""
    global _early
    early, _early = _early, None
    if early is not None and early.key != (helm, call, timeout):
        early.kill()
        return None
    return early


def discard_early() -> None:
    """Kill an early render nobody used (help, a usage error, a failure before rendering)."""
    global _early
    early, _early = _early, None
    if early is not None:
        early.kill()


def start_helm(helm: str, call: HelmInvocation, timeout: float) -> RunningHelm:
    """Start rendering the chart; `finish()` waits for helm's stdout (so other work can go on meanwhile)."""
    if not call.values_inline:
        running = RunningHelm([helm, *helm_args(call)], cwd=call.chart_dir, timeout=timeout, what="helm template")
        running.key = (helm, call, timeout)
        return running
    import tempfile  # only an inline values file needs a scratch folder

    scratch = tempfile.TemporaryDirectory(prefix="chartshare-")
    try:
        inline = Path(scratch.name) / "inline-values.yaml"
        inline.write_text(call.values_inline, encoding="utf-8")
        running = RunningHelm(
            [helm, *helm_args(call, inline)], cwd=call.chart_dir, timeout=timeout, what="helm template", scratch=scratch
        )
    except BaseException:
        scratch.cleanup()
        raise
    running.key = (helm, call, timeout)
    return running


def run(
    argv: list[str],
    *,
    cwd: Path,
    timeout: float,
    what: str,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> str:
    """Run a helm command in its own process group; stdout on success, a one-line HelmError otherwise.

    `stdin` carries secrets (`--password-stdin`), so that they never appear in a process listing.
    """
    return RunningHelm(argv, cwd=cwd, timeout=timeout, what=what, env=env, stdin=stdin).finish()


class RunningHelm:
    """A helm process in its own process group, with its deadline counted from its start."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: Path,
        timeout: float,
        what: str,
        scratch: tempfile.TemporaryDirectory[str] | None = None,
        env: Mapping[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> None:
        self.argv, self.timeout, self.what, self.scratch, self.stdin = argv, timeout, what, scratch, stdin
        self.key: tuple[str, HelmInvocation, float] | None = None  # what start_helm was asked to render
        try:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise HelmError(
                f"helm binary {argv[0]!r} not found; install helm 3 or 4, or point --helm / CHARTSHARE_HELM at it"
            ) from None
        except PermissionError:
            raise HelmError(f"helm binary {argv[0]!r} is not executable") from None
        except OSError as error:  # ENOEXEC: a helm built for another CPU or OS, or a script without #!
            raise HelmError(f"helm binary {argv[0]!r} cannot be run: {error.strerror}") from None
        self.started = time.monotonic()

    def finish(self) -> str:
        """helm's stdout once it exits successfully; a one-line HelmError otherwise."""
        try:
            return self._collect()
        finally:
            self._cleanup()

    def kill(self) -> None:
        """Stop helm (and anything it started) and forget its output."""
        try:
            _kill_group(self.process)
        finally:
            self._cleanup()

    def _collect(self) -> str:
        process, what, timeout = self.process, self.what, self.timeout
        try:
            remaining = max(timeout - (time.monotonic() - self.started), 0.001)
            out, err = process.communicate(input=self.stdin, timeout=remaining)
        except subprocess.TimeoutExpired:
            raise HelmError(
                f"{what} did not finish within {timeout:g} s and was stopped (Argo CD kills plugins at 60 s); "
                "check the chart for slow lookups or dependencies, or raise --timeout"
            ) from None
        finally:
            _kill_group(process)
        stderr = _decode(err).strip()
        if process.returncode != 0 and HELM2_SIGN in stderr:
            raise HelmError(
                f"{self.argv[0]!r} is helm 2 (it has no --include-crds); "
                "chartshare needs helm 3 or 4, as Argo CD bundles"
            )
        if process.returncode != 0:
            cause = f"exit status {process.returncode}" if process.returncode > 0 else f"signal {-process.returncode}"
            detail = " ".join(stderr.split())[:_STDERR_LIMIT] or "no message"
            raise HelmError(f"{what} failed ({cause}): {detail}")
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError as error:
            raise HelmError(f"{what} printed bytes that are not UTF-8 at offset {error.start}") from None

    def _cleanup(self) -> None:
        if self.scratch is not None:
            self.scratch.cleanup()
            self.scratch = None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL whatever is left of helm's process group (helm itself, plugins, their children) and reap
    helm. The pipes are closed, not drained: a descendant that left the group could hold them open for
    ever, and the deadline must hold anyway."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
