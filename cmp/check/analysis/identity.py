"""What one finding is, whatever run, shard or edit reports it: the key of a baseline and of code scanning.

A finding's identity is its code, the object (cluster, group, kind, namespace, name) and the apps it names,
never a line number or a message: a rule moved down a file, a reworded reason or another shard's render
leave it the same finding, so a baseline recorded today still knows it and code scanning keeps one alert.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import NamedTuple

from cmp.check.analysis.conflicts import Conflict, Report
from cmp.check.analysis.findings import Finding
from cmp.check.analysis.lifecycle import Entry
from cmp.check.fleet.applications import RENDER_FAILED as FAILED
from cmp.check.fleet.applications import Skip
from cmp.model import ClusterResourceId

CONFLICT = "conflict"
UNSAFE_LIFECYCLE = "unsafe-lifecycle"
RENDER_FAILED = "render-failed"
_APPLICATION = ClusterResourceId("", "argoproj.io", "Application", "", "")


class Identity(NamedTuple):
    """The fields that make two findings the same finding."""

    code: str
    cluster: str
    group: str
    kind: str
    namespace: str
    name: str
    apps: tuple[str, ...]

    @property
    def fingerprint(self) -> str:
        """A digest of the identity: what SARIF's partialFingerprints and a baseline's entries carry."""
        return hashlib.sha256(json.dumps(list(self), separators=(",", ":")).encode("utf-8")).hexdigest()


def of_conflict(conflict: Conflict) -> Identity:
    return Identity(CONFLICT, *conflict.id, tuple(sorted(conflict.apps)))


def of_entry(entry: Entry) -> Identity:
    """An unsafe lifecycle entry: the object and every app that emits it before or after the change."""
    return Identity(UNSAFE_LIFECYCLE, *entry.id, tuple(sorted({*entry.before, *entry.after})))


def of_warning(warning: Finding) -> Identity:
    return Identity(warning.code, *warning.id, (warning.app,))


def of_failure(skip: Skip) -> Identity:
    """A failed render (never baselined, but code scanning tracks it by the same kind of key)."""
    return Identity(RENDER_FAILED, *_APPLICATION._replace(name=skip.app), (skip.app,))


def failed_renders(report: Report) -> list[Skip]:
    """The skipped entries that are failed renders, one per app (the first reason)."""
    found: dict[str, Skip] = {}
    for skip in report.skipped:
        if skip.reason.startswith(FAILED):
            found.setdefault(skip.app, skip)
    return list(found.values())


def baselined(report: Report) -> Iterator[Identity]:
    """Every finding a baseline may hold: conflicts, unsafe lifecycle entries and warnings (failed renders
    always fail: a baseline never hides a broken app)."""
    yield from (of_conflict(conflict) for conflict in report.conflicts)
    yield from (of_entry(entry) for entry in report.lifecycle or () if not entry.safe)
    yield from (of_warning(warning) for warning in report.warnings)


def known_conflict(report: Report, conflict: Conflict) -> bool:
    return of_conflict(conflict) in report.known


def known_entry(report: Report, entry: Entry) -> bool:
    return not entry.safe and of_entry(entry) in report.known


def known_warning(report: Report, warning: Finding) -> bool:
    return of_warning(warning) in report.known


def is_known(report: Report, finding: Conflict | Entry | Finding) -> bool:
    """Whether the report's baseline holds this conflict, unsafe entry or warning."""
    if isinstance(finding, Conflict):
        return known_conflict(report, finding)
    if isinstance(finding, Entry):
        return known_entry(report, finding)
    return known_warning(report, finding)


def new_failures(report: Report) -> int:
    """What makes check exit 1 as a conflict does: each conflict, and each lifecycle entry that is not safe,
    that the baseline (if any) does not know."""
    new = [conflict for conflict in report.conflicts if not known_conflict(report, conflict)]
    unsafe = [entry for entry in report.lifecycle or () if not entry.safe and not known_entry(report, entry)]
    return len(new) + len(unsafe)
