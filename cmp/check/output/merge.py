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
from cmp.check.analysis.lifecycle import LastSpecs, changed_ids, lifecycle, unjudged
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
        [contest for part in parts for contest in part.contested],
    )
    if parts[0].base is not None:
        skipped = [skip for part in parts for skip in part.skipped]
        base_skipped = [skip for part in parts for skip in (part.base.skipped if part.base else ())]
        unsure = {skip.app for skip in [*base_skipped, *skipped]}
        before, refused = _collected(parts, "applications")
        last, also = _collected(parts, "last")
        refused = refused or also
        if refused:
            return Merged(errors=[refused])
        wanted = changed_ids(before, apps, unsure)
        refused = _filled(parts, wanted, before, last, apps)
        if refused:
            return Merged(errors=[refused])
        stuck = dict(entry for part in parts for entry in (part.base.stuck if part.base else ()))
        entries = lifecycle(before, apps, live_objects, parts[0].header.tracking, unsure, LastSpecs(last, stuck))
        missing = unjudged(base_skipped, {*apps, *(skip.app for skip in skipped)})
        report = replace(report, lifecycle=tuple(entries), unjudged=tuple(missing))
    return Merged(report, parts[0].header.raw, notes=parts[0].header.notes)


def _collected(parts: Sequence[Part], section: str) -> tuple[dict[str, AppClaims], str]:
    """The apps of one --base section of every document (its apps at the revision, or the last specs of
    the apps it removes), in the fleet's order; or the problem."""
    found: dict[str, AppClaims] = {}
    held: dict[str, Path] = {}
    placed = sorted(
        ((place, part.header.path, result) for part in parts for place, result in _section(part, section)),
        key=_first,
    )
    for _, path, result in placed:
        if result.app.name in found:
            return {}, f"{path}: app {result.app.name} at the base revision is in {held[result.app.name]} too"
        found[result.app.name], held[result.app.name] = result, path
    return found, ""


def _section(part: Part, section: str) -> Sequence[tuple[int, AppClaims]]:
    if part.base is None:
        return ()
    return part.base.apps if section == "applications" else part.base.last


def _filled(
    parts: Sequence[Part],
    wanted: set[Any],
    before: Mapping[str, AppClaims],
    last: Mapping[str, AppClaims],
    apps: Mapping[str, AppClaims],
) -> str:
    """Read the objects the lifecycle compares (of the objects whose emitters changed): every app's at the
    base revision and now, and the removed apps' last specs; "" or the problem."""
    if not wanted:
        return ""
    for part in parts:
        sections = [
            ("applications", before, _section(part, "applications")),
            ("last", last, _section(part, "last")),
            ("", apps, part.apps),
        ]
        for section, into, held in sections:
            if any(_claims_any(result, wanted) for _, result in held):
                try:
                    document.fill(part.header.path, into, wanted, section=section)
                except NotClaims as problem:
                    return f"{part.header.path}: {problem}"
    return ""


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
