"""The pure analysis of a fleet's renders: conflicts, warnings and (given live objects) prune risks.

A conflict is one object on one destination cluster that two or more apps emit: each sync takes its
tracking-id from the others. CRDs are the exception, since Argo CD never stamps them: identical copies
do not fight, different ones do. The warnings come from shared.py (objects several apps render) and
findings.py (traps in what a chart makes), the prune risks from live.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cmp.check.analysis import findings, live, shared
from cmp.check.analysis.claims import RENDERERS, AppClaims, ByObject, by_object
from cmp.check.analysis.findings import Finding, canonical, is_crd
from cmp.check.analysis.ignored import IgnoreRule
from cmp.check.analysis.lifecycle import Entry
from cmp.check.analysis.live import ANNOTATION_TRACKING, PruneRisk, Tracking
from cmp.check.analysis.ownership_map import Shared, ownership_map
from cmp.check.fleet.applications import Contest, Skip
from cmp.model import ClusterResourceId


@dataclass(frozen=True, slots=True)
class AppRow:
    name: str
    cluster: str
    namespace: str
    renderer: str
    resources: int
    parent: str | None = None  # the app that renders it (App of Apps)
    located: tuple[str, int] = ("", 0)  # the file and line of the metadata.name that defines it
    policy: str | None = None  # the fleet policy entry for its project (`projects[N]`); None: none applies


@dataclass(frozen=True, slots=True)
class Conflict:
    """An object several apps emit on one cluster, and those apps (sorted)."""

    id: ClusterResourceId
    apps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """An object several apps render that a fleet policy entry decided for at least one of them."""

    id: ClusterResourceId
    emitted_by: tuple[str, ...]  # sorted
    entries: tuple[tuple[str, str, tuple[str, ...]], ...]  # (entry, its file and line, the apps it decided for)


@dataclass(frozen=True, slots=True)
class Report:
    applications: tuple[AppRow, ...]
    conflicts: tuple[Conflict, ...]
    warnings: tuple[Finding, ...]
    skipped: tuple[Skip, ...]
    prune_risks: tuple[PruneRisk, ...] | None  # None: no --live given
    lifecycle: tuple[Entry, ...] | None = None  # None: no --base given
    unjudged: tuple[Skip, ...] = ()  # with --base: apps the change deletes that were not rendered at the base
    known: frozenset[tuple[Any, ...]] = frozenset()  # with --baseline: the identities (identity.py) it holds
    ownership: tuple[Shared, ...] = ()  # the ownership map: every object two or more apps render
    governed: bool = False  # rendered under a fleet policy (--policy): the reports say what it decided
    policy_decisions: tuple[PolicyDecision, ...] = ()


def analyse(
    apps: Mapping[str, AppClaims],
    skipped: Sequence[Skip],
    live_objects: Sequence[Mapping[str, Any]] | None = None,
    tracking: Tracking = ANNOTATION_TRACKING,
    contested: Iterable[Contest] = (),
    ignored: Sequence[IgnoreRule] = (),
) -> Report:
    """Claims of every app -> the report; `contested` are names with two definitions (conflicts on their
    Application objects, whoever renders them), `ignored` argocd-cm's ignoreDifferences."""
    return judge(apps, own_warnings(apps.values(), ignored), skipped, live_objects, tracking, contested)


def own_warnings(apps: Iterable[AppClaims], ignored: Sequence[IgnoreRule] = ()) -> list[Finding]:
    """The warnings each app earns from its own claims alone: a shard works them out for its apps.
    `ignored`: argocd-cm's ignoreDifferences, which quiet the warnings about a field as the app's own do."""
    listed = list(apps)
    return [
        *findings.unstable_warnings(listed, ignored),
        *findings.unmatched_target_warnings(listed),
        *findings.empty_root_warnings(listed),
        *findings.policy_warnings(listed),
        *findings.replica_warnings(listed, ignored),
        *findings.ca_bundle_warnings(listed),
    ]


def judge(
    apps: Mapping[str, AppClaims],
    own: Iterable[Finding],
    skipped: Sequence[Skip],
    live_objects: Sequence[Mapping[str, Any]] | None = None,
    tracking: Tracking = ANNOTATION_TRACKING,
    contested: Iterable[Contest] = (),
) -> Report:
    """Every app's claims and own warnings -> the report. Across apps, only the objects of `shared_ids`
    are read for their content; of the others, only who claims them."""
    emitters = by_object(apps.values(), emitted=True)
    renderers = by_object(apps.values(), emitted=False)
    warnings = [*shared.shared_warnings(renderers, emitters, apps), *own]
    risks: list[PruneRisk] | None = None
    if live_objects is not None:
        risks, handovers = live.prune_risks(live_objects, apps, emitters, tracking)
        warnings += handovers
    rows = sorted(
        (
            AppRow(
                r.app.name,
                r.app.cluster,
                r.app.namespace,
                next(renderer for renderer in RENDERERS if renderer in r.renderers),
                len(r.emitted),
                r.app.parent,
                r.app.located,
                r.policy,
            )
            for r in apps.values()
        ),
        key=lambda row: (row.name, row.cluster),
    )
    found = tuple(with_contests(conflicts(emitters), contested))
    governed = any(r.governed for r in apps.values())
    return Report(
        applications=tuple(rows),
        conflicts=found,
        warnings=tuple(sorted(set(warnings), key=_warning_order)),
        skipped=tuple(sorted(set(skipped), key=lambda s: (s.app, s.reason))),
        prune_risks=None if risks is None else tuple(sorted(risks, key=_risk_order)),
        ownership=ownership_map(apps.values(), {conflict.id for conflict in found}),
        governed=governed,
        policy_decisions=tuple(policy_decisions(renderers, emitters)) if governed else (),
    )


def shared_ids(apps: Iterable[AppClaims]) -> set[ClusterResourceId]:
    """The objects whose content the analysis across apps reads: those several apps render, and those no
    app emits (a Namespace's labels for managedNamespaceMetadata)."""
    listed = list(apps)
    emitted = by_object(listed, emitted=True)
    return {key for key, claims in by_object(listed, emitted=False).items() if len(claims) > 1 or key not in emitted}


def policy_decisions(renderers: ByObject, emitters: ByObject) -> Iterator[PolicyDecision]:
    """Each object several apps render that a policy entry decided (or protected) for one of them, with
    the entries and the apps each decided for."""
    for key in sorted(renderers):
        claims = renderers[key]
        if len(claims) < 2 or not any(claim.policy for claim in claims.values()):
            continue
        entries: dict[tuple[str, str], list[str]] = {}
        for app in sorted(claims):
            claim = claims[app]
            if claim.policy:
                entries.setdefault((claim.policy, claim.policy_at), []).append(app)
        listed = tuple((entry, at, tuple(apps)) for (entry, at), apps in sorted(entries.items()))
        yield PolicyDecision(key, tuple(sorted(emitters.get(key, {}))), listed)


def conflicts(emitters: ByObject) -> Iterator[Conflict]:
    for key in sorted(emitters):
        claims = emitters[key]
        if len(claims) < 2:
            continue
        if is_crd(key) and len({canonical(claim.obj) for claim in claims.values()}) == 1:
            continue  # Argo CD does not track CRDs: identical copies do not fight
        yield Conflict(key, apps=tuple(sorted(claims)))


def with_contests(found: Iterable[Conflict], contested: Iterable[Contest]) -> list[Conflict]:
    """The conflicts with each contested Application object: its places joined to the apps that emit it."""
    merged = {conflict.id: set(conflict.apps) for conflict in found}
    for contest in contested:
        merged.setdefault(contest.id, set()).update(contest.places)
    return [Conflict(key, tuple(sorted(apps))) for key, apps in sorted(merged.items()) if len(apps) > 1]


def _warning_order(warning: Finding) -> tuple[str, ...]:
    """A total order: warnings that tie on what a reader sorts by must not fall in hash order."""
    key = warning.id
    return (warning.app, key.kind, key.name, warning.message, warning.code, key.cluster, key.group, key.namespace)


def _risk_order(risk: PruneRisk) -> tuple[str, ...]:
    return (risk.id.cluster, risk.id.group, risk.id.kind, risk.id.name, risk.id.namespace, risk.app, risk.fix)
