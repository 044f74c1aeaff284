"""What the scan found in a chart's documents, kept across renders: a render that misses the render cache
(the values changed, the chart did not) scans only the documents it has not seen.

A document's entry is keyed by a digest of its text, so it holds whatever values produced it; the entries
of one chart folder's last renders share one file under `$CHARTSHARE_CACHE/identities/`, read while helm
renders and written once the stream is read. The file is what the scan found (marshal: plain values only,
a document holding anything else is not kept), behind a magic line naming the scan's version and a
checksum that every read verifies; it is read without following symlinks, only from a folder that is this
user's alone, and only when this user owns it. The files beyond CAP go, the oldest used first, and what
they take counts in the cache folder's one budget (cmp/cache/bounded.py), like every other cache there.

Like the render cache, this only saves time: whatever goes wrong reads as nothing kept, silently, and the
render goes on scanning.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
from hashlib import blake2b, sha256
from pathlib import Path
from typing import Any
from zlib import crc32

from cmp.cache import bounded, deferred
from cmp.manifests import Head, Scanned

SCAN_VERSION = 4  # what the scan reads and how it says so; a change makes every kept entry another's
_MAGIC = b"chartshare identities %d\n" % SCAN_VERSION
CAP = 16 << 20  # all the files together
_SPARE = 256  # entries kept beyond this render's documents, for another app's values of the same chart


def _digest(text: str) -> bytes:
    """A document's key: SHA-256 (the CPU's own instructions: 2 ms a MB), cut to 128 bits."""
    return sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


class Identities:
    """The identities kept for one chart folder; a `manifests.Memory`."""

    def __init__(self, folder: Path, chart: Path, root: Path, cap: int = CAP) -> None:
        """The file of the chart folder `chart`, named by its path relative to the repository `root` when
        inside it (Argo CD unpacks each request into a fresh folder)."""
        self.folder = folder
        with contextlib.suppress(ValueError):
            chart = chart.relative_to(root)
        self.name = blake2b(os.fsencode(chart), digest_size=16).hexdigest()
        self.cap = cap
        self.kept: dict[bytes, bytes] = {}  # digest -> entry, as read
        self.used: dict[bytes, bytes] = {}  # this render's documents
        self.fresh = False  # something was scanned that was not kept
        self._asked: tuple[str, bytes] | None = None  # the last text recalled and its digest

    def load(self) -> Identities:
        """Read the chart's file (nothing when there is none, or it cannot be trusted)."""
        with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
            self.kept = _decoded(_read(self.folder, self.name)) or {}
        return self

    def recall(self, text: str) -> Scanned | None:
        digest = _digest(text)
        self._asked = (text, digest)
        entry = self.kept.get(digest)
        if entry is None:
            return None
        try:
            found = _scanned(marshal.loads(entry))
        except (ValueError, EOFError, TypeError):
            return None
        self.used[digest] = entry
        return found

    def remember(self, text: str, scanned: Scanned) -> None:
        try:  # taken now: later stages may change the metadata read
            entry = marshal.dumps((tuple(scanned.head), scanned.metadata, scanned.items))
        except ValueError:
            return  # a value marshal cannot keep (not plain data): scanned again next time
        asked = self._asked
        self.used[asked[1] if asked is not None and asked[0] is text else _digest(text)] = entry
        self.fresh = True

    def save(self) -> None:
        """Write this render's entries (and some of the others kept) when anything was new; never fails."""
        if not self.fresh:
            return
        entries = dict(self.used)
        for digest, entry in self.kept.items():
            if len(entries) >= len(self.used) + _SPARE:
                break
            entries.setdefault(digest, entry)
        deferred.write(lambda: self._write(entries))

    def _write(self, entries: dict[bytes, bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            _write(self.folder, self.name, _encoded(entries), self.cap)


def _scanned(value: Any) -> Scanned:
    head, metadata, items = value
    api_version, kind, name, namespace, generate_name, span, spec, floor = head
    return Scanned(Head(api_version, kind, name, namespace, generate_name, span, spec, floor), metadata, items)


def _encoded(entries: dict[bytes, bytes]) -> bytes:
    body = marshal.dumps(entries)
    return _MAGIC + b"%08x\n" % crc32(body) + body


def _decoded(data: bytes | None) -> dict[bytes, bytes] | None:
    if data is None or not data.startswith(_MAGIC):
        return None
    start = len(_MAGIC) + 9
    body = data[start:]
    if data[len(_MAGIC) : start] != b"%08x\n" % crc32(body):
        return None
    entries = marshal.loads(body)
    return entries if isinstance(entries, dict) else None


def _private(folder: Path, *, create: bool) -> int | None:
    """The folder's descriptor, when it is this user's and private (made so when `create`)."""
    if create:
        os.makedirs(folder, 0o700, exist_ok=True)
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        os.close(fd)
        return None
    return fd


def _read(folder: Path, name: str) -> bytes | None:
    directory = _private(folder, create=False)
    if directory is None:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
    except FileNotFoundError:
        return None
    finally:
        os.close(directory)
    with open(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return None
        data = handle.read()
        with contextlib.suppress(OSError):
            os.utime(fd)  # a use: the oldest used go first
        return data


def _write(folder: Path, name: str, data: bytes, cap: int) -> None:
    directory = _private(folder, create=True)
    if directory is None:
        return
    try:
        with contextlib.suppress(OSError):
            before, written = bounded.write_whole(directory, name, [data])
            freed, dropped = _evict(directory, name, cap)
            budget = bounded.Budget(os.path.dirname(folder), bounded.cap_from(os.environ)[0])
            budget.charge(written - (before or 0) - freed, (before is None) - dropped, keep=os.path.join(folder, name))
    finally:
        os.close(directory)


def _evict(directory: int, kept: str, cap: int) -> tuple[int, int]:
    """Drop the oldest used files until the rest fit under the cap (and dead writers' temporary files);
    the disk use freed and the files dropped."""
    files: list[tuple[int, str, int]] = []
    with os.scandir(directory) as found:
        for item in found:
            with contextlib.suppress(OSError):
                info = item.stat(follow_symlinks=False)
                files.append((info.st_mtime_ns, item.name, bounded.disk_use(info)))
    total = sum(size for _, _, size in files)
    freed, dropped = 0, 0
    for _, name, size in sorted(files):
        if total <= cap:
            break
        if name != kept:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=directory)
                freed, dropped = freed + size, dropped + 1
            total -= size
    return freed, dropped
