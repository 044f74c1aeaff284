"""A packed chart (a .tgz) read file by file, within helm's bounds and a deadline, never unpacked.

helm loads a packed chart only when no file in it is over 5 MiB and its files add up to at most 100 MiB
(its MaxDecompressedFileSize and MaxDecompressedChartSize, read from the tar headers), and a few MB of
gzip can declare and hold gigabytes. So an archive past those is refused here as helm refuses it, and
what is decompressed is counted as it comes: every byte (headers, padding and the data of members not
read included) against one budget of bytes, members and time, which a chart's packed charts, nested
ones too, share. Between two members no more than the first one's data and what Go's tar reader allows a
header (1 MiB) is read, so no header, however large it says it is, is held whole; a file is held whole
only within helm's 5 MiB.

Past any bound, or on anything that is not a gzip-compressed tar, `Unreadable` says which, naming the
member: its caller decides what that means (the render cache keeps nothing, the schema check refuses
the chart). Only the render's own readers use this; a chart fetched into the chart store is checked
whole before it is unpacked (cmp/remote/archive.py), by the same bounds.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import gzip
    import tarfile

MAX_FILE_BYTES = 5 << 20  # helm's MaxDecompressedFileSize
MAX_UNPACKED_BYTES = 100 << 20  # helm's MaxDecompressedChartSize: the files of one archive
MAX_MEMBERS = 10_000  # files and folders of one archive; the largest public charts hold a few hundred
MAX_READ_BYTES = 512 << 20  # decompressed, for all of a chart's packed charts: the budget's defaults
MAX_READ_MEMBERS = 20_000
MAX_DEPTH = 8  # packed charts within packed charts; real charts nest two or three deep
_HEADER_BYTES = 1 << 20  # Go's archive/tar refuses a longer name or PAX header (maxSpecialFileSize)
_CHUNK = 1 << 16
_BLOCK = 512
PACKED = r"(?:^|/)charts/[^/]+\.tgz$"  # how helm tells a packed chart among a chart's files (re's cache
# compiles it once, when a name is first matched: importing this costs no compilation)


def is_packed(name: str) -> bool:
    """Whether a file of a chart, named relative to it, is a packed chart helm loads (a .tgz elsewhere is
    data)."""
    return name.endswith(".tgz") and re.search(PACKED, name) is not None


class Unreadable(Exception):
    """A packed chart past a bound, or not a gzip-compressed tar."""


class Budget:
    """What reading a chart's packed charts may spend in all: decompressed bytes, members, and time (a
    deadline on time.monotonic())."""

    def __init__(self, until: float, size: int = MAX_READ_BYTES, members: int = MAX_READ_MEMBERS) -> None:
        self.until = until
        self.size, self.size_limit = size, size
        self.members, self.members_limit = members, members

    def spend(self, size: int, members: int = 0) -> None:
        self.size -= size
        self.members -= members
        if self.size < 0:
            raise Unreadable(f"the chart's packed charts unpack to more than {self.size_limit >> 20} MiB")
        if self.members < 0:
            raise Unreadable(f"the chart's packed charts hold more than {self.members_limit} files and folders")
        self.in_time()

    def in_time(self) -> None:
        if time.monotonic() > self.until:
            raise Unreadable("reading it took longer than its share of the deadline")


def chart_files(source: BinaryIO, budget: Budget, depth: int = 0) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of every file of the packed chart `source`, named as helm names them (its top folder
    left out); the files of a packed chart under its charts/ are read in its place, named below it
    (`charts/sub.tgz/templates/a.yaml`)."""
    for name, data in files(source, budget):
        inside = name.partition("/")[2]
        if not is_packed(inside):
            yield inside, data
            continue
        if depth >= MAX_DEPTH:
            raise Unreadable(f"{inside} is a packed chart more than {MAX_DEPTH} deep")
        try:
            for within, content in chart_files(io.BytesIO(data), budget, depth + 1):
                yield f"{inside}/{within}", content
        except Unreadable as error:
            raise Unreadable(f"{inside}: {error}") from None


def files(source: BinaryIO, budget: Budget) -> Iterator[tuple[str, bytes]]:
    """(member name, bytes) of every regular file of the gzip-compressed tar `source`, in order."""
    import tarfile  # a few ms: only charts with packed charts pay them
    import zlib

    stream = Counted(source, budget)
    bounds = HelmBounds()
    try:
        with tarfile.open(fileobj=stream, mode="r|") as archive:  # type: ignore[call-overload]
            for member in archive:
                budget.spend(0, members=1)
                bounds.count(member)
                stream.past(member)
                if member.isdir():
                    continue
                handle = archive.extractfile(member) if member.isfile() else None
                if handle is not None:
                    yield member.name, handle.read()
    except (tarfile.TarError, EOFError, OSError, zlib.error, ValueError) as error:
        raise Unreadable(f"not a gzip-compressed tar ({error or type(error).__name__})") from None


class HelmBounds:
    """helm's bounds on one archive, counted member by member as it loads them: MAX_MEMBERS members,
    MAX_FILE_BYTES a file, MAX_UNPACKED_BYTES in all (by the sizes the headers give; what the reader
    decompresses for them is counted apart)."""

    def __init__(self) -> None:
        self.members = 0
        self.unpacked = 0

    def count(self, member: tarfile.TarInfo) -> None:
        """Raise Unreadable, naming the member or the bound, when `member` takes the archive past one."""
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise Unreadable(f"it holds more than {MAX_MEMBERS} files and folders")
        if member.isdir():
            return
        if member.size > MAX_FILE_BYTES:
            raise Unreadable(
                f"member {member.name!r} is {member.size / (1 << 20):.1f} MiB, over the {MAX_FILE_BYTES >> 20} MiB "
                "helm loads"
            )
        self.unpacked += member.size
        if self.unpacked > MAX_UNPACKED_BYTES:
            raise Unreadable(f"it unpacks to more than {MAX_UNPACKED_BYTES >> 20} MiB, more than helm loads")


class Counted:
    """The decompressed stream tarfile reads (in its stream mode, "r|"), counted against the budget and
    against what may come before the next member: a header (a PAX header, a long name) is never read past
    Go's 1 MiB, however large it says it is."""

    def __init__(self, source: BinaryIO, budget: Budget) -> None:
        import gzip

        self._gzip: gzip.GzipFile = gzip.GzipFile(fileobj=source, mode="rb")
        self._budget = budget
        self._allowed = _HEADER_BYTES

    def allow(self, size: int) -> None:
        """What may be read from now on until the next member: this one's data, padding, headers."""
        self._allowed = size

    def past(self, member: tarfile.TarInfo) -> None:
        """`member`'s header read: what may come before the next one is its data, padding, and headers."""
        data = 0 if member.isdir() else -(-member.size // _BLOCK) * _BLOCK
        self.allow(_HEADER_BYTES + data)

    def read(self, size: int = -1) -> bytes:
        data = self._gzip.read(size if 0 < size <= _CHUNK else _CHUNK)
        self._allowed -= len(data)
        if self._allowed < 0:
            raise Unreadable(f"a header is longer than the {_HEADER_BYTES >> 20} MiB Go's tar reader allows")
        self._budget.spend(len(data))
        return data
