"""`check`'s report as text, for people and CI logs.

Text groups conflicts by cluster, and under each names the apps claiming the object and the
chartshare.yaml rule that would end the fight, so the report says what to do, not only what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby

from cmp.check.analysis.conflicts import AppRow, Conflict, Report
from cmp.check.analysis.findings import Finding, match_flow, scalar
from cmp.check.analysis.identity import is_known, known_conflict, known_entry, known_warning
from cmp.check.analysis.lifecycle import Entry
from cmp.check.fleet.applications import ARGO_GROUP
from cmp.check.sources.plan import PLUGIN_NAME

PROGRESS_MIN_JOBS = 8  # below this a progress bar only flickers
KNOWN = "  (known: in the baseline)"


def progress_wanted(is_tty: bool, json_output: bool, environ: Mapping[str, str], jobs: int) -> bool:
    """A progress bar only for a person at a terminal: never in JSON mode, in CI logs, or for a few apps."""
    in_ci = environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return is_tty and not json_output and not in_ci and jobs >= PROGRESS_MIN_JOBS


def to_text(report: Report, *, raw: bool = False) -> str:
    lines: list[str] = []
    if report.applications:
        lines += ["APPLICATIONS", *_table(_application_rows(report.applications, report.governed)), ""]
    if report.conflicts:
        lines += _conflict_lines(report, raw)
    if report.policy_decisions:
        lines += _policy_lines(report)
    if report.warnings:
        lines += ["WARNINGS", *warning_lines(report.warnings, report), ""]
    if report.skipped:
        lines += ["SKIPPED", *(f"  {skip.app}: {skip.reason}" for skip in report.skipped), ""]
    if report.prune_risks:
        lines.append("PRUNE RISKS (live objects an app would delete on its next sync with prune)")
        for cluster, risks in groupby(report.prune_risks, key=lambda risk: risk.id.cluster):
            lines.append(f"cluster {cluster}")
            for risk in risks:
                key = risk.id
                what = f"{key.kind} {key.namespace}/{key.name}" if key.namespace else f"{key.kind} {key.name}"
                lines.append(f"  app {risk.app} would PRUNE {what} on its next sync with prune; make it safe first:")
                lines.append(f"    {risk.fix}")
        lines.append("")
    if report.lifecycle:
        lines.append("LIFECYCLE (what the change does to each object whose emitting apps change)")
        for cluster, entries in groupby(report.lifecycle, key=lambda entry: entry.id.cluster):
            lines.append(f"cluster {cluster}")
            for entry in entries:
                lines.append(f"  {lifecycle_head(entry)}{KNOWN if known_entry(report, entry) else ''}")
                lines.append(f"    {entry.reason}")
                lines += [f"    {line}" for line in trace_lines(entry)]
                if entry.fix:
                    lines.append(f"    fix: {entry.fix}")
        lines.append("")
    if report.unjudged:
        lines.append("UNJUDGED (apps the change deletes that check did not render at the base revision)")
        lines += [f"  {skip.app}: {skip.reason}" for skip in report.unjudged]
        lines.append("")
    lines.append(summary(report, raw))
    return "\n".join(lines) + "\n"


def warning_lines(warnings: Sequence[Finding], report: Report | None = None) -> list[str]:
    """One entry per warning, except that warnings of one code for one app that read together (the same
    headline and advice) share one entry: their objects listed, the advice said once. With the report, a
    warning its baseline holds is marked known (and reads apart from new ones)."""
    entries: dict[object, list[Finding]] = {}
    for warning in warnings:
        together = warning.together
        known = report is not None and known_warning(report, warning)
        key = (warning.app, warning.code, together.headline, together.advice, known) if together else warning
        entries.setdefault(key, []).append(warning)
    lines: list[str] = []
    for members in entries.values():
        first = members[0]
        mark = KNOWN if report is not None and known_warning(report, first) else ""
        if len(members) == 1 or first.together is None:
            lines.append(f"  {first.app}: {first.id.kind} {first.id.name} [{first.code}]{mark}")
            lines += [f"    {line}" for line in first.message.splitlines()]
            continue
        details = [member.together.detail if member.together else "" for member in members]
        shared = details[0] if len(set(details)) == 1 and details[0] else ""  # said once, in the headline
        lines.append(f"  {first.app}: {len(members)} {first.together.headline}{f' ({shared})' if shared else ''}")
        lines[-1] += f" [{first.code}]{mark}"
        for member, detail in zip(members, details, strict=True):
            lines.append(f"    - {member.id}{f': {detail}' if detail and not shared else ''}")
        lines += [f"    {line}" for line in first.together.advice.splitlines()]
    return lines


def _application_rows(applications: Iterable[AppRow], governed: bool = False) -> list[tuple[str, ...]]:
    """The table of apps; a PARENT column (the app that renders it) once any app was rendered by another; a
    POLICY column (the fleet policy entry for its project) under --policy."""
    listed = list(applications)
    parents = any(a.parent is not None for a in listed)
    head = ("NAME", "CLUSTER", "NAMESPACE", "RENDERER", "RESOURCES", *(("PARENT",) * parents))
    rows: list[tuple[str, ...]] = [(*head, *(("POLICY",) * governed))]
    for a in listed:
        cells = (a.name, a.cluster, a.namespace or "-", a.renderer, str(a.resources), *((a.parent or "-",) * parents))
        rows.append((*cells, *((a.policy or "-",) * governed)))
    return rows


def _policy_lines(report: Report) -> list[str]:
    """Each object several apps render that the fleet policy decided: who emits it, and beside it each
    policy entry that decided, with the apps it decided for."""
    lines = ["POLICY (objects several apps render, decided by the fleet policy)"]
    for cluster, decisions in groupby(report.policy_decisions, key=lambda decision: decision.id.cluster):
        lines.append(f"cluster {cluster}")
        for decision in decisions:
            lines.append(f"  {decision.id}  emitted by {', '.join(decision.emitted_by) or '(none)'}")
            lines += [f"    {entry} ({at}): {', '.join(apps)}" for entry, at, apps in decision.entries]
    lines.append("")
    return lines


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def _conflict_lines(report: Report, raw: bool) -> list[str]:
    renderers = {row.name: row.renderer for row in report.applications}
    lines = ["CONFLICTS (objects several apps would track: each sync takes them from the others)"]
    for cluster, conflicts in groupby(report.conflicts, key=lambda conflict: conflict.id.cluster):
        lines.append(f"cluster {cluster}")
        rows: list[tuple[str, ...]] = [("RESOURCE", "CLAIMED BY")]
        group = list(conflicts)
        rows += [(str(conflict.id), ", ".join(conflict.apps)) for conflict in group]
        header, *body = _table(rows)
        lines.append(header)
        for conflict, row in zip(group, body, strict=True):
            lines.append(f"{row}{KNOWN if known_conflict(report, conflict) else ''}")
            lines += [f"      {line}" for line in suggestion(conflict, renderers, raw)]
    lines.append("")
    return lines


def suggestion(conflict: Conflict, renderers: dict[str, str], raw: bool = False) -> list[str]:
    """The chartshare.yaml rule giving the object to one app, and what else the apps need for it to apply."""
    flow = match_flow(conflict.id, name=True)
    if (conflict.id.group, conflict.id.kind) == (ARGO_GROUP, "Application"):
        return _rename_children(conflict, flow, renderers, raw)
    unruled = [app for app in conflict.apps if renderers.get(app) in ("kustomize", "directory")]
    if len(unruled) == len(conflict.apps):
        return [
            f"({', '.join(unruled)} render kustomize or plain manifests, which no rule reaches: keep the object in one)"
        ]
    owner = unruled[0] if len(unruled) == 1 else conflict.apps[0]  # the one app no rule can make strip it
    lines = [
        "suggested rule, in the chartshare.yaml of each app above:",
        f"  - match: {flow}",
        f"    owner: {scalar(owner)}   # or whichever one app should keep it",
    ]
    helm_apps = [app for app in conflict.apps if renderers.get(app) == "helm"]
    if helm_apps and not raw:
        lines.append(
            f"({', '.join(helm_apps)} {'renders' if len(helm_apps) == 1 else 'render'} with plain helm: "
            f"use the chartshare plugin, source.plugin.name: {PLUGIN_NAME}, for the rule to apply)"
        )
    if len(unruled) == 1:
        lines.append(f"({owner} renders {renderers[owner]} manifests, which no rule reaches: it keeps the object)")
    elif unruled:
        lines.append(
            f"({', '.join(unruled)} render kustomize or plain manifests, which no rule reaches: remove the object "
            "from all but one of them)"
        )
    return lines


def _rename_children(conflict: Conflict, flow: str, renderers: dict[str, str], raw: bool) -> list[str]:
    """An Application written by two parents (or files): each parent renames its own, as no owner can
    keep one name for two definitions."""
    files = [place for place in conflict.apps if place.startswith("file:")]
    parents = [place for place in conflict.apps if not place.startswith("file:")]
    lines: list[str] = []
    if parents:
        lines += [
            "suggested rule, in the chartshare.yaml of each parent above:",
            f"  - match: {flow}",
            "    others: rename",
            '    renameTo: "{app}-{name}"',
        ]
    plain = [app for app in parents if renderers.get(app, "chartshare") != "chartshare"]
    if plain and not raw:
        lines.append(
            f"({', '.join(plain)} {'renders' if len(plain) == 1 else 'render'} without chartshare: use the chartshare "
            f"plugin, source.plugin.name: {PLUGIN_NAME}, for the rule to apply, or rename the Application there)"
        )
    if files:
        lines.append(
            f"({', '.join(files)}: rename the Application in {'that file' if len(files) == 1 else 'those files'})"
        )
    return lines


def summary(report: Report, raw: bool) -> str:
    def count(number: int, noun: str) -> str:
        return f"{number} {noun}{'' if number == 1 else 's'}"

    parts = [
        count(len(report.applications), "application"),
        count(len(report.conflicts), "conflict"),
        count(len(report.warnings), "warning"),
        f"{len({skip.app for skip in report.skipped})} skipped",
    ]
    if report.prune_risks is not None:
        parts.append(count(len(report.prune_risks), "prune risk"))
    if report.lifecycle is not None:
        unsafe = sum(1 for entry in report.lifecycle if not entry.safe)
        listed = len(report.lifecycle)
        parts.append(f"{listed} lifecycle {'entry' if listed == 1 else 'entries'} ({unsafe} unsafe)")
        if report.unjudged:
            parts.append(f"{len(report.unjudged)} unjudged")
    if report.known:
        found: list[Conflict | Entry | Finding] = [*report.conflicts, *report.warnings]
        found += [entry for entry in report.lifecycle or () if not entry.safe]
        parts.append(f"{sum(1 for finding in found if is_known(report, finding))} known (in the baseline)")
    mode = " (--raw: chartshare.yaml rules ignored)" if raw else ""
    return f"chartshare check{mode}: {', '.join(parts)}"


def trace_lines(entry: Entry) -> list[str]:
    """The order that breaks an unsafe entry, one numbered step per line."""
    return [f"{number}. {step.app} {step.effect}" for number, step in enumerate(entry.trace, 1)]


def lifecycle_head(entry: Entry) -> str:
    moved = f"{', '.join(entry.before) or '(none)'} -> {', '.join(entry.after) or '(none)'}"
    return f"{entry.id} {entry.event} ({moved}): {'safe' if entry.safe else 'UNSAFE'}"
