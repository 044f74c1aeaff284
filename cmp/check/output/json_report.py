"""`check`'s report as JSON: DESIGN.md's fixed shape, for tools."""

from __future__ import annotations

import json
from typing import Any

from cmp.check.analysis.conflicts import Report
from cmp.check.analysis.identity import known_conflict, known_entry, known_warning


def to_json(report: Report) -> str:
    """One JSON object; `prune_risks` only when live objects were given; `"known": true` on each finding
    the baseline holds."""
    payload: dict[str, Any] = {
        "applications": [
            {
                "name": a.name,
                "cluster": a.cluster,
                "namespace": a.namespace,
                "renderer": a.renderer,
                "resources": a.resources,
                **({"parent": a.parent} if a.parent is not None else {}),
                **({"policy": a.policy} if report.governed else {}),
            }
            for a in report.applications
        ],
        "conflicts": [
            {**c.id._asdict(), "apps": list(c.apps), **_known(known_conflict(report, c))} for c in report.conflicts
        ],
        "warnings": [
            {
                "app": w.app,
                "kind": w.id.kind,
                "name": w.id.name,
                "message": w.message,
                "code": w.code,
                "cluster": w.id.cluster,
                "group": w.id.group,
                "namespace": w.id.namespace,
                **_known(known_warning(report, w)),
            }
            for w in report.warnings
        ],
        "skipped": [{"app": s.app, "reason": s.reason} for s in report.skipped],
    }
    if report.governed:  # --policy: which entry decided each object several apps render
        payload["policy_decisions"] = [
            {
                **d.id._asdict(),
                "emitted_by": list(d.emitted_by),
                "entries": [{"entry": entry, "at": at, "apps": list(apps)} for entry, at, apps in d.entries],
            }
            for d in report.policy_decisions
        ]
    if report.prune_risks is not None:
        payload["prune_risks"] = [{**r.id._asdict(), "app": r.app, "fix": r.fix} for r in report.prune_risks]
    if report.lifecycle is not None:
        payload["lifecycle"] = [
            {
                **e.id._asdict(),
                "event": e.event,
                "before": list(e.before),
                "after": list(e.after),
                "safe": e.safe,
                "reason": e.reason,
                "fix": e.fix,
                "trace": [{"app": step.app, "action": step.action, "effect": step.effect} for step in e.trace],
                **_known(known_entry(report, e)),
            }
            for e in report.lifecycle
        ]
        payload["unjudged"] = [{"app": s.app, "reason": s.reason} for s in report.unjudged]
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _known(known: bool) -> dict[str, bool]:
    return {"known": True} if known else {}
