"""The stderr report of one app: the summary line, a line per stripped or changed resource, the notices."""

from __future__ import annotations

from collections.abc import Sequence

from cmp.manifests import searchable, surely_lacks
from cmp.model import Decision
from cmp.ownership.outcome import Applied, Outcome
from cmp.pointers import pointer_parts


def describe(applied: Applied) -> str | None:
    """One stderr line for a resource this app changed beyond protection (None otherwise): what was done,
    first naming the object, then each further step."""
    decision = applied.decision
    subject = applied.resource.id
    steps: list[tuple[str, str]] = []  # (the step naming the object, the same step after a first one)
    if applied.renamed_from is not None:
        old = subject._replace(name=applied.renamed_from)
        text = f"renamed {old} to {subject.name} ({decision.origin}: {decision.reason})"
        steps.append((text, text))
    elif applied.kept_name:
        text = f"kept the name of {subject}: it already has the form renameTo gives ({decision.origin})"
        steps.append((text, text))
    if applied.fixed:
        fixes = ", ".join(f"{fix.pointer} {fix.old} -> {fix.new}" for fix in applied.fixed)
        steps.append((f"fixed {subject}: {fixes}", f"fixed {fixes}"))
    if applied.patched:
        count = f"{applied.patched} operation{'s' if applied.patched > 1 else ''}"
        steps.append((f"patched {subject} by {decision.origin} ({count})", f"patched by {decision.origin} ({count})"))
    if not steps:
        return None
    if applied.protected:
        steps.append(("", "protected"))
    return "; ".join([steps[0][0]] + [later for _, later in steps[1:]])


def aggregation_notices(emitted: Sequence[Applied]) -> list[str]:
    """ClusterRole aggregationRule selectors pick roles by label, so a rename leaves them as they are; say so
    wherever this app renamed a ClusterRole such a selector picks, or renamed the aggregating role itself."""
    notices: list[str] = []
    if all(applied.renamed_from is None for applied in emitted):
        return notices
    from cmp.ownership import reference_fields as references

    for row in references.SELECTOR_REFERENCES:
        group, kind = row.target
        renamed_targets = [
            applied.resource
            for applied in emitted
            if applied.renamed_from is not None and (applied.resource.group, applied.resource.kind) == (group, kind)
        ]
        if not renamed_targets:
            continue
        fields = searchable({pointer_parts(path)[0] for _, _, path in row.sources})
        for applied in emitted:
            resource = applied.resource
            if not references.reads(row, resource.group, resource.kind) or surely_lacks(resource, fields):
                continue
            found = references.selectors(resource.obj, row, resource.group, resource.kind)
            if not found:
                continue
            picked = sorted(
                {t.name for t in renamed_targets for selector in found if references.selects(selector, t.labels)}
            )
            if picked:
                notices.append(
                    f"notice: {resource.id} picks {kind}s by label ({row.path}), and renames leave selectors as "
                    f"they are: it picks the renamed {', '.join(picked)} and every other app's copies with the same "
                    "labels; if each app's copy should pick only its own, give the copies an app-specific label "
                    "in the chart and select on it"
                )
            elif applied.renamed_from is not None:
                notices.append(
                    f"notice: {resource.id} picks {kind}s by label ({row.path}); renames leave selectors as they "
                    "are, so every app's copy picks the same objects"
                )
    return notices


def summary(outcome: Outcome) -> list[str]:
    """The stderr report: one summary line, then one line per stripped or changed resource."""
    protected = [a for a in outcome.emitted if a.protected]
    changed = [a for a in outcome.emitted if a.resource.changed and not a.protected]
    lines = [
        f"{outcome.app.name}: {outcome.rendered} rendered, {len(outcome.emitted)} emitted, "
        f"{len(outcome.stripped)} stripped, {len(protected)} protected, {len(changed)} changed"
    ]
    lines += [f"  stripped {a.resource.id} ({a.decision.origin}: {a.decision.reason})" for a in outcome.stripped]
    lines += [
        f"  protected {a.resource.id} ({a.decision.origin}: {a.decision.reason}{_by_policy(a.decision)})"
        for a in protected
        if describe(a) is None
    ]
    for applied in outcome.emitted:  # renamed, fixed, patched: one line each, in helm's order
        line = describe(applied)
        if line is None and applied.resource.changed and not applied.protected:
            line = f"changed {applied.resource.id} ({applied.decision.origin}: {applied.decision.reason})"
        if line is not None:
            lines.append(f"  {line}")
    return lines + outcome.notices


def _by_policy(decision: Decision) -> str:
    """`; protected by policy projects[0].protect[1]` where the fleet policy's `protect` (not the rule that
    decided the object) protected it."""
    ref = decision.policy
    return f"; protected by policy {ref.place}" if ref is not None and decision.rule is not None else ""
