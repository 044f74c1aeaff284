"""The values.schema.json files of a chart, read before helm runs: a reference out of its own file is
refused.

helm validates the values against the schema of the chart and of each subchart (packed ones too) and
resolves what a schema refers to as JSON Schema says, from the sidecar, during the render: `$ref:
file:///etc/passwd` is read (and shows in the validation message), `$ref: http://...` is fetched, a
relative reference is read from `/` (helm 4) or fetched from under an `$id`, and helm 4 fetches
`$dynamicRef`, `$recursiveRef` and any `$schema` it does not hold. None of that is the chart's, nor in the
render cache's key. So every schema helm would validate against is parsed, within bounds (helm's 5 MiB
a file, packed charts within cmp/packed.py's, a share of the deadline), and refused by name when a
`$ref`, `$dynamicRef` or `$recursiveRef` is anything but a JSON pointer into the same file (`#...`), or
a `$schema` anything but a meta-schema the validators hold. A string under one of those keys counts
wherever it is (an `enum`'s data too): a reference must never hide there.

Nothing is checked with skip-schema-validation: helm then resolves no schema at all, which is what an
Argo CD user who sets `skipSchemaValidation` expects (a chart whose schema cannot be used still renders).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cmp import packed
from cmp.errors import PathError

SCHEMA = "values.schema.json"
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
_CHECKED = frozenset((*_REFERENCES, "$schema"))
# The meta-schemas both helm majors' validators hold (helm 4's fetches any other, draft-03 included).
_HELD = r"https?://json-schema\.org/(?:schema|draft/2020-12/schema|draft/2019-09/schema|draft-0[467]/schema)#?"
_PACKED_SCHEMA = r"(?:charts/[^/]+/)*values\.schema\.json"  # in a packed chart, as helm names it
_FIX = "only references within the same file ('#/...') are allowed, or set skip-schema-validation"
_HELD_FIX = (
    "name a meta-schema helm holds (https://json-schema.org/draft/2020-12/schema, .../draft/2019-09/schema, "
    "http://json-schema.org/draft-07/schema#, -06, -04), or set skip-schema-validation"
)


def refuse_remote_references(chart: Path, seconds: float) -> None:
    """Raise PathError naming the schema file and the reference when a values.schema.json of `chart` or
    of a subchart refers to anything outside itself, or cannot be read within the bounds."""
    budget = packed.Budget(time.monotonic() + seconds)
    try:
        for name, data in _schemas(chart, budget):
            _check(name, data)
    except _Refused as refused:
        raise PathError(f"chart {chart.name}: {refused}") from None
    except packed.Unreadable as error:  # the deadline, between files
        raise PathError(f"chart {chart.name}: its schemas cannot be checked for references: {error}") from None
    except OSError as error:
        raise PathError(f"chart {chart.name}: cannot read {error.filename}: {error.strerror}") from None


class _Refused(Exception):
    """What is wrong with one schema, for the message naming the chart."""


def _schemas(chart: Path, budget: packed.Budget) -> Iterator[tuple[str, bytes]]:
    """(name relative to the chart, bytes) of each schema helm would load: the chart's own, and its
    subcharts' under charts/ (folders, and .tgz files read within the budget), each real folder once."""
    seen: set[tuple[int, int]] = set()
    pending = [(chart, "")]
    while pending:
        folder, prefix = pending.pop()
        info = folder.stat()
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        budget.spend(0, members=1)
        schema = folder / SCHEMA
        if schema.is_file():
            yield prefix + SCHEMA, _read(schema, prefix + SCHEMA)
        for entry in _subcharts(folder, budget):
            name = f"{prefix}charts/{entry.name}"
            if entry.is_dir():
                pending.append((Path(entry.path), name + "/"))
            elif entry.name.endswith(".tgz") and entry.is_file():
                yield from _packed_schemas(Path(entry.path), name, budget)


def _subcharts(folder: Path, budget: packed.Budget) -> list[os.DirEntry[str]]:
    """The entries of `folder`/charts that helm loads as subcharts (it skips names starting `_` or `.`),
    each counted against the budget as it is listed."""
    listed = []
    try:
        with os.scandir(folder / "charts") as found:
            for entry in found:
                budget.spend(0, members=1)
                if entry.name[:1] not in ("_", "."):
                    listed.append(entry)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(listed, key=lambda entry: entry.name)


def _read(path: Path, name: str) -> bytes:
    with path.open("rb") as handle:
        data = handle.read(packed.MAX_FILE_BYTES + 1)
    if len(data) > packed.MAX_FILE_BYTES:
        raise _Refused(f"{name} is over the {packed.MAX_FILE_BYTES >> 20} MiB helm loads")
    return data


def _packed_schemas(archive: Path, name: str, budget: packed.Budget) -> Iterator[tuple[str, bytes]]:
    try:
        with archive.open("rb") as source:
            for inside, data in packed.chart_files(source, budget):
                if re.fullmatch(_PACKED_SCHEMA, inside):
                    yield f"{name}/{inside}", data
    except packed.Unreadable as error:
        raise _Refused(f"{name} cannot be checked for schema references: {error}") from None


def _check(name: str, data: bytes) -> None:
    """Refuse a schema holding a reference out of itself, or one that cannot be parsed to tell. A key given
    twice counts by its last value, as helm's JSON reader (Go's) reads it."""
    import json  # only charts with a schema pay its import

    try:
        schema = json.loads(data.decode("utf-8", errors="replace"))  # invalid UTF-8 as Go reads it: U+FFFD
    except json.JSONDecodeError as error:
        raise _Refused(
            f"{name} is not JSON ({error.msg} at line {error.lineno} column {error.colno}), so its references "
            "cannot be checked; fix it or set skip-schema-validation"
        ) from None
    except RecursionError:
        raise _Refused(f"{name} nests too deeply for its references to be checked") from None
    if not _leaves(schema):
        return
    key, value, at = _where(schema)
    fix = _HELD_FIX if key == "$schema" else _FIX
    raise _Refused(
        f"{name}: {key} {value!r} at {at} leaves the schema: helm would read or fetch it during the render; {fix}"
    )


def _leaves(schema: Any) -> bool:
    """Whether a reference anywhere in the parsed schema leaves it (one pass, no paths: most schemas pass)."""
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            for key in node.keys() & _CHECKED:
                if isinstance(node[key], str) and not _local(key, node[key]):
                    return True
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return False


def _where(schema: Any) -> tuple[str, str, str]:
    """The first reference that leaves the schema, in document order: key, value, JSON pointer."""
    pending: list[tuple[Any, str]] = [(schema, "")]
    while pending:
        node, at = pending.pop()
        if isinstance(node, dict):
            items = list(node.items())
            for key, value in items:
                if key in _CHECKED and isinstance(value, str) and not _local(key, value):
                    return key, value, f"{at}/{_escaped(key)}"
            pending.extend((value, f"{at}/{_escaped(key)}") for key, value in reversed(items))
        elif isinstance(node, list):
            pending.extend((item, f"{at}/{index}") for index, item in reversed(list(enumerate(node))))
    raise AssertionError("no reference leaves the schema")


def _escaped(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _local(key: str, value: str) -> bool:
    if key in _REFERENCES:
        return value.startswith("#")
    if key == "$schema":
        return re.fullmatch(_HELD, value) is not None
    return True
