"""An entry's reason in words: what the model started from, what each app will do, and the verdict.

The words come from the case and the verdict, never from a verdict of their own: a reason says what the
search found (no order deletes it; which order deletes it; which app's tracking id some order leaves on it)
and the facts it rested on.
"""

from __future__ import annotations

from collections.abc import Sequence

from cmp.check.analysis.lifecycle.model import Actor, Case, Guard, Start
from cmp.check.analysis.lifecycle.search import MAX_EVENTS, Verdict


def reason(case: Case, verdict: Verdict, removal: str, before: Sequence[str]) -> str:
    """The reason of an entry; `removal` is the `kubectl delete` that removes the object on purpose and
    `before` the apps emitting it at the base revision."""
    return "; ".join([*_facts(case, before), _verdict(case, verdict, removal)])


def _facts(case: Case, before: Sequence[str]) -> list[str]:
    facts = [_start(case.starts)]
    for actor in case.actors:
        if actor.removed:
            facts.append(_removed(actor))
        elif not actor.emits and actor.name in before:
            facts.append(f"{actor.name} no longer emits it")
    if case.emitters:
        names = sorted(case.emitters)
        facts.append(f"{_names(names)} {_verb(names, 'emits')} it now")
    return facts


def _start(starts: Sequence[Start]) -> str:
    if len(starts) > 1:
        trackers = [start.tracker or "" for start in starts]
        every = "both" if len(trackers) == 2 else "all"
        return f"its tracking id names {_names(trackers, 'or')}, which {every} emitted it at the base revision"
    start = starts[0]
    if not start.exists:
        return "no app emitted it at the base revision"
    if start.said == "the live object":
        tracked = f"names {start.tracker}" if start.tracker else "is none of this Argo CD's"
        return f"the live object's tracking id {tracked}, and it {_guard(start.guard)}"
    tracked = f"its tracking id names {start.tracker}" if start.tracker else "it carries no tracking id"
    return f"{tracked}, and {start.said} {_guard(start.guard)}"


def _guard(guard: Guard) -> str:
    carried = [f"Prune={guard.prune}"] if guard.prune else []
    carried += [f"Delete={guard.delete}"] if guard.delete else []
    carried += ["helm.sh/resource-policy: keep"] if guard.keep else []
    return f"carries {', '.join(carried)}" if carried else "has no Prune= or Delete= of its own"


def _removed(actor: Actor) -> str:
    if not actor.syncs:
        said = (
            f"{actor.name} is gone from Git, and its Application, whose last spec does not render at the new "
            "revision (so it cannot sync), stays"
        )
    elif actor.guessed:
        said = (
            f"{actor.name} is gone from Git, but its Application keeps syncing its last spec, which check cannot "
            "render at the new revision (the model tries it both emitting it and not)"
        )
    else:
        emits = "still emits" if actor.emits else "no longer emits"
        said = (
            f"{actor.name} is gone from Git, but its Application keeps syncing its last spec, which {emits} it at the "
            "new revision"
        )
    if not actor.deleter:
        return f"{said}; nothing deletes it: {actor.never}"
    finalizer = "with the resources finalizer" if actor.cascade else "without the resources finalizer"
    return f"{said}, until it is deleted ({actor.deleter}), {finalizer}"


def _verdict(case: Case, verdict: Verdict, removal: str) -> str:
    count = f"{verdict.events} event{'' if verdict.events == 1 else 's'}"
    if verdict.too_large:
        return (
            f"the change has {count} for this object, more than check explores ({MAX_EVENTS}): it is not judged; "
            "protect it before the change merges, or split the change"
        )
    if not verdict.safe:
        if any(done.deletes for done in verdict.trace):
            return f"an order of the change's {count} deletes it (the trace is the shortest)"
        return (
            f"no order of the change's {count} deletes it, but one ends with its tracking id naming "
            f"{verdict.kept_by or 'no app'}, which does not emit it (the trace): the apps that emit it stay OutOfSync"
        )
    said = f"no order of the change's {count} deletes it"
    if not case.emitters:
        said += f": it stays in the cluster, emitted by no app; to delete it on purpose: {removal}"
    elif case.crd:
        said += " (Argo CD never stamps a CRD with a tracking id)"
    else:
        said += f", and every order ends with its tracking id naming {_names(sorted(case.emitters), 'or')}"
    return "; ".join([said, *verdict.held, *verdict.overrides])


def _names(apps: Sequence[str], last: str = "and") -> str:
    if len(apps) < 2:
        return ", ".join(apps)
    return f"{', '.join(apps[:-1])} {last} {apps[-1]}"


def _verb(apps: Sequence[str], verb: str) -> str:
    """`verb` agreeing with one app or several (`emits` -> `emit`)."""
    return verb if len(apps) == 1 else verb[:-1]
