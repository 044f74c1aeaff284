"""helm as a subprocess: its own process group, a deadline counted from its start, one-line errors.

Argo CD SIGKILLs a plugin at 60 s without a word, so helm must be stopped, and the reason printed, before
then; and helm's plugins and their children must go with it. Every helm call chartshare makes (template,
dependency build, pull, registry login) runs through this module, which attaches helm's stderr to the error.
helm's session of its own is out of reach of the SIGTERM Argo CD sends chartshare's process group once it
has SIGKILLed chartshare, so on Linux helm is also told to die with its parent (PR_SET_PDEATHSIG). In a
warm process's child, which leads a session the warm process ends when the child is killed
(cmp/warm/server.py), helm stays in that session, in a group of its own, and needs no death signal:
without the function that sets one, subprocess starts helm with vfork, 2 ms sooner than a fork of a loaded
process.

helm's garbage collector runs at GOGC=200 unless the environment sets GOGC: half as many collections,
so a render takes 10-25% less wall time and 15-35% less CPU for 5-20% more peak memory (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cmp.errors import HelmError, shortened

if TYPE_CHECKING:
    import tempfile

_STDERR_LIMIT = 2000  # Argo CD shows stderr in its UI; a whole helm trace would bury the cause
HELM2_SIGN = "unknown flag: --include-crds"  # how helm 2 answers every argv helm_args builds
# helm's own log lines (helm 4's slog records, helm 3's Go log lines such as `walk.go:74: found symbolic
# link...`): what it reports along the way, never why it failed; an error shows them after its `Error:`.
_LOG_LINE = re.compile(r"^(?:time=\S+ )?level=(?:DEBUG|INFO|WARN|WARNING)\b|^[A-Za-z0-9_]+\.go:[0-9]+: ")
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
GO_DEFAULTS = {"GOGC": "200"}  # what helm's Go runtime is given when the environment does not say
_session_ended_by_parent = False  # see `leave_to_the_session`


def run_helm(
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
    """A helm process in its own process group, with its deadline counted from its start (less what a
    failed hand-over spent of it: the deadline it names is still the one that was set)."""

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
        spent: float = 0.0,
    ) -> None:
        self.argv, self.timeout, self.what, self.scratch = argv, timeout, what, scratch
        self.spent = spent  # seconds of `timeout` gone before helm started (a failed hand-over)
        self.out = self.err = -1
        try:
            self.out = buffer("helm-stdout")
            self.err = buffer("helm-stderr")
            given = None if stdin is None else buffer("helm-stdin", stdin)
        except OSError as error:  # out of descriptors or memory
            self._close()
            raise HelmError(f"cannot set up {what}'s output: {error.strerror}") from None
        environment = _with_go_defaults(os.environ if env is None else env)
        try:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=environment,
                stdin=subprocess.DEVNULL if given is None else given,
                stdout=self.out,
                stderr=self.err,
                **_tied_to_this_process(),
            )
        except FileNotFoundError:
            self._close()
            raise HelmError(
                f"helm binary {argv[0]!r} not found; install helm 3 or 4, or point --helm / CHARTSHARE_HELM at it"
            ) from None
        except PermissionError:
            self._close()
            raise HelmError(f"helm binary {argv[0]!r} is not executable") from None
        except OSError as error:  # ENOEXEC: a helm built for another CPU or OS, or a script without #!
            self._close()
            if error.errno == errno.E2BIG:
                raise HelmError(too_long(what, argv, environment)) from None
            raise HelmError(f"helm binary {argv[0]!r} cannot be run: {error.strerror}") from None
        finally:
            if given is not None:
                os.close(given)
        self.started = time.monotonic()

    def finish(self, seen: Callable[[bytes], object] | None = None) -> str:
        """helm's stdout once it exits successfully; a one-line HelmError otherwise. `seen` is handed its
        bytes before they are decoded."""
        try:
            return self._collect(seen)
        finally:
            self._close()
            self._cleanup()

    def kill(self) -> None:
        """Stop helm (and anything it started) and forget its output."""
        try:
            _kill_group(self.process)
        finally:
            self._close()
            self._cleanup()

    def _collect(self, seen: Callable[[bytes], object] | None) -> str:
        process, what, timeout = self.process, self.what, self.timeout
        try:
            remaining = max(timeout - self.spent - (time.monotonic() - self.started), 0.001)
            _wait(process, remaining)
        except subprocess.TimeoutExpired:
            raise HelmError(
                f"{what} did not finish within {timeout:g} s and was stopped (Argo CD kills plugins at 60 s); "
                "check the chart for slow lookups or dependencies, or raise --timeout"
            ) from None
        finally:
            _kill_group(process)
        stderr = _decode(read_back(self.err)).strip()
        if process.returncode != 0 and HELM2_SIGN in stderr:
            raise HelmError(
                f"{self.argv[0]!r} is helm 2 (it has no --include-crds); "
                "chartshare needs helm 3 or 4, as Argo CD bundles"
            )
        if process.returncode != 0:
            cause = f"exit status {process.returncode}" if process.returncode > 0 else f"signal {-process.returncode}"
            detail = shortened(failure_detail(stderr), _STDERR_LIMIT) or "no message"
            raise HelmError(f"{what} failed ({cause}): {detail}")
        printed = read_back(self.out)
        if seen is not None:
            seen(printed)
        try:
            return printed.decode("utf-8")
        except UnicodeDecodeError as error:
            raise HelmError(f"{what} printed bytes that are not UTF-8 at offset {error.start}") from None

    def _close(self) -> None:
        for fd in (self.out, self.err):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.out = self.err = -1

    def _cleanup(self) -> None:
        if self.scratch is not None:
            self.scratch.cleanup()
            self.scratch = None


def too_long(what: str, argv: list[str], env: Mapping[str, str]) -> str:
    """Why exec refused helm's command line (E2BIG): it is the values, not the binary. Linux bounds the
    arguments and environment together (a quarter of the stack limit, 2 MiB by default) and each string
    alone (128 KiB)."""
    sizes = [len(os.fsencode(arg)) + 1 for arg in argv]
    environment = sum(len(os.fsencode(key)) + len(os.fsencode(value)) + 2 for key, value in env.items())
    return (
        f"{what} cannot be started: its {len(argv)} arguments ({sum(sizes)} bytes, the longest "
        f"{max(sizes) - 1}) and its environment ({environment} bytes) are over the system's limit (E2BIG, "
        "argument list too long); put large values in a values file (values-files) rather than in the "
        "set, set-string or api-versions parameters, the plugin env or the command line"
    )


def _wait(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait for helm to exit, woken by its exit (a pidfd) rather than polling for it: `Popen.wait` with a
    timeout sleeps in steps of up to 50 ms, each one time the answer waits for nothing."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # no pidfd (Linux before 5.3, other systems)
        process.wait(timeout=timeout)
        return
    try:
        waiting = select.poll()
        waiting.register(pidfd, select.POLLIN)
        if not waiting.poll(max(timeout, 0.001) * 1000):
            raise subprocess.TimeoutExpired(process.args, timeout)
    finally:
        os.close(pidfd)
    process.wait()


def buffer(name: str, data: bytes = b"") -> int:
    """A file in memory (a temporary file where there is no memfd) holding `data`, for one of helm's streams
    (and for a warm process's request, cmp/warm/server.py). helm writes its output in a burst at the
    end: to a file it writes at its own pace, where a pipe would make it wait for each 64 KiB to be read,
    and this process for each read."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create(name, os.MFD_CLOEXEC)
    else:
        import tempfile

        fd, path = tempfile.mkstemp(prefix=f"chartshare-{name}-")
        os.unlink(path)
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def read_back(fd: int) -> bytes:
    """Everything written to one of `buffer`'s files."""
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0) if size else b""


def _with_go_defaults(env: Mapping[str, str]) -> dict[str, str]:
    """helm's environment: `env`, with GO_DEFAULTS for what it does not set."""
    return {**GO_DEFAULTS, **env}


def leave_to_the_session() -> None:
    """Say that this process leads a session its parent ends (SIGKILL to every member) whenever this
    process is killed: helm then joins it, in a process group of its own, without a death signal."""
    global _session_ended_by_parent
    _session_ended_by_parent = True


def _tied_to_this_process() -> dict[str, Any]:
    """How helm goes when this process goes: a session of its own and a death signal, or a group of its
    own in this process's session (see `leave_to_the_session`)."""
    if _session_ended_by_parent:
        return {"process_group": 0}
    return {"start_new_session": True, "preexec_fn": _dies_with(os.getpid())}


def _dies_with(parent: int) -> Callable[[], None] | None:
    """What helm's child runs before exec on Linux: SIGKILL it when this process ends, however it ends (a
    parent already gone by then, as it may be, means exiting at once)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = _prctl()

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return die_with_parent


@functools.cache
def _prctl() -> Callable[[int, int], int]:
    import ctypes

    prctl: Callable[[int, int], int] = ctypes.CDLL(None, use_errno=True).prctl
    return prctl


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL whatever is left of helm's process group (helm itself, plugins, their children) and reap
    helm. Its output is in files, read once helm has exited: nothing waits for a descendant that left the
    group and holds them open, and the deadline holds anyway."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def failure_detail(stderr: str) -> str:
    """helm's stderr on one line, its `Error:` message first: helm's log lines (which helm 4 prints before
    the error, e.g. `level=INFO msg="Warning: Dependencies are handled in Chart.yaml..."`) go last, after
    `helm also logged:`, so the first words of the error are the ones that matter."""
    lines = [" ".join(line.split()) for line in stderr.splitlines()]
    logged = [line for line in lines if line and _LOG_LINE.match(line)]
    said = [line for line in lines if line and not _LOG_LINE.match(line)]
    said.sort(key=lambda line: not line.startswith("Error:"))  # stable: helm's order otherwise
    detail = " ".join(said)
    if logged:
        detail = f"{detail}; helm also logged: {' '.join(logged)}" if detail else " ".join(logged)
    return detail


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
