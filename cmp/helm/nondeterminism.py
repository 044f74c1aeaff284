"""Template functions whose output changes from one render to the next, and the charts that call them.

A chart calling one renders differently on every run: `check` renders it twice and compares, and the render
cache keeps no such render unless told to. The functions are sprig's and helm's; a template action of the
chart (its subcharts and packed `charts/*.tgz` included, nested ones too) or of a values file (read by
`tpl`) that names one counts.

The scan reads tenant content, so it is bounded as a whole: a packed chart through cmp/packed.py (helm's
bounds, bytes decompressed, members, a deadline), every other file up to SCAN_LIMIT, and its search for
actions is linear (a regular expression's lazy match over a file of unclosed `{{` takes minutes). A file
the scan cannot read whole (too large, a truncated packed chart, a bomb, the deadline) counts as calling
one: what was not read cannot be known to be stable, and `Scan.unread` says why.
"""

from __future__ import annotations

import functools
import io
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from cmp import packed

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
SCAN_LIMIT = 16 << 20  # bytes of one file the scan reads; a larger one is "not read"
MAX_FILES = 20_000
SECONDS = 10.0  # a scan's share of the deadline when its caller names none


class NotRead(Exception):
    """A file the scan could not read whole: its verdict is unknown, so the chart counts as calling one."""


class Scan:
    """One chart's scan, under one budget of time and of what packed charts may unpack (cmp/packed.py)."""

    def __init__(self, seconds: float = SECONDS) -> None:
        self.budget = packed.Budget(time.monotonic() + seconds)
        self.unread: str | None = None  # why a file could not be read whole, when one could not

    def calls(self, files: Iterable[tuple[str, bytes]]) -> bool:
        """Whether a template action of `files` ((name relative to the chart, bytes); a packed chart's
        name ends in .tgz under charts/) calls a function from NONDETERMINISTIC; True as well, with
        `unread` saying why, when one could not be read whole."""
        try:
            return any(self._calls(name, data) for name, data in files)
        except (NotRead, packed.Unreadable) as error:
            self.unread = str(error)
        except OSError as error:
            self.unread = f"{error.filename or 'a file'}: {error.strerror}"
        return True

    def _calls(self, name: str, data: bytes) -> bool:
        self.budget.in_time()
        if packed.is_packed(name):
            try:
                return any(_calls(text) for _, text in packed.chart_files(io.BytesIO(data), self.budget))
            except packed.Unreadable as error:
                raise NotRead(f"{name}: {error}") from None
        if len(data) > SCAN_LIMIT:
            raise NotRead(f"{name} is over the {SCAN_LIMIT >> 20} MiB the scan reads")
        return _calls(data)


def uses_nondeterministic_functions(chart: Path, values: Iterable[Path], seconds: float = SECONDS) -> bool:
    """Whether a template action of the chart (subcharts and packed .tgz included) or a values file (for
    `tpl`) calls a function from NONDETERMINISTIC; True as well when a file could not be read whole, or
    not within `seconds`."""
    return _chart_is_nondeterministic(chart, seconds) or Scan(seconds).calls(_read(values, Path("/")))


@functools.lru_cache(maxsize=256)
def _chart_is_nondeterministic(chart: Path, seconds: float) -> bool:
    """Per chart and worker process: a fleet renders the same few charts many times."""
    return Scan(seconds).calls(_read(_files(chart), chart))


def _calls(data: bytes) -> bool:
    """Whether a template action (`{{` to the first `}}` after it, as the lazy match finds them) names
    one, in one pass: each action is searched once, and an unclosed `{{` ends the search."""
    text = data.decode("utf-8", errors="replace")
    end = 0
    while (start := text.find("{{", end)) >= 0:
        end = text.find("}}", start + 2)
        if end < 0:
            return False
        end += 2
        if _NONDETERMINISTIC.search(text, start, end):
            return True
    return False


def _files(chart: Path) -> Iterator[Path]:
    """Every file under `chart`, links followed (check confined them to the repository first), each real
    folder and file once (iterative: no depth is too deep, and a DAG of links costs its size, not its
    paths)."""
    seen: set[tuple[int, int]] = set()
    stack = [chart]
    count = 0
    while stack:
        folder = stack.pop()
        info = folder.stat()
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        with os.scandir(folder) as entries:
            names = []
            for entry in entries:
                count += 1
                if count > MAX_FILES:
                    raise NotRead(f"the chart has more than {MAX_FILES} files")
                names.append(Path(entry.path))
        for path in sorted(names):
            if path.is_dir():
                stack.append(path)
            elif path.is_file():
                found = path.stat()
                if (found.st_dev, found.st_ino) not in seen:
                    seen.add((found.st_dev, found.st_ino))
                    yield path


def _read(paths: Iterable[Path], chart: Path) -> Iterator[tuple[str, bytes]]:
    """(name relative to `chart`, bytes) of each file; NotRead for one over SCAN_LIMIT (before it is read)."""
    for path in paths:
        if not path.is_file():
            continue
        shown = path.relative_to(chart).as_posix() if path.is_relative_to(chart) else path.name
        if path.stat().st_size > SCAN_LIMIT:
            raise NotRead(f"{shown} is over the {SCAN_LIMIT >> 20} MiB the scan reads")
        with path.open("rb") as handle:
            yield shown, handle.read(SCAN_LIMIT + 1)
