"""A chart archive (.tgz) unpacked with every member checked first, or refused with the reason.

The archive comes from a server chartshare does not control, and its folder is rendered for every app of
the sidecar, so it may hold only what `helm package` writes: one top folder of plain files and folders.
Refused, each with one line naming the member: an absolute path, a `..` step, a symbolic or hard link, a
device file or FIFO (any member type but file and folder), a name that is a file and a folder, a file at
the top level or in a second top folder, no `Chart.yaml` in the folder, a file over helm's own 5 MiB, more
than helm's 100 MiB unpacked, more than 10,000 members (cmp/packed.py's HelmBounds, which the render's own
readers of packed charts count too), a header (PAX or long name) over Go's 1 MiB, more decompressed than
the read budget or past the deadline, and anything that is not a gzip-compressed tar. The archive is
read as a stream twice, never held: every member is checked, by these rules and by tarfile's own `data`
filter, in the first pass; the second writes them (never `extractall`). A file written twice keeps its
later copy, as helm reads it (`helm package` itself writes some files twice).
"""

from __future__ import annotations

import contextlib
import gzip
import posixpath
import tarfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from cmp.errors import RemoteError
from cmp.packed import Budget, Counted, HelmBounds, Unreadable

MAX_ARCHIVE_BYTES = 20 << 20  # the .tgz as downloaded; published charts are a few MiB at most
UNPACK_SECONDS = 60.0  # when the caller gives no deadline of its own
_CHUNK = 1 << 16
_SPECIAL = {
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO",
}


def unpack(archive: Path, target: Path, what: str, until: float | None = None) -> Path:
    """Unpack `archive` into the new folder `target` without its top folder (as helm loads an archive);
    returns `target`. `what` names the archive in messages; `until` (time.monotonic()) ends the reading."""
    with archive.open("rb") as raw:
        if raw.read(2) != b"\x1f\x8b":
            raw.seek(0)
            start = raw.read(40).decode("utf-8", "replace").split("\n")[0]
            raise RemoteError(f"{what} is not a chart archive (a .tgz): it starts with {start!r}")
    target.mkdir()
    until = time.monotonic() + UNPACK_SECONDS if until is None else until
    try:
        with _streamed(archive, until) as members:
            checked = _checked(members, str(target), what)
        with _streamed(archive, until) as members:
            for (tar, member), (name, inside) in zip(members, checked, strict=True):
                if member.name != name:
                    raise RemoteError(f"{what} changed while it was unpacked")
                if inside:
                    _write(tar, member, target / inside, what)
    except Unreadable as error:
        raise RemoteError(f"{what} is refused: {error}") from None
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, ValueError) as error:
        raise RemoteError(f"{what} is not a valid gzip-compressed tar ({error or type(error).__name__})") from None
    if not (target / "Chart.yaml").is_file():
        raise RemoteError(f"{what} holds no Chart.yaml in its chart folder; it is not a Helm chart")
    return target


@contextlib.contextmanager
def _streamed(archive: Path, until: float) -> Iterator[Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]]]:
    """The members of `archive` read as a stream, each header within Go's bound and every byte counted
    against the read budget and `until` (packed.Counted): a member's data is read only while it is current."""
    with archive.open("rb") as raw:
        stream = Counted(raw, Budget(until))
        with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]

            def members() -> Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]]:
                for member in tar:
                    stream.past(member)
                    yield tar, member

            yield members()


def _checked(
    members: Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]], target: str, what: str
) -> list[tuple[str, str]]:
    """(member name, path inside the chart folder) for every member, or the first refusal."""
    top = ""
    bounds = HelmBounds()
    checked: list[tuple[str, str]] = []
    for _, member in members:
        head, inside = _place(member, what)
        if top and head != top:
            raise RemoteError(f"{what} is refused: member {member.name!r} is outside its one folder {top!r}")
        top = head
        try:
            bounds.count(member)  # helm's bounds, as the render's own readers count them
        except Unreadable as error:
            raise RemoteError(f"{what} is refused: {error}") from None
        try:
            tarfile.data_filter(member, target)  # the standard library's verdict too; ours came first
        except tarfile.FilterError as error:
            raise RemoteError(f"{what} is refused: {error}") from None
        checked.append((member.name, inside))
    return checked


def _place(member: tarfile.TarInfo, what: str) -> tuple[str, str]:
    """(top folder, path inside it) of a member, refusing what must never reach the disk."""
    name = member.name
    kind = _SPECIAL.get(member.type)
    if kind is not None:
        to = f" (to {member.linkname!r})" if member.issym() or member.islnk() else ""
        raise RemoteError(f"{what} is refused: member {name!r} is {kind}{to}; a chart holds only files and folders")
    if not (member.isfile() or member.isdir()):
        raise RemoteError(f"{what} is refused: member {name!r} has type {member.type!r}, neither file nor folder")
    if name.startswith("/"):
        raise RemoteError(f"{what} is refused: member {name!r} is an absolute path")
    if "\\" in name:
        raise RemoteError(f"{what} is refused: member {name!r} holds a backslash")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise RemoteError(f"{what} is refused: member {name!r} steps out of its folder with '..'")
    if not parts:
        raise RemoteError(f"{what} is refused: member {name!r} names no file")
    if len(parts) == 1 and member.isfile():
        raise RemoteError(f"{what} is refused: member {name!r} lies outside the chart's folder")
    return parts[0], posixpath.join(*parts[1:]) if len(parts) > 1 else ""


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, path: Path, what: str) -> None:
    try:
        if member.isdir():
            path.mkdir(parents=True, exist_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        out = path.open("wb")  # only files and folders of this unpacking are there: never a link to follow
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        raise RemoteError(f"{what} is refused: member {member.name!r} is both a file and a folder") from None
    source = tar.extractfile(member)
    if source is None:
        out.close()
        raise RemoteError(f"{what}: member {member.name!r} cannot be read")
    with out, source:
        while chunk := source.read(_CHUNK):
            out.write(chunk)
    path.chmod(0o644)
