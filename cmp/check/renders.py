"""Rendering the plan's jobs, in worker processes: each source exactly as Argo CD would render it.

A chartshare source goes through `generate`'s own pipeline (so check sees what the sidecar would emit and
what its rules strip, and fails where generate would fail); a Helm source through the flags Argo CD's
Helm source passes; a kustomize source through `kustomize build` after Argo CD's edits; a directory
source through Argo CD's reading of its files. Each render comes back as claims. A chart that calls a
function whose output changes between renders (randAlphaNum, now, genCA...) is rendered a second time,
and the fields that differ are named: Argo CD would show them OutOfSync after every refresh.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cmp import manifests
from cmp.check import directory, kustomize, sources
from cmp.check.claims import Claim, Unstable
from cmp.check.plan import Job
from cmp.errors import ChartShareError
from cmp.generate.chart import chart_dir, load_ownership
from cmp.generate.render import render
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

# helm's words for a chart whose dependencies were never built. Argo CD's init step builds them in a scratch
# copy of the repository; check reads the checkout as it is and never writes into it.
MISSING_DEPENDENCIES = "missing in charts/ directory"
MISSING_DEPENDENCIES_HINT = (
    "; check builds no dependencies (it never writes into the checkout): run `chartshare init` or "
    "`helm dependency build` in the chart folder first"
)
MAX_DIFFERING_FIELDS = 5


@dataclass(frozen=True, slots=True)
class Rendered:
    """What one job produced: emitted and stripped claims, fields that change between runs, or an error."""

    job: Job
    emitted: tuple[Claim, ...] = ()
    stripped: tuple[Claim, ...] = ()
    unstable: tuple[Unstable, ...] = ()
    error: str | None = None


def render_all(jobs: Sequence[Job], workers: int, progress: Callable[[int, int], None] | None = None) -> list[Rendered]:
    """Render every job, in parallel processes when there is more than one; results in job order."""
    if workers <= 1 or len(jobs) <= 1:
        results = []
        for done, job in enumerate(jobs, 1):
            results.append(render_job(job))
            if progress:
                progress(done, len(jobs))
        return results
    ordered: list[Rendered | None] = [None] * len(jobs)
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), initializer=_leave_interrupts_to_the_parent)
    try:
        futures = {pool.submit(render_job, job): position for position, job in enumerate(jobs)}
        for done, future in enumerate(as_completed(futures), 1):
            ordered[futures[future]] = future.result()
            if progress:
                progress(done, len(jobs))
    finally:  # on Ctrl-C: drop the queued renders, let the running ones (bounded by helm's deadline) end
        pool.shutdown(wait=True, cancel_futures=True)
    return [result for result in ordered if result is not None]


def _leave_interrupts_to_the_parent() -> None:
    """Workers ignore Ctrl-C: the parent stops the pool and reports once, with no worker tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def default_workers() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has affinity
        return os.cpu_count() or 1


def render_job(job: Job) -> Rendered:
    """Render one job; a ChartShareError becomes the job's error message, naming the app."""
    try:
        emitted, stripped, chart, values = _render_once(job)
        unstable: tuple[Unstable, ...] = ()
        if job.renderer in ("chartshare", "helm") and uses_nondeterministic_functions(chart, values):
            again, _, _, _ = _render_once(job)
            unstable = tuple(differences(emitted, again))
        return Rendered(job, tuple(emitted), tuple(stripped), unstable)
    except ChartShareError as error:
        hint = MISSING_DEPENDENCIES_HINT if MISSING_DEPENDENCIES in str(error) else ""
        return Rendered(job, error=f"{job.app.origin}: spec.{job.source.label}: {error}{hint}")


def _render_once(job: Job) -> tuple[list[Claim], list[Claim], Path, tuple[Path, ...]]:
    """(emitted, stripped, chart folder, values files) of one render."""
    app = job.app
    stripped: list[Applied] = []
    ownership: Ownership | None = None
    if job.renderer == "chartshare":
        config = chartshare_config(job)
        ownership = load_ownership(config)
        chart = chart_dir(config, ownership)
        kinds = (ownership.cluster_scoped_kinds, ownership.namespaced_kinds) if ownership else ((), ())
        values = config.template.values_files
        if job.raw:  # the chart chartshare.yaml names, rendered without its rules
            stream = template.render(config.helm, template.HelmInvocation(chart, config.template), config.timeout)
            emitted = manifests.parse(stream)
        else:
            outcome = render(config)
            emitted, stripped = outcome.resources, outcome.stripped
    elif job.renderer == "kustomize":
        emitted = manifests.parse(kustomize.render(app, job.source, job.app_dir, job.repo_root, job.timeout))
        chart, kinds, values = job.app_dir, ((), ()), ()
    elif job.renderer == "directory":
        where = f"spec.{job.source.label}.directory"
        files = directory.manifest_files(job.app_dir, job.repo_root, job.source.directory, where)
        emitted = directory.resources(files, job.app_dir)
        chart, kinds, values = job.app_dir, ((), ()), ()
    else:
        if job.remote is None:  # a published chart was checked whole when it was unpacked into the store
            confine_tree(job.app_dir, job.repo_root, "chart")  # as Argo CD's unpacking refuses links out
        # Argo CD resolves a published chart's value files in the chart's own folder, `$ref/` ones in Git
        values_root = job.app_dir if job.remote is not None else job.repo_root
        invocation = sources.helm_invocation(app, job.source, job.app_dir, values_root, job.repo_root)
        emitted = manifests.parse(template.render(job.helm, invocation, job.timeout))
        chart, kinds, values = job.app_dir, ((), ()), invocation.template.values_files
    everything = [*emitted, *(applied.resource for applied in stripped)]
    scopes = ScopeTable.build(crd_scopes(r.obj for r in everything), *kinds)
    emitted_claims = [claim for r in emitted if (claim := _claim(r, job, scopes)) is not None]
    stripped_claims = [
        replace(
            claim,
            reason=f"{applied.decision.origin}: {applied.decision.reason}",
            top_level_owner=applied.decision.rule is None and bool(applied.decision.owners),
            accepted=ownership is not None and ownership.says_strip(applied.decision.rule),
        )
        for applied in stripped
        if (claim := _claim(applied.resource, job, scopes)) is not None
    ]
    return emitted_claims, stripped_claims, chart, values


def chartshare_config(job: Job) -> Config:
    """What the sidecar would resolve for a chartshare source (its chart cache: check's own)."""
    env = sources.plugin_env(job.app, job.source)
    if job.cache_root is not None:
        env["CHARTSHARE_CACHE"] = str(job.cache_root)
    given = {"repo-root": str(job.repo_root), "helm": job.helm, "timeout": f"{job.timeout:g}"}
    return options(job.app_dir, given).resolve(env)


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
