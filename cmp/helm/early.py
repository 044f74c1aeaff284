"""The render started before the rest of chartshare has loaded, waiting for the pipeline to claim it.

A plain `generate` line starts helm first (cmp/cli/launch.py) and imports the rest while helm renders.
The pipeline then asks for a render of its own; it gets the early one only when that was started for
exactly the same binary, chart, template and deadline. Any other early render, and one nobody claims
(help, a usage error, a failure before rendering), is killed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cmp.helm.process import RunningHelm

_waiting: tuple[object, RunningHelm] | None = None  # (what it was started for, the render)


def keep(key: object, running: RunningHelm) -> None:
    """Hold a render started early, for a later `claim` with an equal key; one held before is killed."""
    global _waiting
    discard()
    _waiting = (key, running)


def claim(key: object) -> RunningHelm | None:
    """The early render when it was started for `key`; any other is killed."""
    global _waiting
    held, _waiting = _waiting, None
    if held is None:
        return None
    started_for, running = held
    if started_for != key:
        running.kill()
        return None
    return running


def waiting() -> RunningHelm | None:
    """The render held, if any (for tests and the exit path)."""
    return None if _waiting is None else _waiting[1]


def discard() -> None:
    """Kill a render nobody claimed."""
    global _waiting
    held, _waiting = _waiting, None
    if held is not None:
        held[1].kill()
