"""`check`'s report as one self-contained HTML page: the ownership map a person decides from.

The page is built from the analysis with a small element builder rather than a template engine: an
element's text and attribute values are escaped by construction (only what the builder itself made is
passed through), so an app name, a label value or a reason from a repository can never become markup,
whatever section it lands in. A template engine (Jinja2) would do the same with autoescape on, at the
price of a runtime dependency and a second language for a page of six sections. The page loads nothing:
its style is inline, its Content-Security-Policy forbids every fetch, and it reads without JavaScript (the
filter box is the one inline script).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence

from cmp.check.analysis.conflicts import AppRow, Report
from cmp.check.analysis.identity import failed_renders, is_known, new_failures
from cmp.check.analysis.ownership_map import EMITS, RENAMES, STRIPS, Cell, Shared
from cmp.check.output.text_report import summary, trace_lines

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
.verdict{font-size:16px;padding:10px 14px;border-radius:6px;display:inline-block}
.fails{background:#ffebe9;border:1px solid #cf222e}.passes{background:#dafbe1;border:1px solid #1a7f37}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f6f8fa}.emits{background:#dafbe1}.strips{background:#f6f8fa;color:#57606a}
.renames{background:#ddf4ff}.conflict{background:#ff8182;color:#000;font-weight:600}
.unprotected{outline:2px dashed #bf8700;outline-offset:-3px}.known{color:#57606a;font-style:italic}
code{font:12px ui-monospace,monospace}ul.tree{list-style:none;padding-left:18px}ol{margin:4px 0}
input#filter{font-size:14px;padding:4px 8px;width:320px}.legend span{display:inline-block;padding:2px 8px;
margin-right:6px;border:1px solid #d0d7de}
"""
FILTER = """
document.getElementById('filter').addEventListener('input', function (event) {
  var wanted = event.target.value.toLowerCase();
  document.querySelectorAll('#ownership tbody tr').forEach(function (row) {
    row.hidden = wanted !== '' && row.textContent.toLowerCase().indexOf(wanted) < 0;
  });
});
"""


class Markup(str):
    """Text the builder made (already escaped): the only text passed through as it is."""


VOID = frozenset({"br", "meta", "input"})


def el(tag: str, attributes: Mapping[str, str] | None = None, *children: str | Markup | None) -> Markup:
    """`<tag attributes>children</tag>`: attribute values and plain-text children escaped."""
    attrs = "".join(f' {name}="{html.escape(value, quote=True)}"' for name, value in (attributes or {}).items())
    if tag in VOID:
        return Markup(f"<{tag}{attrs}>")
    inner = "".join(child if isinstance(child, Markup) else html.escape(child) for child in children if child)
    return Markup(f"<{tag}{attrs}>{inner}</{tag}>")


def many(items: Iterable[Markup]) -> Markup:
    return Markup("".join(items))


def to_html(report: Report, *, raw: bool = False) -> str:
    """The page, one file."""
    fails = new_failures(report) > 0 or bool(failed_renders(report))
    counts = summary(report, False).partition(": ")[2]
    mode = " (--raw: chartshare.yaml rules ignored)" if raw else ""
    verdict = f"chartshare check {'fails' if fails else 'passes'}{mode}"
    body = many(
        [
            el("h1", {}, "chartshare check"),
            el("p", {"class": f"verdict {'fails' if fails else 'passes'}", "id": "verdict"}, f"{verdict}: {counts}"),
            _ownership(report),
            _tree(report.applications),
            _lifecycle(report),
            _warnings(report),
            _skipped(report),
            el("script", {}, Markup(FILTER)),
        ]
    )
    head = many(
        [
            Markup('<meta charset="utf-8">'),
            Markup(f'<meta http-equiv="Content-Security-Policy" content="{html.escape(CSP)}">'),
            el("title", {}, "chartshare check"),
            el("style", {}, Markup(STYLE)),
        ]
    )
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, el("head", {}, head), el("body", {}, body)) + "\n"


def _ownership(report: Report) -> Markup:
    rows = report.ownership
    apps = sorted({cell.app for row in rows for cell in row.cells})
    legend = el(
        "p",
        {"class": "legend"},
        el("span", {"class": "emits"}, "emits (owner: decided by a rule)"),
        el("span", {"class": "strips"}, "strips"),
        el("span", {"class": "renames"}, "renames to its own copy"),
        el("span", {"class": "conflict"}, "conflict"),
        el("span", {"class": "unprotected"}, "emitted without Prune=false"),
    )
    if not rows:
        return many([el("h2", {}, "Ownership map"), el("p", {}, "No object is rendered by two or more apps.")])
    head = el("thead", {}, el("tr", {}, el("th", {}, "object"), *(el("th", {"class": "app"}, app) for app in apps)))
    body = el("tbody", {}, *(_map_row(report, row, apps) for row in rows))
    return many(
        [
            el("h2", {}, f"Ownership map ({_count(len(rows), 'shared object')}, {_count(len(apps), 'app')})"),
            el("p", {}, "Every object two or more apps render (rows), and what each app does with it (columns)."),
            legend,
            el("p", {}, el("input", {"id": "filter", "type": "search", "placeholder": "filter objects and apps"})),
            el("table", {"id": "ownership"}, head, body),
        ]
    )


def _map_row(report: Report, row: Shared, apps: Sequence[str]) -> Markup:
    cells = {cell.app: cell for cell in row.cells}
    known = row.conflict and any(is_known(report, c) for c in report.conflicts if c.id == row.id)
    label = el(
        "th",
        {"class": "object"},
        el("code", {}, str(row.id)),
        el("br", {}),
        el("small", {}, row.id.cluster),
        el("span", {"class": "known"}, " known (in the baseline)") if known else None,
    )
    return el(
        "tr",
        {"class": "shared conflict" if row.conflict else "shared"},
        label,
        *(_map_cell(cells.get(app), row.conflict) for app in apps),
    )


def _map_cell(cell: Cell | None, conflict: bool) -> Markup:
    if cell is None:
        return el("td", {"class": "none"}, "")
    classes = [cell.action]
    if cell.action == EMITS:
        text = "emits" + (" (owner)" if cell.rule or cell.policy else "")
        text += ", protected" if cell.protected else ", not protected"
        if conflict:
            classes = ["conflict"]
            text = f"conflict: {text}"
        if not cell.protected:
            classes.append("unprotected")
    elif cell.action == RENAMES:
        text = f"renames to {cell.renamed_to}"
    else:
        text = STRIPS
    attributes = {"class": " ".join(classes)}
    if cell.policy:  # the fleet policy entry beside the object: the platform team decided this cell
        attributes["title"] = f"decided by the fleet policy, {cell.policy_at}: {cell.policy}"
        short = f"policy {cell.policy} ({cell.policy_at.rpartition('/')[2]})"
        return el("td", attributes, text, el("br", {}), el("small", {}, short))
    if not cell.rule:
        return el("td", attributes, text)
    attributes["title"] = f"decided by {cell.rule}"
    short = cell.rule.rpartition("/")[2]  # chartshare.yaml:12; the whole path in the title
    return el("td", attributes, text, el("br", {}), el("small", {}, short))


def _tree(applications: Sequence[AppRow]) -> Markup:
    children: dict[str | None, list[AppRow]] = {}
    names = {row.name for row in applications}
    for row in applications:
        parent = row.parent if row.parent in names else None
        children.setdefault(parent, []).append(row)

    def branch(parent: str | None, seen: frozenset[str]) -> Markup:
        items = []
        for row in children.get(parent, []):
            if row.name in seen:
                continue
            label = el("span", {"class": "app"}, row.name)
            detail = f" ({row.renderer}, {row.resources} resources, {row.cluster} / {row.namespace or '-'})"
            below = branch(row.name, seen | {row.name}) if row.name in children else None
            items.append(el("li", {}, label, detail, below))
        return el("ul", {"class": "tree"}, *items)

    return many(
        [el("h2", {}, f"Applications ({len(applications)}), as App of Apps create them"), branch(None, frozenset())]
    )


def _lifecycle(report: Report) -> Markup:
    if report.lifecycle is None:
        return Markup("")
    unsafe = [entry for entry in report.lifecycle if not entry.safe]
    items = []
    for entry in unsafe:
        moved = f"{', '.join(entry.before) or '(none)'} → {', '.join(entry.after) or '(none)'}"
        items.append(
            el(
                "li",
                {"class": "unsafe"},
                el("code", {}, str(entry.id)),
                f" {entry.event} ({moved}) on {entry.id.cluster}",
                el("span", {"class": "known"}, " known (in the baseline)") if is_known(report, entry) else None,
                el("p", {}, entry.reason),
                el("ol", {"class": "trace"}, *(el("li", {}, line.partition(". ")[2]) for line in trace_lines(entry))),
                el("p", {}, f"fix: {entry.fix}") if entry.fix else None,
            )
        )
    listed = len(report.lifecycle)
    title = f"Unsafe lifecycle entries ({len(unsafe)} of {listed} {'entry' if listed == 1 else 'entries'})"
    empty = el("p", {}, "Every object whose emitting apps change stays safe.")
    return many([el("h2", {}, title), el("ul", {"id": "lifecycle"}, *items) if items else empty])


def _warnings(report: Report) -> Markup:
    if not report.warnings:
        return Markup("")
    rows = [
        el(
            "tr",
            {"class": "warning"},
            el("td", {}, warning.app),
            el("td", {}, el("code", {}, warning.code)),
            el(
                "td",
                {},
                el("code", {}, str(warning.id)),
                el("span", {"class": "known"}, " known") if is_known(report, warning) else None,
            ),
            el("td", {}, warning.message.splitlines()[0]),
        )
        for warning in report.warnings
    ]
    head = el("tr", {}, el("th", {}, "app"), el("th", {}, "code"), el("th", {}, "object"), el("th", {}, "warning"))
    return many(
        [
            el("h2", {}, f"Warnings ({len(report.warnings)})"),
            el("table", {"id": "warnings"}, el("thead", {}, head), el("tbody", {}, *rows)),
        ]
    )


def _skipped(report: Report) -> Markup:
    if not report.skipped and not report.unjudged:
        return Markup("")
    items = [
        el("li", {"class": "skipped"}, el("span", {"class": "app"}, skip.app), f": {skip.reason}")
        for skip in report.skipped
    ]
    unjudged = [
        el("li", {"class": "unjudged"}, el("span", {"class": "app"}, skip.app), f": {skip.reason}")
        for skip in report.unjudged
    ]
    apps = len({skip.app for skip in report.skipped})
    parts = [el("h2", {}, f"Skipped apps ({apps})"), el("ul", {"id": "skipped"}, *items)]
    if unjudged:
        parts += [el("h2", {}, f"Unjudged ({len(unjudged)})"), el("ul", {"id": "unjudged"}, *unjudged)]
    return many(parts)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
