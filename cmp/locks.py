"""A file opened and locked without waiting, or nothing: the one way chartshare takes a lock it may not get
(a cache entry in use or being evicted, the warm process's lock)."""

from __future__ import annotations

import os


def locked(path: str, flags: int, operation: int) -> int | None:
    """`path` opened with `flags` (created 0600 with O_CREAT) and locked with `fcntl.flock(operation)`, never
    waiting: its descriptor, which holds the lock until closed; None when it cannot be opened or another
    holds a lock that conflicts."""
    import fcntl  # (the warm process's caller imports as little as it can)

    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd
