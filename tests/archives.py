"""Chart archives built member by member: a good one, and every way a hostile or broken one can be made.

`hostile(kind)` returns the .tgz bytes of a chart `evil` 1.0.0 that is good but for one thing; the kinds
are the rows of the remote bad-input corpus and of the unpacking tests.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Callable, Iterable

CHART_YAML = b"apiVersion: v2\nname: evil\nversion: 1.0.0\n"
TEMPLATE = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-evil\n"

Member = tuple[tarfile.TarInfo, bytes]


def member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> Member:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data)
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info, data


def good_members(top: str = "evil") -> list[Member]:
    return [
        member(f"{top}/", kind=tarfile.DIRTYPE),
        member(f"{top}/Chart.yaml", CHART_YAML),
        member(f"{top}/templates/configmap.yaml", TEMPLATE),
    ]


def tgz(members: Iterable[Member], level: int = 6) -> bytes:
    out = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=out, mode="wb", compresslevel=level, mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return out.getvalue()


def _zeros(name: str, size: int) -> Member:
    return member(name, bytes(size))


def _with(extra: Member) -> bytes:
    return tgz([*good_members(), extra])


HOSTILE: dict[str, Callable[[], bytes]] = {
    "absolute": lambda: _with(member("/etc/evil.yaml", b"x: 1\n")),
    "dotdot": lambda: _with(member("evil/../../outside.yaml", b"x: 1\n")),
    "symlink": lambda: _with(member("evil/templates/secret.yaml", kind=tarfile.SYMTYPE, link="/etc/passwd")),
    "hardlink": lambda: _with(member("evil/values.yaml", kind=tarfile.LNKTYPE, link="evil/Chart.yaml")),
    "device": lambda: _with(member("evil/tty", kind=tarfile.CHRTYPE)),
    "fifo": lambda: _with(member("evil/pipe", kind=tarfile.FIFOTYPE)),
    "big-file": lambda: tgz([*good_members(), _zeros("evil/files/big.bin", (5 << 20) + 1)], level=1),
    "too-large": lambda: tgz([*good_members(), *(_zeros(f"evil/files/{i}.bin", 5 << 20) for i in range(21))], level=1),
    "too-many": lambda: tgz([*good_members(), *(member(f"evil/files/{i}.txt") for i in range(10_000))], level=1),
    "two-folders": lambda: _with(member("other/x.yaml", b"x: 1\n")),
    "top-level-file": lambda: tgz([member("Chart.yaml", CHART_YAML), *good_members()]),
    "file-and-folder": lambda: _with(member("evil/Chart.yaml/x.yaml", b"x: 1\n")),
    "no-chart-yaml": lambda: tgz([member("evil/", kind=tarfile.DIRTYPE), member("evil/values.yaml", b"x: 1\n")]),
    "not-gzip": lambda: b"<html><body>Not Found</body></html>\n",
    "truncated": lambda: tgz(good_members())[:60],
    "not-tar": lambda: gzip.compress(b"plain text, not a tar archive\n" * 40, mtime=0),
}


def hostile(kind: str) -> bytes:
    return HOSTILE[kind]()


def bomb(top: str = "sub", files: int = 256, size: int = 16 << 20) -> bytes:
    """A packed chart that is a decompression bomb: `files` templates of `size` zeros (4 MB of gzip for the
    default 4 GiB), made of gzip members laid end to end (helm's reader and Python's read them as one
    stream), so that it is built without compressing gigabytes. `size` is a multiple of 512."""
    zeros = gzip.compress(bytes(size), compresslevel=9, mtime=0)
    chart = tarfile.TarInfo(f"{top}/Chart.yaml")
    chart.size = len(CHART_YAML)
    parts = [gzip.compress(chart.tobuf() + CHART_YAML + bytes(-len(CHART_YAML) % 512), mtime=0)]
    for number in range(files):
        info = tarfile.TarInfo(f"{top}/templates/z{number}.yaml")
        info.size = size
        parts += [gzip.compress(info.tobuf(), mtime=0), zeros]
    parts.append(gzip.compress(bytes(1024), mtime=0))  # the end-of-archive blocks
    return b"".join(parts)
