"""One disk budget for everything under the cache folder ($CHARTSHARE_CACHE): the render cache, the chart
store, and any other cache that keeps its entries in a folder of its own there.

Size is disk use (st_blocks * 512: a 100-byte entry takes a whole block) and entries are counted too. A
write does not look at the other entries: each cache charges what it added to a running total kept in a
small index file (USAGE, under a lock), and only when the total passes the cap, or every FULL_COUNT_EVERY
writes (to correct what others removed or changed), is everything counted again and, past the cap, the
oldest used entries evicted until the rest take LOW_WATER of it. An entry is a file or folder at its
cache's depth (DEPTHS); its last use is its modification time, which readers touch. A folder entry in use
is never evicted: its readers hold a shared lock on it (`hold`) for as long as they may read it, and
eviction takes it only when it can lock it alone. Dead writers' leftovers (names starting with a dot,
untouched for STALE seconds) go too.
Nothing here fails a caller: a budget that cannot be kept is simply not kept this time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
from collections.abc import Iterable, Iterator, Mapping

from cmp.locks import locked

DEFAULT_MB = 256
CAP = "CHARTSHARE_CACHE_MB"
USAGE = ".usage"  # "<bytes> <entries> <writes since the last full count>\n", each padded to one width
FULL_COUNT_EVERY = 512
MAX_ENTRIES = 200_000
LOW_WATER = 0.9  # eviction leaves this share of the cap used, so the next writes do not evict again at once
STALE = 3600  # seconds after which a dot-file or dot-folder is a dead writer's, not a slow one's
DEPTHS = {"charts": 2}  # where a cache's entries are: charts/<repository>/<entry>; any other cache: depth 1
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # an entry, opened to be locked
_NOT_ENTRIES = frozenset({"repository"})  # the chart store's note of a repository's address, beside its entries
_held: list[int] = []  # folders this process reads (locked shared until it exits)


def cap_from(env: Mapping[str, str]) -> tuple[int, str | None]:
    """The cap in bytes CHARTSHARE_CACHE_MB names, and a notice when it names none."""
    raw = env.get(CAP, "").strip()
    if raw and not (raw.isascii() and raw.isdigit()):
        return DEFAULT_MB << 20, f"notice: {CAP}={raw!r} is not a whole number of MiB; the cap is {DEFAULT_MB}"
    return int(raw or DEFAULT_MB) << 20, None


def disk_use(info: os.stat_result) -> int:
    return info.st_blocks * 512


def file_use(name: str, folder: int) -> int | None:
    """The disk use of a file of the folder `folder` (a descriptor), None when there is none."""
    try:
        return disk_use(os.stat(name, dir_fd=folder, follow_symlinks=False))
    except OSError:
        return None


def write_whole(folder: int, name: str, parts: Iterable[bytes]) -> tuple[int | None, int]:
    """Write the file `name` of `folder` whole or not at all (a private temporary file renamed over it):
    the disk use of the file it replaced (None when there was none) and its own. OSError when it could
    not; the temporary file is gone then."""
    temporary = f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
    try:
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder
        )
        with open(fd, "wb") as handle:
            handle.writelines(parts)
        replaced = file_use(name, folder)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
    return replaced, file_use(name, folder) or 0


def tree_use(path: str) -> tuple[int, int]:
    """Disk use and number of files and folders of a tree (links not followed)."""
    total, count = 0, 0
    for _, node in _nodes(path):
        total += disk_use(node)
        count += 1
    return total, count


def hold(folder: str) -> bool:
    """Mark `folder` (an entry) in use by this process until it exits, and touch it (a use); False when it
    is being evicted (or cannot be opened): then it must not be read."""
    fd = locked(folder, _FOLDER, fcntl.LOCK_SH)
    if fd is None:
        return False
    with contextlib.suppress(OSError):
        os.utime(fd)
    _held.append(fd)
    return True


def let_go() -> None:
    """Release every entry this process holds (what its end does)."""
    while _held:
        with contextlib.suppress(OSError):
            os.close(_held.pop())


class Budget:
    """The budget of the cache folder `root`: `cap` bytes of disk use and MAX_ENTRIES entries."""

    def __init__(self, root: str, cap: int, max_entries: int = MAX_ENTRIES) -> None:
        self.root = root
        self.cap = cap
        self.max_entries = max_entries

    def charge(self, added: int, entries: int, *, keep: str | None = None) -> None:
        """Count what a write added (disk use, entries; negative for what it replaced), and evict when the
        total is past the cap; `keep` (the entry just written) is never evicted by its own write."""
        with contextlib.suppress(OSError), self._locked() as usage:
            total, count, writes = _parsed(os.pread(usage, 100, 0))
            total, count, writes = max(total + added, 0), max(count + entries, 0), writes + 1
            if total > self.cap or count > self.max_entries or writes >= FULL_COUNT_EVERY:
                total, count = self.evict(keep)
                writes = 0
            os.pwrite(usage, b"%20d %12d %8d\n" % (total, count, writes), 0)  # one width: written over in place

    def evict(self, keep: str | None = None) -> tuple[int, int]:
        """Count everything under the root and drop the oldest used entries (never `keep`, never one in
        use) until the rest fit; the disk use and entries left. The index file is locked by the caller."""
        now = time.time()
        entries: list[tuple[float, str, int]] = []
        total, count = 0, 0
        for path, info, entry in self._entries():
            name = os.path.basename(path)
            if name.startswith(".") and name != USAGE and now - info.st_mtime > STALE:
                _remove(path, info)
                continue
            use = tree_use(path)[0] if entry and stat.S_ISDIR(info.st_mode) else disk_use(info)
            total += use
            if entry and not name.startswith(".") and name not in _NOT_ENTRIES:
                count += 1
                entries.append((info.st_mtime, path, use))
        entries.sort()
        room, most = self.cap * LOW_WATER, self.max_entries * LOW_WATER
        if total <= self.cap and count <= self.max_entries:
            return total, count  # within the budget: nothing to evict (an occasional count)
        for _, path, use in entries:
            if total <= room and count <= most:
                break
            if path != keep and _evict(path):
                total -= use
                count -= 1
        return total, count

    def _entries(self) -> Iterator[tuple[str, os.stat_result, int]]:
        """Every file and folder of the root down to its cache's entries: (path, lstat, 1 for an entry or
        0 for what lies between: the index file, a repository's folder)."""
        with contextlib.suppress(OSError), os.scandir(self.root) as tops:
            for top in tops:
                info = top.stat(follow_symlinks=False)
                depth = DEPTHS.get(top.name, 1) if top.is_dir(follow_symlinks=False) else 0
                yield from self._below(top.path, info, depth)

    def _below(self, path: str, info: os.stat_result, depth: int) -> Iterator[tuple[str, os.stat_result, int]]:
        if depth == 0 or not stat.S_ISDIR(info.st_mode):
            yield path, info, 0
            return
        yield path, info, 0  # the folder itself counts, not as an entry
        if os.path.basename(path).startswith("."):
            return
        with contextlib.suppress(OSError), os.scandir(path) as found:
            for item in found:
                below = item.stat(follow_symlinks=False)
                if depth == 1:
                    yield item.path, below, 1
                else:
                    yield from self._below(item.path, below, depth - 1)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        fd = os.open(os.path.join(self.root, USAGE), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)


def _parsed(line: bytes) -> tuple[int, int, int]:
    fields = line.split()
    if len(fields) != 3 or not all(field.isdigit() for field in fields):
        return 0, 0, FULL_COUNT_EVERY  # none yet, or damaged: count everything now
    return int(fields[0]), int(fields[1]), int(fields[2])


def _nodes(path: str) -> Iterator[tuple[str, os.stat_result]]:
    """Every file and folder of a tree, iteratively, links not followed."""
    stack = [path]
    while stack:
        current = stack.pop()
        try:
            info = os.lstat(current)
        except OSError:
            continue
        yield current, info
        if stat.S_ISDIR(info.st_mode):
            with contextlib.suppress(OSError), os.scandir(current) as found:
                stack.extend(item.path for item in found)


def _evict(path: str) -> bool:
    """Remove an entry unless it is in use; a folder is first locked alone and moved aside, so that a
    reader never meets half of it."""
    try:
        info = os.lstat(path)
    except OSError:
        return True
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return True
    fd = locked(path, _FOLDER, fcntl.LOCK_EX)
    if fd is None:
        return False
    try:
        aside = os.path.join(os.path.dirname(path), f".evicted-{os.getpid()}-{os.urandom(4).hex()}")
        os.rename(path, aside)
    except OSError:
        return False
    finally:
        os.close(fd)
    _remove(aside, os.lstat(aside))
    return True


def _remove(path: str, info: os.stat_result) -> None:
    """Delete a file or a tree, read-only folders included."""
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    import shutil

    for current, node in _nodes(path):
        if stat.S_ISDIR(node.st_mode):
            with contextlib.suppress(OSError):
                os.chmod(current, 0o700)
    shutil.rmtree(path, ignore_errors=True)
