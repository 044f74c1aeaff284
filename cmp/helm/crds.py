"""The part of helm's stream that is known before helm prints it: the chart's crds/ files.

With `--include-crds`, helm prints every `.yaml`, `.yml` or `.json` file of a chart's `crds/` folder, and of
its subcharts', exactly as it is: `---`, a `# Source: <chart path>/crds/<file>` line, the file, a newline
(helm's pkg/action, both majors; the chart path is the chart's name, a subchart's under
`<parent>/charts/<name>`). Those are often most of a render's bytes (generated CRDs of several MB), and
reading them costs the same wherever it happens, so it can happen while helm renders the templates.
Nothing relies on the guess: a fragment that is not in helm's stream is simply never looked up.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from cmp import goyaml

_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_NESTING = 8  # subcharts this deep are left to the render itself
_LARGEST = 16 << 20  # a file larger than this is left to the render itself


def printed_crds(chart: Path) -> Iterator[str]:
    """Each crds/ file of the chart folder (and its unpacked subcharts) as helm prints it; files that cannot
    be read, or a chart whose name cannot be, are passed over."""
    yield from _printed(chart, None, _NESTING)


def _printed(chart: Path, parent: str | None, depth: int) -> Iterator[str]:
    name = _chart_name(chart)
    if name is None or depth == 0:
        return
    path = name if parent is None else f"{parent}/charts/{name}"
    for file in _files(chart / "crds"):
        try:
            if file.stat().st_size > _LARGEST:
                continue
            text = file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        yield f"---\n# Source: {path}/crds/{file.relative_to(chart / 'crds').as_posix()}\n{text}\n"
    for sub in _folders(chart / "charts"):
        yield from _printed(sub, path, depth - 1)


def _chart_name(chart: Path) -> str | None:
    try:
        meta = goyaml.load((chart / "Chart.yaml").read_bytes().decode("utf-8"))
    except Exception:  # any unreadable Chart.yaml: helm says what is wrong with it, not this guess
        return None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else None


def _files(folder: Path) -> list[Path]:
    """The manifest files below the folder, in path order (folder symlinks not followed: a loop ends nowhere)."""
    found = []
    for parent, _, names in os.walk(folder):
        found += [Path(parent, name) for name in names if name.endswith(_MANIFEST_SUFFIXES)]
    return sorted(found)


def _folders(folder: Path) -> list[Path]:
    try:
        return sorted(path for path in folder.iterdir() if path.is_dir())
    except OSError:
        return []
