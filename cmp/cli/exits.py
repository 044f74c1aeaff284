"""How a command ends, with typer or without: the only place that prints errors and chooses exit statuses.

`generate` builds its output fully in memory and writes it only after everything succeeded: on any error
stdout stays empty, so Argo CD fails the sync instead of pruning the app. Every failure is one stderr
line (Argo CD shows it as the sync error) and an exit status, never a traceback. The typer CLI and the
plain-generate path of launch.py both end here, so they behave alike.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from cmp.errors import ChartShareError

if TYPE_CHECKING:
    from cmp.cli.launch import GenerateOptions


def say(line: str) -> None:
    sys.stderr.write(f"chartshare: {line}\n")


def generate(options: GenerateOptions) -> None:
    """Argo CD's generate step: resolve the configuration, render, apply the rules, print."""
    from cmp import manifests
    from cmp.generate import pipeline

    resolved = options.resolve(os.environ)
    outcome = pipeline.generate(resolved)
    if options.output == "json":
        text = manifests.emit_json(outcome.resources)
    else:
        text = manifests.emit_yaml(outcome.resources)
    data = text.encode("utf-8")  # the bytes Argo CD receives are what the limit counts
    manifests.refuse_oversize(data, resolved.max_output)
    for line in pipeline.summary(outcome):
        say(line)
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


class _Terminated(ChartShareError):
    """SIGTERM: the sidecar is stopping, or Argo CD gave up on the request."""

    exit_code = 143


def _terminate(signum: int, frame: object) -> None:
    """Unwind like any error, so helm's process group is killed on the way out (its own session would
    otherwise outlive chartshare) and the reason is said on stderr."""
    raise _Terminated("stopped by SIGTERM; helm and everything it started were killed")


def guarded(action: Callable[[], object]) -> None:
    """Run a command; every failure becomes one stderr line and an exit status."""
    signal.signal(signal.SIGTERM, _terminate)
    try:
        action()
    except ChartShareError as error:
        say(f"error: {one_line(str(error))}")
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        say("error: interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as error:
        say(f"error: internal error ({type(error).__name__}: {one_line(str(error))}); please report it")
        sys.exit(1)


def one_line(message: str) -> str:
    """Argo CD shows stderr as the sync error: one line, whatever a library put in the message."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())
