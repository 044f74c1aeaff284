"""The render cache's store: one file per key under `$CHARTSHARE_CACHE/renders/`.

An entry is what a successful render printed, its output bytes and its stderr lines, behind a checksum that
every read verifies: a torn, truncated or corrupted file reads as a miss and is replaced by the next write.
An entry may instead name another key that holds its output (an alias, `put_alias`): two renders whose
outputs are one (values that change nothing helm prints) keep it once. An alias leads to an entry, never
to another alias. Entries are written to a temporary file and renamed into place, so a reader sees a
whole entry or none and two writers of one key both succeed. They are read without following symlinks,
only from a folder that is the current user's alone (0700: outputs hold Secrets) and only when the current
user owns them. Each write charges its disk use to the cache folder's one budget (cmp/cache/bounded.py,
CHARTSHARE_CACHE_MB, shared with the chart store), which evicts the oldest used entries when the folder
outgrows it.

The cache only saves time, so nothing here fails a render: what goes wrong becomes a notice line (`notices`)
for the caller to print, and the render goes on without the cache.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Mapping
from typing import BinaryIO, NamedTuple
from zlib import crc32

from cmp.cache import bounded, deferred
from cmp.inputs.config import cache_root

DEFAULT_MB = bounded.DEFAULT_MB
SWITCH = "CHARTSHARE_RENDER_CACHE"  # `off` turns the cache off (a benchmark's cold runs, a suspicious user)
_MAGIC = b"chartshare render entry 1\n"
_ALIAS = b"chartshare render alias 1\n"  # then the checksum and the key that holds the output
_HEADER_MOST = 64  # the checksum and output length line is never longer
_HEX = frozenset("0123456789abcdef")
_FULL = (errno.ENOSPC, errno.EDQUOT)


class Entry(NamedTuple):
    """What a render printed: stdout's bytes and stderr's lines."""

    output: bytes
    lines: tuple[str, ...]


class Store:
    """The entries of one cache folder; `notices` collects why the cache could not be used."""

    def __init__(self, folder: str, cap: int, *, on: bool = True, notices: list[str] | None = None) -> None:
        self.folder = folder
        self.cap = cap
        self.on = on
        self.notices = notices if notices is not None else []
        self._unusable = False  # said once: a run's lookup and write then meet the same folder quietly

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Store:
        """The folder and cap the environment names; off when CHARTSHARE_RENDER_CACHE says so."""
        notices: list[str] = []
        switch = env.get(SWITCH, "").strip().lower()
        if switch not in ("", "on", "off"):
            notices.append(f"notice: {SWITCH}={env[SWITCH]!r} is neither on nor off; rendering without the cache")
        base = str(cache_root(env))
        cap, notice = bounded.cap_from(env)
        if notice:
            notices.append(notice)
        return cls(os.path.join(os.path.abspath(base), "renders"), cap, on=switch in ("", "on"), notices=notices)

    def get(self, key: str, *, quiet: bool = False) -> Entry | None:
        """The entry under `key` when there is a sound one (an alias's: the one it names); a miss otherwise
        (with a notice, unless `quiet`, when one was there and could not be trusted)."""
        _checked(key)
        folder = self._open_folder(create=False) if self.on else None
        if folder is None:
            return None
        try:
            found = _read(key, folder)
            if isinstance(found, _Alias):
                key, found = found.key, _read(found.key, folder)
                if isinstance(found, _Alias):
                    found = "an alias of an alias"
        finally:
            os.close(folder)
        if isinstance(found, str):
            if quiet:
                return None
            self.notices.append(
                f"notice: render cache: ignored entry {key[:12]} in {self.folder} ({found}); rendering afresh"
            )
            return None
        return found

    def put(self, key: str, entry: Entry) -> None:
        """Keep `entry` under `key` (replacing what is there), then drop the oldest used entries beyond the
        cap; a cache that cannot take it gets a notice, never an error."""
        self._put(_checked(key), _encoded(key, entry))

    def put_alias(self, key: str, target: str) -> None:
        """Keep under `key` that the entry under `target` (not an alias) is its entry too."""
        line = b"%s %s\n" % (_alias_checksum(_checked(key), _checked(target).encode()), target.encode())
        self._put(key, (_ALIAS, line))

    def _put(self, key: str, parts: tuple[bytes, ...]) -> None:
        size = sum(map(len, parts))
        if not self.on:
            return
        if size > self.cap:
            self.notices.append(
                f"notice: render cache: this render ({size / (1 << 20):.1f} MiB) is larger than the cache's cap "
                f"({self.cap >> 20} MiB, CHARTSHARE_CACHE_MB) and was not kept"
            )
            return
        folder = self._open_folder(create=True)
        if folder is not None:
            deferred.write(lambda: self._write(folder, key, parts))

    def _write(self, folder: int, key: str, parts: tuple[bytes, ...]) -> None:
        """The entry's file written whole into the open folder, and charged to the budget."""
        try:
            replaced, added = bounded.write_whole(folder, key, parts)
        except OSError as error:
            self.notices.append(f"notice: render cache: {self.folder} {_unwritable(error)}")
        else:  # kept; the budget evicts others when the folder outgrows it
            budget = bounded.Budget(os.path.dirname(self.folder), self.cap)
            budget.charge(
                added - (replaced or 0), 0 if replaced is not None else 1, keep=os.path.join(self.folder, key)
            )
        finally:
            os.close(folder)

    def _open_folder(self, *, create: bool) -> int | None:
        """The folder, opened without following a symlink; None when there is none yet, or when it cannot
        be used (said once: a run's lookup and its write meet the same folder)."""
        if self._unusable:
            return None
        try:
            return self._opened(create)
        except _Unusable as problem:
            self._unusable = True
            self.notices.append(f"notice: render cache: {self.folder} {problem}")
            return None

    def _opened(self, create: bool) -> int | None:
        """The folder's descriptor; it must be this user's, and private."""
        if create:
            try:
                os.makedirs(os.path.dirname(self.folder), 0o700, exist_ok=True)
                if not os.path.lexists(self.folder):
                    os.mkdir(self.folder, 0o700)
            except FileExistsError:
                pass  # a concurrent writer made it
            except OSError as error:
                raise _Unusable(_unwritable(error)) from None
        try:
            folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as error:
            reason = f"cannot be read ({error.strerror})"
            if error.errno in (errno.ELOOP, errno.ENOTDIR):  # O_NOFOLLOW meets a link as ELOOP or ENOTDIR
                if not os.path.lexists(self.folder):
                    return None  # a file where a folder above it should be: the write says so
                reason = "is a symlink" if os.path.islink(self.folder) else "is not a folder"
            raise _Unusable(f"{reason}; rendering without the cache") from None
        info = os.fstat(folder)
        try:
            if info.st_uid != os.geteuid():
                raise _Unusable(
                    f"belongs to uid {info.st_uid}, not to this user; rendering without the cache "
                    "(point CHARTSHARE_CACHE at a folder of your own)"
                )
            if info.st_mode & 0o077:  # ours, made by hand or under an old umask: outputs hold Secrets
                os.fchmod(folder, 0o700)
        except OSError as error:
            os.close(folder)
            raise _Unusable(_unwritable(error)) from None
        except _Unusable:
            os.close(folder)
            raise
        return folder


class _Unusable(Exception):
    """Why the cache folder cannot be used, as the notice says it."""


def _unwritable(error: OSError) -> str:
    what = "is full" if error.errno in _FULL else f"cannot be written ({error.strerror})"
    return f"{what}; this render was not kept"


def _checked(key: str) -> str:
    """A key names a file: only a digest's 64 hex digits may, so no key reaches outside the folder."""
    if len(key) != 64 or not _HEX.issuperset(key):
        raise ValueError(f"a render cache key is 64 lower-case hex digits, not {key!r}")
    return key


class _Alias(NamedTuple):
    """An entry naming the key whose entry is its own."""

    key: str


def _read(key: str, folder: int) -> Entry | _Alias | str | None:
    """The entry (or alias) under `key`; None when there is none; why the file there cannot be trusted
    otherwise."""
    try:
        fd = os.open(key, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as error:
        return "a symlink" if error.errno == errno.ELOOP else error.strerror
    with open(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_uid != os.geteuid():
            return f"owned by uid {info.st_uid}, not by this user"
        try:
            entry = _decoded(key, handle)
        except OSError as error:
            return error.strerror
        if entry is None:
            return "truncated or corrupt"
        with contextlib.suppress(OSError):
            os.utime(fd)  # a use: eviction takes the oldest used first
        return entry


def _encoded(key: str, entry: Entry) -> tuple[bytes, ...]:
    """The file's parts: magic, checksum and output length, output, one line each for stderr."""
    lines = "".join(line + "\n" for line in entry.lines).encode("utf-8", "surrogatepass")
    checksum = _checksum(key, entry.output, lines)
    return (_MAGIC, b"%s %d\n" % (checksum, len(entry.output)), entry.output, lines)


def _decoded(key: str, handle: BinaryIO) -> Entry | _Alias | None:
    """The entry (or alias) a file holds, or None when it is not whole (magic, lengths and checksum must
    agree). The output is read on its own, straight into the bytes returned: a 5 MB entry is copied once,
    not twice."""
    magic = handle.read(len(_MAGIC))
    if magic == _ALIAS:
        return _alias(key, handle.read(_HEADER_MOST + 64))
    if magic != _MAGIC:
        return None
    checksum, _, length = handle.readline(_HEADER_MOST).rstrip(b"\n").partition(b" ")
    if not length.isdigit():
        return None
    output = handle.read(int(length))
    lines = handle.read()
    if len(output) != int(length) or checksum != _checksum(key, output, lines):
        return None
    if lines and not lines.endswith(b"\n"):
        return None
    return Entry(output, tuple(lines.decode("utf-8", "surrogatepass").split("\n")[:-1]))


def _alias(key: str, rest: bytes) -> _Alias | None:
    """The alias a file's line after the magic holds, when its checksum agrees and it names a key."""
    checksum, _, target = rest.partition(b" ")
    if not target.endswith(b"\n") or b"\n" in target[:-1]:
        return None
    name = target[:-1].decode("ascii", "replace")
    if len(name) != 64 or not _HEX.issuperset(name):
        return None
    return _Alias(name) if checksum == _alias_checksum(key, target[:-1]) else None


def _alias_checksum(key: str, target: bytes) -> bytes:
    """As `_checksum`, over both keys: an alias renamed to another key is not that key's."""
    return b"%08x" % crc32(target, crc32(key.encode()))


def _checksum(key: str, output: bytes, lines: bytes) -> bytes:
    """CRC-32 finds what goes wrong with a file (a torn write, flipped bits) at a quarter of a digest's cost
    (the folder being ours alone is what keeps others out); the key is in it, so an entry renamed to
    another key is not that key's."""
    checksum = crc32(lines, crc32(output, crc32(b"%s %d\n" % (key.encode(), len(output)))))
    return b"%08x" % checksum
