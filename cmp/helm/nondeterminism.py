"""Template functions whose output changes from one render to the next, and the charts that call them.

A chart calling one renders differently on every run: `check` renders it twice and compares, and the render
cache keeps no such render unless told to. The functions are sprig's and helm's; a template action of the
chart (its subcharts and packed `.tgz` included) or of a values file (read by `tpl`) that names one counts.
"""

from __future__ import annotations

import functools
import io
import re
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
_SCAN_LIMIT = 1 << 20


def uses_nondeterministic_functions(chart: Path, values: Iterable[Path]) -> bool:
    """Whether a template action of the chart (subcharts and packed .tgz included) or a values file (for
    `tpl`) calls a function from NONDETERMINISTIC."""
    return _chart_is_nondeterministic(chart) or _calls_nondeterministic(_texts(values))


@functools.lru_cache(maxsize=256)
def _chart_is_nondeterministic(chart: Path) -> bool:
    """Per chart and worker process: a fleet renders the same few charts many times."""
    return _calls_nondeterministic(_texts(sorted(chart.rglob("*"))))


def file_is_nondeterministic(name: str, data: bytes) -> bool:
    """One file's verdict from bytes already read (the render cache reads each file once, for its key and
    this); `name` ending in .tgz means a packed chart, whose files count."""
    if len(data) > _SCAN_LIMIT:
        return False
    texts = _packed(data) if name.endswith(".tgz") else [data.decode("utf-8", errors="replace")]
    return _calls_nondeterministic(texts)


def _calls_nondeterministic(texts: Iterable[str]) -> bool:
    return any(_NONDETERMINISTIC.search(action) for text in texts for action in _ACTION.findall(text))


def _texts(paths: Iterable[Path]) -> Iterator[str]:
    for path in paths:
        if not path.is_file() or path.stat().st_size > _SCAN_LIMIT:
            continue
        if path.name.endswith(".tgz"):
            yield from _packed(path.read_bytes())
        else:
            yield path.read_text(encoding="utf-8", errors="replace")


def _packed(data: bytes) -> Iterator[str]:
    import tarfile  # a few ms: only charts with packed subcharts pay them

    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                handle = archive.extractfile(member) if member.isfile() and member.size <= _SCAN_LIMIT else None
                if handle is not None:
                    yield handle.read().decode("utf-8", errors="replace")
    except (OSError, tarfile.TarError):
        return
