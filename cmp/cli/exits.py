"""How every command ends: the only place that prints errors and chooses exit statuses.

`generate` builds its output fully in memory and writes it only after everything succeeded: on any error
stdout stays empty, so Argo CD fails the sync instead of pruning the app. Every failure is one stderr line
per problem (Argo CD shows stderr as the sync error) and an exit status, never a traceback. The typer CLI
and the plain-generate path of launch.py both end here, so they behave alike.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from cmp.errors import ChartShareError
from cmp.helm import early

if TYPE_CHECKING:
    from cmp.inputs.options import GenerateOptions

INTERRUPTED = 130
TERMINATED = 143


def say(line: str) -> None:
    sys.stderr.write(f"chartshare: {line}\n")


def one_line(message: str) -> str:
    """Argo CD shows stderr as the sync error: one line, whatever a library put in the message."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


class _Terminated(BaseException):
    """SIGTERM: the sidecar is stopping, or Argo CD gave up on the request. Not an Exception, so that no
    `except Exception` on the way (a cache that only saves time, a look-ahead that falls back) takes it for
    a failure of its own and carries on rendering."""


class _Interrupted(BaseException):
    """SIGINT (Ctrl-C), raised as this rather than as KeyboardInterrupt: typer turns a KeyboardInterrupt
    into a silent exit 130, so check, init and parameters would end without a word."""


def _interrupt(signum: int, frame: object) -> None:
    raise _Interrupted


def _terminate(signum: int, frame: object) -> None:
    """Unwind from wherever the command is, so helm's process group is killed on the way out (its own
    session would otherwise outlive chartshare) and the reason is said on stderr."""
    raise _Terminated


def run_and_exit(command: Callable[[], int]) -> NoReturn:
    """Run a command to its end and exit with its status (see `run`)."""
    status = run(command)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # stdout closed under us: what was meant for it is lost
        os._exit(1)
    os._exit(status)


def run(command: Callable[[], int]) -> int:
    """Run a command to its end: the status it returns, or one error line per problem and the error's
    status. SIGTERM unwinds like an error from the first instruction on, its error line and clean-up
    included. Any helm nobody claimed is killed before it returns; the interpreter's teardown of the
    render's objects would only be time Argo CD waits for, so callers leave through os._exit. SIGINT
    ends every command alike: one line, exit 130 (unless this process was started ignoring it)."""
    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupt)
    try:
        try:
            status = _outcome(command)
        finally:
            early.discard()
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once is enough: what is left is the clean-up
        early.discard()
        say("error: stopped by SIGTERM; helm and everything it started were killed")
        status = TERMINATED
    except _Interrupted:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        early.discard()
        say("error: interrupted")
        status = INTERRUPTED
    return status


def _outcome(command: Callable[[], int]) -> int:
    """The command's status, or its error's after saying it (SIGTERM is left to `run`)."""
    try:
        return command()
    except ChartShareError as error:
        for problem in error.problems:
            say(f"error: {one_line(problem)}")
        return error.exit_code
    except KeyboardInterrupt:
        say("error: interrupted")
        return INTERRUPTED
    except BrokenPipeError:
        return 1
    except Exception as error:
        say(f"error: internal error ({type(error).__name__}: {one_line(str(error))}); please report it")
        return 1


def generate(options: GenerateOptions) -> int:
    """Argo CD's generate step: the report lines on stderr, then the manifests on stdout, all or nothing."""
    from cmp.generate.command import generate as build

    output = build(options, os.environ)
    for line in output.lines:
        say(line)
    sys.stdout.flush()
    sys.stdout.buffer.write(output.data)
    sys.stdout.buffer.flush()
    return 0
