"""Template functions whose output changes from one render to the next, and the charts that call them.

A chart calling one renders differently on every run: `check` renders it twice and compares, and the render
cache keeps no such render unless told to. The functions are sprig's and helm's; a template action of the
chart (its subcharts and packed `charts/*.tgz` included) or of a values file (read by `tpl`) that names
one counts. A file the scan cannot read whole (too large, a truncated packed chart) counts as calling one:
what was not read cannot be known to be stable.
"""

from __future__ import annotations

import functools
import io
import re
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

NONDETERMINISTIC = (
    "randAlphaNum",
    "randAlpha",
    "randNumeric",
    "randAscii",
    "randInt",
    "randBytes",
    "uuidv4",
    "shuffle",
    "now",
    "htpasswd",
    "bcrypt",
    "encryptAES",
    "genPrivateKey",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
)
_NONDETERMINISTIC = re.compile(r"\b(?:" + "|".join(NONDETERMINISTIC) + r")\b")
_ACTION = re.compile(r"\{\{.*?\}\}", re.S)
_PACKED = re.compile(r"(?:^|/)charts/[^/]+\.tgz$")  # a packed subchart; any other .tgz is a data file
SCAN_LIMIT = 16 << 20  # bytes of one file or archive member the scan reads; a larger one is "not read"
MAX_FILES = 20_000


class _NotRead(Exception):
    """A file the scan could not read whole: its verdict is unknown, so the chart counts as calling one."""


def uses_nondeterministic_functions(chart: Path, values: Iterable[Path]) -> bool:
    """Whether a template action of the chart (subcharts and packed .tgz included) or a values file (for
    `tpl`) calls a function from NONDETERMINISTIC; True as well when a file could not be read whole."""
    try:
        return _chart_is_nondeterministic(chart) or _calls_nondeterministic(_texts(values, Path("/")))
    except (_NotRead, OSError):
        return True


@functools.lru_cache(maxsize=256)
def _chart_is_nondeterministic(chart: Path) -> bool:
    """Per chart and worker process: a fleet renders the same few charts many times."""
    return _calls_nondeterministic(_texts(_files(chart), chart))


def file_is_nondeterministic(name: str, data: bytes) -> bool:
    """One file's verdict from bytes already read (the render cache reads each file once, for its key and
    this); `name` (relative to the chart) under charts/ ending in .tgz means a packed chart, whose files
    count. A packed chart that cannot be read whole counts as calling one."""
    try:
        texts = _packed(data) if _PACKED.search(name) else [data.decode("utf-8", errors="replace")]
        return _calls_nondeterministic(texts)
    except _NotRead:
        return True


def _calls_nondeterministic(texts: Iterable[str]) -> bool:
    return any(_NONDETERMINISTIC.search(action) for text in texts for action in _ACTION.findall(text))


def _files(chart: Path) -> Iterator[Path]:
    """Every file under `chart`, links followed, each real folder and file once (iterative: no depth is too
    deep, and a DAG of links costs its size, not its paths)."""
    seen: set[tuple[int, int]] = set()
    stack = [chart]
    count = 0
    while stack:
        folder = stack.pop()
        info = folder.stat()
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        for path in sorted(folder.iterdir()):
            count += 1
            if count > MAX_FILES:
                raise _NotRead(f"more than {MAX_FILES} files")
            if path.is_dir():
                stack.append(path)
            elif path.is_file():
                found = path.stat()
                if (found.st_dev, found.st_ino) not in seen:
                    seen.add((found.st_dev, found.st_ino))
                    yield path


def _texts(paths: Iterable[Path], chart: Path) -> Iterator[str]:
    for path in paths:
        if not path.is_file():
            continue
        if path.stat().st_size > SCAN_LIMIT:
            raise _NotRead(str(path))
        shown = path.relative_to(chart).as_posix() if path.is_relative_to(chart) else path.name
        if _PACKED.search(shown):
            yield from _packed(path.read_bytes())
        else:
            yield path.read_text(encoding="utf-8", errors="replace")


def _packed(data: bytes) -> list[str]:
    """The texts of a packed chart's files; _NotRead when it cannot be read whole (truncated, not gzip)."""
    import tarfile  # a few ms: only charts with packed subcharts pay them

    texts = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                if not member.isfile():
                    continue
                handle = archive.extractfile(member) if member.size <= SCAN_LIMIT else None
                if handle is None:
                    raise _NotRead(member.name)
                texts.append(handle.read().decode("utf-8", errors="replace"))
    except (OSError, EOFError, ValueError, tarfile.TarError, zlib.error) as error:
        raise _NotRead(str(error)) from None
    return texts
