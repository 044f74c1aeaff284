"""Rendering the plan's jobs, in worker processes: each source exactly as Argo CD would render it.

A chartshare source goes through `generate`'s own pipeline (so check sees what the sidecar would emit and
what its rules strip, and fails where generate would fail); a Helm source through the flags Argo CD's
Helm source passes; a kustomize source through `kustomize build` after Argo CD's edits; a directory
source through Argo CD's reading of its files. Each render comes back as claims. A chart that calls a
function whose output changes between renders (randAlphaNum, now, genCA...) is rendered a second time,
and the fields that differ are named: Argo CD would show them OutOfSync after every refresh.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cmp import manifests
from cmp.annotations import prune_safe
from cmp.cache.store import Store
from cmp.check.analysis.claims import TEMPLATE_CALLS, AppClaims, Claim, Unstable, mapping_at
from cmp.check.fleet.applications import RENDER_FAILED as RENDER_FAILED
from cmp.check.fleet.applications import Skip
from cmp.check.sources import cached, directory, jsonnet, kustomize, repo_server
from cmp.check.sources.plan import Job
from cmp.errors import ChartShareError, ParameterError
from cmp.helm import template
from cmp.helm.nondeterminism import uses_nondeterministic_functions
from cmp.inputs.config import Config
from cmp.inputs.options import options
from cmp.inputs.paths import confine_tree
from cmp.manifests import Resource
from cmp.model import ClusterResourceId
from cmp.ownership.decide import landing_namespace
from cmp.ownership.outcome import Applied
from cmp.ownership.rules import Ownership
from cmp.ownership.scope import ScopeTable, crd_scopes
from cmp.render.chart import chart_dir, load_ownership
from cmp.render.pipeline import render_loaded
from cmp.render.policy import policy_entry
from cmp.render.settings import settings as render_settings

# helm's words for a chart whose dependencies are missing although check completed what Chart.yaml
# declares (cmp/check/sources/dependencies.py): the declaration and what charts/ holds disagree.
MISSING_DEPENDENCIES = "missing in charts/ directory"
MISSING_DEPENDENCIES_HINT = (
    "; the chart's charts/ folder does not hold what Chart.yaml declares: run `helm dependency update` "
    "in the chart folder and commit Chart.yaml, Chart.lock and charts/ together"
)
MAX_DIFFERING_FIELDS = 5


@dataclass(frozen=True, slots=True)
class Rendered:
    """What one job produced: emitted and stripped claims, fields that change between runs, or an error;
    and why the render cache could not be used, if it could not."""

    job: Job
    emitted: tuple[Claim, ...] = ()
    stripped: tuple[Claim, ...] = ()
    unstable: tuple[Unstable, ...] = ()
    error: str | None = None
    notices: tuple[str, ...] = ()
    malformed: bool = False  # the error is the Application's own field (bad fleet input), not its chart's
    unmatched: tuple[str, ...] = ()  # post-render entries whose target matched nothing
    names_apps: bool = False  # an empty render of files that name Argo CD objects (an App of Apps root gone quiet)
    policy: str | None = None  # the fleet policy entry for the app's project (`projects[N]`), None: none


@dataclass(frozen=True, slots=True)
class Inputs:
    """What a job renders from, known before helm runs: the chart folder, the settings of the render (what
    the render cache keys on), its values files, and for a chartshare source its configuration and rules."""

    chart: Path
    settings: dict[str, object]
    values: tuple[Path, ...]
    config: Config | None = None
    ownership: Ownership | None = None
    invocation: template.HelmInvocation | None = None
    job_raw: bool = False  # --raw: chartshare.yaml and the policy left out


def render_all(
    jobs: Sequence[Job], workers: int, progress: Callable[[int, int], None] | None = None, store: Store | None = None
) -> list[Rendered]:
    """Every job, in job order: the ones whose renders `store` keeps come from it, the others are rendered, in
    parallel processes when there is more than one, and kept."""
    ordered: list[Rendered | None] = [reused(job, store) for job in jobs]
    missed = [position for position, found in enumerate(ordered) if found is None]
    done = len(jobs) - len(missed)
    if workers <= 1 or len(missed) <= 1:
        for position in missed:
            ordered[position] = render_job(jobs[position], store)
            done += 1
            if progress:
                progress(done, len(jobs))
        return [result for result in ordered if result is not None]
    pool = ProcessPoolExecutor(max_workers=min(workers, len(missed)), initializer=_leave_interrupts_to_the_parent)
    try:
        futures = {pool.submit(render_job, jobs[position], store): position for position in missed}
        for future in as_completed(futures):
            ordered[futures[future]] = future.result()
            done += 1
            if progress:
                progress(done, len(jobs))
    except BaseException:  # Ctrl-C, SIGTERM: the running renders are stopped, not waited for (45 s each)
        _stop_workers(pool)
        raise
    finally:  # drop the queued renders
        pool.shutdown(wait=True, cancel_futures=True)
    return [result for result in ordered if result is not None]


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL the pool's workers: the helm each one runs dies with it (its death signal, see
    cmp/helm/process.py), and the pool's shutdown finds them gone instead of waiting for their renders.
    (ProcessPoolExecutor has no public way to reach them before Python 3.14's kill_workers.)"""
    workers: dict[int, Any] = getattr(pool, "_processes", None) or {}
    for worker in list(workers.values()):
        with contextlib.suppress(OSError, ValueError):
            worker.kill()


def _leave_interrupts_to_the_parent() -> None:
    """Workers ignore Ctrl-C: the parent stops the pool and reports once, with no worker tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def default_workers() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has affinity
        return os.cpu_count() or 1


def reused(job: Job, store: Store | None) -> Rendered | None:
    """The job's render as the render cache keeps it, or None (a miss, or inputs that fail: the render
    then says what is wrong)."""
    if store is None or not store.on or job.renderer not in cached.KEYED or job.built is not None:
        return None
    try:
        inputs = inputs_of(job)
    except ChartShareError:
        return None
    fingerprint = cached.key(job, inputs.chart, inputs.settings)
    kept = store.get(fingerprint.key) if fingerprint is not None else None
    found = cached.claims(kept) if kept is not None else None
    if found is None:
        return None
    emitted, stripped, unstable, unmatched = found
    return Rendered(
        job, emitted, stripped, unstable, notices=tuple(store.notices), unmatched=unmatched, policy=entry_of(inputs)
    )


def render_job(job: Job, store: Store | None = None) -> Rendered:
    """Render one job, and keep its claims in `store` when it may; a ChartShareError becomes the job's
    error message, naming the app (and nothing is kept)."""
    try:
        inputs = inputs_of(job)
        found = None
        if store is not None and store.on and job.renderer in cached.KEYED and job.built is None:
            found = cached.key(job, inputs.chart, inputs.settings)
        unmatched: list[str] = []
        emitted, stripped = _render_once(job, inputs, unmatched)
        unstable: tuple[Unstable, ...] = ()
        nondeterministic = job.renderer in cached.KEYED and (
            found.nondeterministic
            if found is not None
            else uses_nondeterministic_functions(inputs.chart, inputs.values, job.timeout / 4)
        )
        if nondeterministic:
            again, _ = _render_once(job, inputs)
            unstable = tuple(differences(emitted, again))
            if not unstable and emitted:  # `now | date` agrees within one second: flagged from the templates
                unstable = ((emitted[0].id, TEMPLATE_CALLS),)
        policy = entry_of(inputs)
        if store is None:
            return Rendered(job, tuple(emitted), tuple(stripped), unstable, unmatched=tuple(unmatched), policy=policy)
        if found is not None and cached.may_keep(inputs.ownership, nondeterministic):
            store.put(found.key, cached.entry(emitted, stripped, unstable, unmatched))
        return Rendered(
            job,
            tuple(emitted),
            tuple(stripped),
            unstable,
            notices=tuple(store.notices),
            unmatched=tuple(unmatched),
            policy=policy,
        )
    except ChartShareError as error:
        hint = MISSING_DEPENDENCIES_HINT if MISSING_DEPENDENCIES in str(error) else ""
        malformed = isinstance(error, ParameterError)  # helm:, kustomize:, directory:, plugin: as written
        return Rendered(job, error=f"{job.app.origin}: spec.{job.source.label}: {error}{hint}", malformed=malformed)


def inputs_of(job: Job) -> Inputs:
    """A chartshare source's configuration as generate resolves it from the plugin env Argo CD passes, a
    Helm source's `helm template` as Argo CD's Helm source runs it, or a kustomize or directory source's
    folder."""
    if job.renderer == "chartshare":
        config = chartshare_config(job)
        ownership = load_ownership(config)
        chart = job.built or chart_dir(config, ownership)  # a scratch copy when check built its dependencies
        if not job.raw:
            policy_entry(config, ownership)  # a policy that refuses the app's rules fails before helm runs
        return Inputs(
            chart, render_settings(config, ownership), config.template.values_files, config, ownership, job_raw=job.raw
        )
    if job.renderer in ("kustomize", "directory"):  # read from the folder, never kept in the render cache
        return Inputs(job.app_dir, {}, ())
    if job.remote is None:  # a published chart was checked whole when it was unpacked into the store
        confine_tree(job.app_dir, job.repo_root, "chart")  # as Argo CD's unpacking refuses links out
    # Argo CD resolves a published chart's value files in the chart's own folder, `$ref/` ones in Git
    values_root = job.app_dir if job.remote is not None else job.repo_root
    invocation = repo_server.helm_invocation(job.app, job.source, job.app_dir, values_root, job.repo_root)
    if job.built is not None:  # the value files stay the checkout's; helm renders the completed copy
        invocation = invocation._replace(chart_dir=job.built)
    settings: dict[str, object] = invocation.template._asdict()
    return Inputs(invocation.chart_dir, settings, invocation.template.values_files, invocation=invocation)


def entry_of(inputs: Inputs) -> str | None:
    """The fleet policy entry a chartshare source renders under (`projects[N]`): none for other sources and
    with --raw, which render without chartshare's rules."""
    if inputs.config is None or inputs.job_raw:
        return None
    entry = policy_entry(inputs.config, inputs.ownership)
    return entry.place if entry is not None else None


def _render_once(job: Job, inputs: Inputs, unmatched: list[str] | None = None) -> tuple[list[Claim], list[Claim]]:
    """(emitted, stripped) claims of one render; the post-render targets that matched nothing go to
    `unmatched`."""
    stripped: list[Applied] = []
    applied_emitted: list[Applied] = []
    ownership, config = inputs.ownership, inputs.config
    kinds = (ownership.cluster_scoped_kinds, ownership.namespaced_kinds) if ownership else ((), ())
    if config is not None and job.raw:  # the chart chartshare.yaml names, rendered without its rules
        call = template.HelmInvocation(inputs.chart, config.template)
        emitted = manifests.parse(template.render(config.helm, call, config.timeout))
    elif config is not None:
        outcome = render_loaded(config, ownership, inputs.chart)
        emitted, stripped, applied_emitted = outcome.resources, outcome.stripped, outcome.emitted
        if unmatched is not None:
            unmatched += outcome.unmatched
    elif job.renderer == "kustomize":
        emitted = manifests.parse(
            kustomize.render(
                job.app,
                job.source,
                job.app_dir,
                job.repo_root,
                job.timeout,
                job.build_options,
                job.helm,
                job.helm_charts,
            )
        )
    elif job.renderer == "directory":
        where = f"spec.{job.source.label}.directory"
        files = directory.manifest_files(job.app_dir, job.repo_root, job.source.directory, where)
        fields = job.source.directory.get("jsonnet") or {}
        if not isinstance(fields, Mapping):
            raise ParameterError(f"{where}.jsonnet must be a mapping")
        env = repo_server.build_env(job.app, job.source)
        evaluator = jsonnet.Evaluator(job.app_dir, job.repo_root, fields, env, f"{where}.jsonnet", job.timeout)
        emitted = directory.resources(files, job.app_dir, evaluator)
    else:
        assert inputs.invocation is not None
        emitted = manifests.parse(template.render(job.helm, inputs.invocation, job.timeout))
    everything = [*emitted, *(applied.resource for applied in stripped)]
    scopes = ScopeTable.build(crd_scopes(r.obj for r in everything), *kinds)
    decisions = {id(applied.resource): applied for applied in applied_emitted}
    emitted_claims = [
        _decided(claim, decisions.get(id(r)), ownership, job)
        for r in emitted
        if (claim := _claim(r, job, scopes)) is not None
    ]
    stripped_claims = [
        replace(
            _decided(claim, applied, ownership, job),
            reason=f"{decision.origin}: {decision.reason}",
            top_level_owner=decision.rule is None and decision.policy is None and bool(decision.owners),
            accepted=decision.policy.accepted
            if decision.rule is None and decision.policy is not None
            else ownership is not None and ownership.says_strip(decision.rule),
        )
        for applied in stripped
        if (claim := _claim(applied.resource, job, scopes)) is not None and (decision := applied.decision)
    ]
    return emitted_claims, stripped_claims


def _decided(claim: Claim, applied: Applied | None, ownership: Ownership | None, job: Job) -> Claim:
    """A claim with what its app's rules decided of it: the rule's place, a rename, protection, and the
    fleet policy entry that decided (or protected) it, if one did."""
    protected = prune_safe(mapping_at(claim.obj, "metadata", "annotations"))
    if applied is None:
        return replace(claim, protected=protected)
    rule = ""
    index = applied.decision.rule
    if ownership is not None and index is not None and 0 <= index < len(ownership.rules):
        try:
            where = ownership.path.resolve().relative_to(job.repo_root.resolve()).as_posix()
        except ValueError:
            where = ownership.display or ownership.path.name
        rule = f"{where}:{ownership.rules[index].line}"
    ref = applied.decision.policy
    if ref is not None:
        # `rule` stays the app's own: the policy file is the sidecar's, outside the repository reports locate in
        claim = replace(claim, policy=ref.place, policy_at=ref.at, overrode=ref.overrode)
    return replace(claim, rule=rule, renamed_from=applied.renamed_from or "", protected=protected)


def _claim(resource: Resource, job: Job, scopes: ScopeTable) -> Claim | None:
    if not resource.name:  # generateName: a new object on every sync, never shared
        return None
    namespace = landing_namespace(resource, scopes, job.app.namespace)
    key = ClusterResourceId(job.app.cluster, resource.group, resource.kind, namespace, resource.name)
    return Claim(key, resource.obj)


def differences(first: Sequence[Claim], second: Sequence[Claim]) -> Iterator[Unstable]:
    """Objects of the first render whose fields differ in the second, naming up to five fields each."""
    again = {claim.id: claim for claim in second}
    for claim in first:
        other = again.get(claim.id)
        if other is None:
            yield claim.id, ("metadata.name (the object is not rendered again under this name)",)
            continue
        fields = list(_diff(claim.obj, other.obj, ""))
        if fields:
            yield claim.id, tuple(fields[:MAX_DIFFERING_FIELDS])


def _diff(left: Any, right: Any, path: str) -> Iterator[str]:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in [*left, *(key for key in right if key not in left)]:
            yield from _diff(left.get(key), right.get(key), f"{path}.{key}" if path else str(key))
    elif isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for position, (a, b) in enumerate(zip(left, right, strict=True)):
            yield from _diff(a, b, f"{path}[{position}]")
    elif left != right:
        yield path or "(whole object)"


def chartshare_config(job: Job) -> Config:
    """What the sidecar would resolve for a chartshare source (its chart cache: check's own)."""
    env = repo_server.plugin_env(job.app, job.source)
    if job.cache_root is not None:
        env["CHARTSHARE_CACHE"] = str(job.cache_root)
    if job.repositories:
        env["CHARTSHARE_REPOSITORIES"] = job.repositories
    given = {"repo-root": str(job.repo_root), "helm": job.helm, "timeout": f"{job.timeout:g}"}
    return options(job.app_dir, given).resolve(env)._replace(policy=job.policy)  # check's policy: --policy alone


def claims_by_app(renders: Sequence[Rendered], skipped: Sequence[Skip]) -> dict[str, AppClaims]:
    """Each app's claims over all its sources; an app with a skipped source is incomplete."""
    apps: dict[str, AppClaims] = {}
    for rendered in renders:
        result = apps.setdefault(rendered.job.app.name, AppClaims(rendered.job.app))
        raw_chartshare = rendered.job.raw and rendered.job.renderer == "chartshare"
        result.renderers.append("helm" if raw_chartshare else rendered.job.renderer)
        for claim in rendered.emitted:
            result.emitted.setdefault(claim.id, claim)
        for claim in rendered.stripped:
            result.stripped.setdefault(claim.id, claim)
        result.unstable += rendered.unstable
        result.unmatched += rendered.unmatched
        result.names_apps = result.names_apps or rendered.names_apps
        result.governed = result.governed or rendered.job.policy is not None
        result.policy = result.policy or rendered.policy
    for skip in skipped:
        if skip.app in apps:
            apps[skip.app].complete = False
    return apps
