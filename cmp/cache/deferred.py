"""Cache writes that need not hold up the answer. A command in a process of its own writes them as it
goes; a warm process's child (cmp/warm/server.py) sends its caller the output first and writes them
after, since a 5 MB entry written to disk takes 2 to 15 ms that Argo CD would otherwise wait for.

Whatever can be told before the write (a folder that cannot be used, an entry over the cap) is still
told on stderr; a write that fails after the answer is no one's notice, like every cache failure it only
costs a later render its time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

_held: list[Callable[[], None]] | None = None


def hold() -> None:
    """From now on, keep the writes for `flush` (the warm child, before it runs the command)."""
    global _held
    _held = []


def write(work: Callable[[], None]) -> None:
    """Do `work` now, or once the answer is sent when writes are held."""
    if _held is None:
        work()
    else:
        _held.append(work)


def flush() -> None:
    """Do the writes held, each on its own: a cache write never fails a command."""
    global _held
    held, _held = _held or [], None
    for work in held:
        with contextlib.suppress(Exception):
            work()
