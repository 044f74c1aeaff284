"""`check`'s report as JUnit XML, for the test reports CI systems show.

JUnit makes each Application a test case that fails once for every conflict it is part of, once for every
unsafe lifecycle entry that names it (an app the change deletes gets a test case of its own) and once for
every render of it that failed, so the report and the exit status agree; `<skipped>` is only for what
check cannot render here (another plugin, a chart missing offline). A finding the baseline knows is
written in the case's output, not failed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import groupby
from xml.etree import ElementTree

from cmp.check.analysis.conflicts import AppRow, Conflict, Report
from cmp.check.analysis.identity import known_conflict, known_entry
from cmp.check.analysis.lifecycle import Entry, unsafe_apps
from cmp.check.fleet.applications import RENDER_FAILED
from cmp.check.output.text_report import lifecycle_head, suggestion, summary, trace_lines, warning_lines

SUITE = "chartshare check"
# What XML 1.0 cannot hold, not even escaped (a chart's values can carry it into a message).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def to_junit(report: Report, *, raw: bool = False) -> str:
    """One test case per Application (named by it, its class the destination cluster), failing once per
    conflict it is part of, with the fix; its warnings, skipped sources and prune risks in its system-out.
    An app none of whose sources check renders is a skipped test case; the summary line is the suite's."""
    renderers = {row.name: row.renderer for row in report.applications}
    conflicts: dict[str, list[Conflict]] = {}
    notes: dict[str, list[str]] = {}
    for conflict in report.conflicts:
        for app in conflict.apps:
            if known_conflict(report, conflict):  # in the baseline: said, not failed
                notes.setdefault(app, []).append(f"KNOWN CONFLICT {conflict.id} (in the baseline)")
            else:
                conflicts.setdefault(app, []).append(conflict)
    for app, warnings in groupby(report.warnings, key=lambda warning: warning.app):
        notes.setdefault(app, []).extend(["WARNINGS", *warning_lines(list(warnings), report)])
    failed: dict[str, list[str]] = {}
    for skip in report.skipped:
        if skip.reason.startswith(RENDER_FAILED):
            failed.setdefault(skip.app, []).append(skip.reason)
        else:
            notes.setdefault(skip.app, []).append(f"SKIPPED {skip.reason}")
    for skip in report.unjudged:
        notes.setdefault(skip.app, []).append(f"UNJUDGED {skip.reason}")
    for risk in report.prune_risks or ():
        notes.setdefault(risk.app, []).append(f"PRUNE RISK {risk.id} on its next sync with prune; first: {risk.fix}")
    for entry in report.lifecycle or ():
        if entry.safe or known_entry(report, entry):  # an unsafe new one is a failure of each app it names
            known = " (known: in the baseline)" if not entry.safe else ""
            for app in entry.after or entry.before:
                notes.setdefault(app, []).append(f"LIFECYCLE {lifecycle_head(entry)}{known}: {entry.reason}")
    unsafe: dict[str, list[Entry]] = {}
    for app, entry in unsafe_apps(report.lifecycle or ()):
        if not known_entry(report, entry):
            unsafe.setdefault(app, []).append(entry)
    cases: list[ElementTree.Element] = []
    rows = [*report.applications, *_gone_rows(unsafe, renderers, report.lifecycle or ())]
    for row in rows:
        case = _element("testcase", {"name": row.name, "classname": row.cluster})
        _render_failures(case, failed.pop(row.name, []))
        for entry in unsafe.get(row.name, []):
            failure = _element("failure", {"type": "lifecycle", "message": lifecycle_head(entry)}, case)
            failure.text = _xml_text("\n".join([entry.reason, *trace_lines(entry), f"fix: {entry.fix}"]))
        for conflict in conflicts.get(row.name, []):
            others = ", ".join(app for app in conflict.apps if app != row.name)
            failure = _element(
                "failure", {"type": "conflict", "message": f"{conflict.id} is also claimed by {others}"}, case
            )
            claimed = f"{conflict.id} on cluster {row.cluster} is claimed by {', '.join(conflict.apps)}"
            failure.text = _xml_text("\n".join([claimed, *suggestion(conflict, renderers, raw)]))
        if row.name in notes:
            _element("system-out", {}, case).text = _xml_text("\n".join(notes.pop(row.name)) + "\n")
        cases.append(case)
    for app, reasons in groupby(report.skipped, key=lambda skip: skip.app):
        if app in renderers:
            continue
        case = _element("testcase", {"name": app})
        failures = failed.pop(app, [])
        _render_failures(case, failures)
        if not failures:
            _element("skipped", {"message": "; ".join(skip.reason for skip in reasons)}, case)
            notes.pop(app, None)
        elif app in notes:
            _element("system-out", {}, case).text = _xml_text("\n".join(notes.pop(app)) + "\n")
        cases.append(case)
    cases.sort(key=lambda case: (case.get("name", ""), case.get("classname", "")))
    failing = sum(1 for case in cases if case.find("failure") is not None)
    skipped = sum(1 for case in cases if case.find("skipped") is not None)
    counts = {"tests": str(len(cases)), "failures": str(failing), "errors": "0"}
    suites = _element("testsuites", {"name": SUITE, **counts})
    suite = _element("testsuite", {"name": SUITE, **counts, "skipped": str(skipped)}, suites)
    suite.extend(cases)
    leftover = [line for lines in notes.values() for line in lines]  # warnings about an app no case stands for
    _element("system-out", {}, suite).text = _xml_text("\n".join([*leftover, summary(report, raw)]) + "\n")
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def _render_failures(case: ElementTree.Element, reasons: Sequence[str]) -> None:
    """One failure per failed render: check exits 1 for it, so the report must not look green."""
    for reason in reasons:
        head = reason.splitlines()[0] if reason else reason
        _element("failure", {"type": "render", "message": head}, case).text = _xml_text(reason)


def _gone_rows(
    unsafe: Mapping[str, list[Entry]], renderers: Mapping[str, str], entries: Sequence[Entry]
) -> list[AppRow]:
    """A test case for each app an unsafe entry names that is gone from the fleet (deleted by the change)."""
    clusters = {app: entry.id.cluster for entry in entries for app in entry.before}
    return [AppRow(app, clusters.get(app, ""), "", "", 0) for app in sorted(unsafe) if app not in renderers]


def _element(tag: str, attributes: Mapping[str, str], parent: ElementTree.Element | None = None) -> ElementTree.Element:
    clean = {name: _xml_text(value) for name, value in attributes.items()}
    if parent is None:
        return ElementTree.Element(tag, clean)
    return ElementTree.SubElement(parent, tag, clean)


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)
