"""`check --merge`: the shards' claims documents in, the report a single run over the fleet prints out.

The documents must be one run's: written by this chartshare in this format, of one fleet, of one shard
count, every shard once; anything else is refused, naming the files. Each document is read twice, one at
a time: first for who claims what, then only for the objects whose content the analysis across apps reads
(those several apps render or none emits). So the merge holds one document and the shared objects at a
time, never every object of the fleet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cmp import __version__
from cmp.check.analysis import conflicts
from cmp.check.analysis.claims import AppClaims
from cmp.check.analysis.claims_json import NotClaims
from cmp.check.analysis.conflicts import Report
from cmp.check.analysis.lifecycle import changed_ids, lifecycle
from cmp.check.output import document
from cmp.check.output.document import Header, Part


@dataclass(frozen=True, slots=True)
class Merged:
    """The fleet's report and whether its shards rendered with --raw, or why the documents were refused."""

    report: Report | None = None
    raw: bool = False
    errors: list[str] = field(default_factory=list)
    notes: tuple[str, ...] = ()


def merge(paths: Sequence[Path]) -> Merged:
    """The report of the fleet the shards' documents at `paths` cover."""
    parts: list[Part] = []
    errors: list[str] = []
    for path in paths:
        try:
            parts.append(document.read(path))
        except NotClaims as problem:
            errors.append(f"{path}: {problem}")
    errors += refusals([part.header for part in parts])
    if errors:
        return Merged(errors=errors)
    if not parts:
        return Merged(errors=["no claims documents to merge"])
    apps: dict[str, AppClaims] = {}
    held: dict[str, Path] = {}
    placed = sorted(((place, part.header.path, result) for part in parts for place, result in part.apps), key=_first)
    for _, path, result in placed:
        if result.app.name in apps:
            return Merged(errors=[f"{path}: app {result.app.name} is in {held[result.app.name]} too"])
        apps[result.app.name], held[result.app.name] = result, path
    wanted = conflicts.shared_ids(apps.values())
    for part in parts:
        if wanted and any(_claims_any(result, wanted) for _, result in part.apps):
            try:
                document.fill(part.header.path, apps, wanted)
            except NotClaims as problem:
                return Merged(errors=[f"{part.header.path}: {problem}"])
    live: list[tuple[int, dict[str, Any]]] | None = None
    if parts[0].live is not None:
        live = sorted((entry for part in parts for entry in part.live or ()), key=_first)
    live_objects = None if live is None else [obj for _, obj in live]
    report = conflicts.judge(
        apps,
        [finding for part in parts for finding in part.warnings],
        [skip for part in parts for skip in part.skipped],
        live_objects,
        parts[0].header.tracking,
    )
    if parts[0].base is not None:
        unsure = {name for part in parts for name in (*part.base_skipped, *(skip.app for skip in part.skipped))}
        before, refused = _base(parts, apps, unsure)
        if refused:
            return Merged(errors=[refused])
        entries = lifecycle(before, apps, live_objects, parts[0].header.tracking, unsure)
        report = replace(report, lifecycle=tuple(entries))
    return Merged(report, parts[0].header.raw, notes=parts[0].header.notes)


def _base(parts: Sequence[Part], apps: Mapping[str, AppClaims], unsure: set[str]) -> tuple[dict[str, AppClaims], str]:
    """The apps at the --base revision, with the objects of those whose emitters changed; or the problem."""
    before: dict[str, AppClaims] = {}
    held: dict[str, Path] = {}
    placed = sorted(
        ((place, part.header.path, result) for part in parts for place, result in part.base or ()), key=_first
    )
    for _, path, result in placed:
        if result.app.name in before:
            return {}, f"{path}: app {result.app.name} at the base revision is in {held[result.app.name]} too"
        before[result.app.name], held[result.app.name] = result, path
    wanted = changed_ids(before, apps, unsure)
    for part in parts:
        if wanted and any(_claims_any(result, wanted) for _, result in part.base or ()):
            try:
                document.fill(part.header.path, before, wanted, base=True)
            except NotClaims as problem:
                return {}, f"{part.header.path}: {problem}"
    return before, ""


def _first(entry: tuple[Any, ...]) -> int:
    """An entry's place in the fleet's order (of apps, or of live objects)."""
    place: int = entry[0]
    return place


def _claims_any(result: AppClaims, wanted: set[Any]) -> bool:
    return any(key in wanted for key in result.emitted) or any(key in wanted for key in result.stripped)


def refusals(headers: Sequence[Header]) -> list[str]:
    """Why these documents are not every shard of one run, once each; none when they are."""
    if not headers:
        return []
    problems = [
        f"{header.path}: written by chartshare {header.chartshare}, and this is chartshare {__version__}: run "
        "every shard and the merge with one version"
        for header in headers
        if header.chartshare != __version__
    ]
    first = headers[0]
    for header in headers[1:]:
        if header.fleet != first.fleet:
            problems.append(
                f"{header.path} and {first.path} are shards of different fleets (their Applications, plan, live "
                "objects, tracking or --raw differ): run every shard on one commit with the same arguments"
            )
        elif header.shard.count != first.shard.count:
            problems.append(
                f"{header.path} is shard {header.shard} and {first.path} is shard {first.shard}: every shard of a "
                "run splits the fleet into the same N"
            )
    if problems:
        return problems
    count = first.shard.count
    given: dict[int, list[Path]] = {}
    for header in headers:
        given.setdefault(header.shard.index, []).append(header.path)
    for index, files in sorted(given.items()):
        if len(files) > 1:
            problems.append(f"shard {index}/{count} is given more than once: {', '.join(map(str, files))}")
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in given]
    if missing:
        noun = "shard" if len(missing) == 1 else "shards"
        verb = "is" if len(missing) == 1 else "are"
        problems.append(f"{noun} {', '.join(missing)} {verb} missing: merge the documents of every shard 1 to {count}")
    return problems
