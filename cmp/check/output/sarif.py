"""`check`'s findings as SARIF 2.1.0, for code scanning: GitHub marks the line where the fix goes.

One run, one rule per finding code. A result sits where a person changes something to fix it: the
chartshare.yaml rule that decided the object when one did, else the Application (or the ApplicationSet
that generates it) at the line of its `metadata.name`; the other apps' files are related locations, since
code scanning shows a result at its first location only. URIs are relative to the repository root.
`partialFingerprints` come from the finding's identity (code, object, apps), never from its line, so code
scanning keeps one alert per finding across runs and edits; with a baseline, `baselineState` says which
findings it already knew.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cmp import __version__
from cmp.check.analysis.conflicts import Report
from cmp.check.analysis.identity import (
    CONFLICT,
    RENDER_FAILED,
    UNSAFE_LIFECYCLE,
    Identity,
    failed_renders,
    of_conflict,
    of_entry,
    of_failure,
    of_warning,
)
from cmp.check.analysis.ownership_map import rule_of
from cmp.check.output.text_report import suggestion, trace_lines

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT = "chartshare/v1"
ROOT_BASE = "%SRCROOT%"
# What each code is, in a line: the rule's description (a warning code not listed here reads as its code).
DESCRIPTIONS: Mapping[str, str] = {
    CONFLICT: "An object two or more Applications emit: each sync takes it from the others",
    UNSAFE_LIFECYCLE: "A change that can delete a shared object while an app still emits it",
    RENDER_FAILED: "An Application whose source does not render",
    "unprotected-shared": "A shared object its owner emits without Prune=false",
    "nobody-emits": "A shared object every app strips",
    "divergent-copy": "Apps render different copies of one shared object",
    "nondeterministic": "A render that changes on every run",
    "hpa-replicas": "spec.replicas set where an HPA scales the workload",
    "empty-cabundle": "An empty caBundle cert-manager injects",
    "handover": "A live object tracked by an app that no longer emits it",
    "patch-target-unmatched": "A post-render target that matches nothing",
}
ERRORS = (CONFLICT, UNSAFE_LIFECYCLE, RENDER_FAILED)

Place = tuple[str, int]  # a file (as check read it) and a line


def to_sarif(report: Report, root: Path, *, raw: bool = False) -> str:
    """One SARIF log with one run."""
    places = _places(report)
    results = list(_results(report, places, root.resolve(), raw))
    codes = sorted({result["ruleId"] for result in results} | set(ERRORS))
    rules = [
        {
            "id": code,
            "name": "".join(part.capitalize() for part in code.split("-")),
            "shortDescription": {"text": DESCRIPTIONS.get(code, code)},
            "defaultConfiguration": {"level": "error" if code in ERRORS else "warning"},
        }
        for code in codes
    ]
    index = {code: n for n, code in enumerate(codes)}
    for result in results:
        result["ruleIndex"] = index[result["ruleId"]]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "chartshare",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {ROOT_BASE: {"uri": root.resolve().as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _places(report: Report) -> dict[str, Place]:
    """Each app's definition: the fleet's apps, and the apps check skipped."""
    places = {skip.app: skip.located for skip in report.skipped if skip.located[0]}
    places.update({row.name: row.located for row in report.applications if row.located[0]})
    return places


def _results(report: Report, places: Mapping[str, Place], root: Path, raw: bool) -> Iterator[dict[str, Any]]:
    renderers = {row.name: row.renderer for row in report.applications}
    fallback = next(iter(places.values()), None)
    for conflict in report.conflicts:
        rules = [rule_of(report.ownership, app, conflict.id) for app in conflict.apps]
        rule = next((found for found in rules if found), "")
        text = f"{conflict.id} on cluster {conflict.id.cluster} is claimed by {', '.join(conflict.apps)}"
        message = "\n".join([text, *suggestion(conflict, renderers, raw)])
        where = _where(rule, conflict.apps, places, fallback, root)
        yield _result(of_conflict(conflict), "error", message, where, conflict.apps, places, root, report)
    for entry in report.lifecycle or ():
        if entry.safe:
            continue
        apps = [*entry.after, *entry.before]
        rules = [rule_of(report.ownership, app, entry.id) for app in entry.after]
        where = _where(next((found for found in rules if found), ""), apps, places, fallback, root)
        lines = [f"{entry.id} {entry.event}: {entry.reason}", *trace_lines(entry), f"fix: {entry.fix}"]
        yield _result(of_entry(entry), "error", "\n".join(lines), where, apps, places, root, report)
    for skip in failed_renders(report):
        where = _where("", [skip.app], places, fallback, root)
        message = f"{skip.app}: {skip.reason}"
        yield _result(of_failure(skip), "error", message, where, [skip.app], places, root, report)
    for warning in report.warnings:
        rule = rule_of(report.ownership, warning.app, warning.id)
        where = _where(rule, [warning.app], places, fallback, root)
        message = f"{warning.app}: {warning.id}: {warning.message}"
        yield _result(of_warning(warning), "warning", message, where, [warning.app], places, root, report)


def _where(
    rule: str, apps: Sequence[str], places: Mapping[str, Place], fallback: Place | None, root: Path
) -> Place | None:
    """The rule's place when a rule decided (its file is relative to the root), else the first app's
    definition that check knows."""
    if rule:
        file, _, line = rule.rpartition(":")
        if file and line.isdigit():
            return str(root / file), int(line)
    return next((places[app] for app in apps if app in places), fallback)


def _result(
    found: Identity,
    level: str,
    message: str,
    where: Place | None,
    apps: Sequence[str],
    places: Mapping[str, Place],
    root: Path,
    report: Report,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": found.code,
        "level": level,
        "message": {"text": message},
        "partialFingerprints": {FINGERPRINT: found.fingerprint},
    }
    if where is not None:
        result["locations"] = [_location(where, root)]
    related: list[tuple[Place, str]] = []
    for app in dict.fromkeys(apps):
        place = places.get(app)
        if place is not None and place != where and place not in [p for p, _ in related]:
            related.append((place, app))
    if related:
        result["relatedLocations"] = [
            {**_location(place, root), "id": n, "message": {"text": f"Application {app}"}}
            for n, (place, app) in enumerate(related, 1)
        ]
    if report.known and found.code != RENDER_FAILED:
        result["baselineState"] = "unchanged" if found in report.known else "new"
    return result


def _location(place: Place, root: Path) -> dict[str, Any]:
    file, line = place
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": _uri(file, root), "uriBaseId": ROOT_BASE},
            "region": {"startLine": max(line, 1)},
        }
    }


def _uri(file: str, root: Path) -> str:
    """A file's URI relative to the repository root (as given when it lies outside)."""
    path = Path(file)
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
