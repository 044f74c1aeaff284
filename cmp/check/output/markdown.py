"""`check`'s report as a pull-request comment (GitHub and GitLab markdown), where reviewers already look.

The first line is the verdict with the counts the text summary gives; then a table per kind of finding
(conflicts with the suggested rule folded in a `<details>`, unsafe lifecycle entries with their trace and
fix, warnings grouped by code), and the skipped apps folded. A comment has a size limit (GitHub's is 65,536
characters), so the body stays under LIMIT: when the whole report would not fit, every table shows the
same number of rows, the most that fit, and says how many more the JSON report holds. Everything that
comes from a repository (app names, object names, messages) is escaped, so a name can neither break a
table nor turn into a link, a mention or markup. The last line is a marker CI finds the comment by, to
update one comment per pull request instead of adding one per push.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from itertools import groupby

from cmp.check.analysis.conflicts import Report
from cmp.check.analysis.identity import failed_renders, is_known, new_failures
from cmp.check.analysis.lifecycle import Entry
from cmp.check.output.text_report import suggestion, summary

LIMIT = 60_000  # characters: under GitHub's 65,536 with room for what CI adds around it
MARKER = "<!-- chartshare-check -->"  # how CI finds the comment it wrote before (docs/ci.md)
MAX_CELL = 600  # characters of one cell (a long message is cut at a word; the JSON report has it whole)
KNOWN = " *(known)*"
_MARKDOWN = re.compile(r"([\\`*_\[\]|~#@!:])")

Row = list[str]
CONFLICTS_SAY = "Objects several apps would track: each sync takes them from the others."
UNSAFE_SAY = "Objects this change can delete while an app still emits them, with the shortest order that does it."
PRUNE_SAY = "Live objects an app would delete on its next sync with prune."


def to_markdown(report: Report, *, raw: bool = False, limit: int = LIMIT) -> str:
    """The comment body, under `limit` characters: every row when they fit, else as many per table as fit."""
    tables = _tables(report, raw)
    most = max([len(report.skipped), len(report.unjudged), *(len(rows) for _, _, rows in tables)])
    body = _body(report, raw, tables, most)
    if len(body) <= limit:
        return body
    low, high = 0, most  # the largest number of rows per table that fits: binary search
    while low < high:
        middle = (low + high + 1) // 2
        if len(_body(report, raw, tables, middle)) <= limit:
            low = middle
        else:
            high = middle - 1
    return _body(report, raw, tables, low)


def verdict(report: Report, raw: bool) -> str:
    """The first line: whether the run fails, and the counts of the text report's summary."""
    fails = new_failures(report) > 0 or bool(failed_renders(report))
    counts = summary(report, False).partition(": ")[2]
    mode = " (`--raw`: chartshare.yaml rules ignored)" if raw else ""
    return f"{'❌' if fails else '✅'} **chartshare check {'fails' if fails else 'passes'}**{mode}: {counts}"


def cell(text: str, limit: int = MAX_CELL) -> str:
    """Text from a repository as one table cell: escaped for HTML and markdown, one line, cut at a word."""
    if len(text) > limit:
        cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
        text = f"{cut} …"
    escaped = _MARKDOWN.sub(r"\\\1", html.escape(text, quote=False))
    return escaped.replace("\n", "<br>")


def _code_lines(lines: Sequence[str]) -> str:
    """Lines of a rule or a snippet in a cell: escaped, indentation kept, joined with <br>."""
    kept = []
    for line in lines:
        stripped = line.lstrip(" ")
        kept.append("&nbsp;" * (len(line) - len(stripped)) + cell(stripped, 10 * MAX_CELL))
    return "<br>".join(kept)


Table = tuple[str, Sequence[str], Sequence[Row]]  # (heading lines, column names, rows)


def _tables(report: Report, raw: bool) -> list[Table]:
    renderers = {row.name: row.renderer for row in report.applications}
    tables: list[Table] = []
    if report.conflicts:
        rows = []
        for conflict in report.conflicts:
            rule = _code_lines(suggestion(conflict, renderers, raw))
            rows.append(
                [
                    f"{cell(str(conflict.id))}{KNOWN if is_known(report, conflict) else ''}",
                    cell(conflict.id.cluster),
                    cell(", ".join(conflict.apps)),
                    f"<details><summary>rule</summary>{rule}</details>",
                ]
            )
        heading = f"### Conflicts ({len(report.conflicts)})\n{CONFLICTS_SAY}"
        tables.append((heading, ("Object", "Cluster", "Claimed by", "Suggested rule"), rows))
    unsafe = [entry for entry in report.lifecycle or () if not entry.safe]
    if unsafe:
        rows = [_entry_row(report, entry) for entry in unsafe]
        heading = f"### Unsafe lifecycle entries ({len(unsafe)})\n{UNSAFE_SAY}"
        tables.append((heading, ("Object", "Event", "Emitted by (before → after)", "Trace", "Fix"), rows))
    for code, warnings in groupby(sorted(report.warnings, key=lambda warning: warning.code), key=lambda w: w.code):
        listed = list(warnings)
        rows = [
            [
                cell(warning.app),
                f"{cell(str(warning.id))}{KNOWN if is_known(report, warning) else ''}",
                cell(warning.message),
            ]
            for warning in listed
        ]
        tables.append((f"### Warnings: `{code}` ({len(listed)})", ("App", "Object", "Message"), rows))
    if report.prune_risks:
        rows = [[cell(risk.app), cell(str(risk.id)), cell(risk.fix)] for risk in report.prune_risks]
        heading = f"### Prune risks ({len(report.prune_risks)})\n{PRUNE_SAY}"
        tables.append((heading, ("App", "Object", "Make it safe first"), rows))
    return tables


def _entry_row(report: Report, entry: Entry) -> Row:
    moved = f"{', '.join(entry.before) or '(none)'} → {', '.join(entry.after) or '(none)'}"
    trace = "<br>".join(cell(f"{number}. {step.app} {step.effect}") for number, step in enumerate(entry.trace, 1))
    return [
        f"{cell(str(entry.id))}{KNOWN if is_known(report, entry) else ''}",
        cell(entry.event),
        cell(moved),
        f"{cell(entry.reason)}<br>{trace}" if trace else cell(entry.reason),
        cell(entry.fix or ""),
    ]


def _body(report: Report, raw: bool, tables: Sequence[Table], most: int) -> str:
    """The comment with at most `most` rows per table."""
    parts = [verdict(report, raw), ""]
    for heading, columns, rows in tables:
        parts += [heading, "", _row(columns), _row(["---"] * len(columns))]
        parts += [_row(row) for row in rows[:most]]
        if len(rows) > most:
            parts += ["", f"{len(rows) - most} more: see the JSON report (`--report json=FILE`)."]
        parts.append("")
    parts += _folded("Skipped", [f"{skip.app}: {skip.reason}" for skip in report.skipped], most)
    parts += _folded("Unjudged (deleted apps not rendered at the base)", _reasons(report), most)
    parts.append(MARKER)
    return "\n".join(parts) + "\n"


def _reasons(report: Report) -> list[str]:
    return [f"{skip.app}: {skip.reason}" for skip in report.unjudged]


def _folded(title: str, items: Sequence[str], most: int) -> list[str]:
    """A `<details>` list (GitHub needs the blank lines around its markdown)."""
    if not items:
        return []
    lines = [f"<details><summary>{title} ({len(items)})</summary>", ""]
    lines += [f"- {cell(text)}" for text in items[:most]]
    if len(items) > most:
        lines.append(f"- {len(items) - most} more: see the JSON report (`--report json=FILE`).")
    return [*lines, "", "</details>", ""]


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
