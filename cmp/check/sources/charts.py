"""The published charts a plan renders, made present in the chart store before any render, once each.

A Helm-repository source names its chart in the Application (`repoURL`, `chart`, `targetRevision`); a
chartshare source in its chartshare.yaml. Each is fetched as `chartshare init` fetches it (the
credentials of CHARTSHARE_REPOSITORIES, the digest, the checks of the archive) into the same cache
(`$CHARTSHARE_CACHE/charts`), never into the checkout. `--offline` only looks: a source whose chart is not
in the cache is skipped, with the command that fills it. A chart that cannot be fetched is the render
failure of the apps that name it, never the fleet's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from cmp.check.fleet.applications import Skip
from cmp.check.sources import kustomize
from cmp.check.sources.plan import Job
from cmp.check.sources.renders import RENDER_FAILED, chartshare_config
from cmp.errors import ChartShareError
from cmp.model import Access, RemoteChart
from cmp.remote import credentials
from cmp.remote.deadline import Deadline
from cmp.remote.fetch import Fetcher, fetch
from cmp.remote.store import chart_store
from cmp.render.chart import load_ownership

FETCH_SECONDS = 60.0  # per chart: CI has no Argo CD deadline, but a stalled server must not hang it
FETCH_HINT = "check that the repository answers from here"


class Prepared(NamedTuple):
    """The jobs to render (published charts in place), the sources skipped, and the apps whose chart could
    not be fetched (each app's render failure: the rest of the fleet is still checked)."""

    jobs: list[Job]
    skipped: list[Skip]
    failed: list[Skip]


def prepare(jobs: Sequence[Job], *, cache_root: Path, env: Mapping[str, str], offline: bool) -> Prepared:
    """Every job with the chart cache set, and each published chart present (fetched unless `offline`)."""
    # once per chart and project: the store serves each project only what it may fetch (the entry it uses)
    folders: dict[tuple[RemoteChart, Access], Path | str | None] = {}  # None: not in the cache (offline); str: why
    prepared = Prepared([], [], [])
    repositories = env.get(credentials.ENV, "")
    for job in jobs:
        job = replace(job, cache_root=cache_root, repositories=repositories)
        if job.renderer == "kustomize" and kustomize.ENABLE_HELM in job.build_options:
            _helm_charts(job, folders, prepared, env, offline)
            continue
        chart = job.remote or _named_by_config(job)
        if chart is None:
            prepared.jobs.append(job)
            continue
        key = (chart, job.access)
        if key not in folders:
            folders[key] = _found(chart, job, cache_root, env, offline)
        folder = folders[key]
        if isinstance(folder, Path):
            prepared.jobs.append(replace(job, remote=chart, app_dir=folder if job.renderer == "helm" else job.app_dir))
        elif isinstance(folder, str):
            prepared.failed.append(Skip(job.app.name, f"{RENDER_FAILED}: spec.{job.source.label}: {folder}"))
        else:
            missing = f"chart {chart.label} is not in the chart cache (--offline)"
            prepared.skipped.append(Skip(job.app.name, f"{job.source.label}: {missing}; {_filled_by(job)}"))
    return prepared


def _helm_charts(
    job: Job,
    folders: dict[tuple[RemoteChart, Access], Path | str | None],
    prepared: Prepared,
    env: Mapping[str, str],
    offline: bool,
) -> None:
    """A kustomize job built with --enable-helm: its helmCharts' charts from the chart store (fetched unless
    `offline`), or why it cannot render here."""
    refused = kustomize.refuses_helm(job.helm)
    if refused is not None:
        prepared.skipped.append(Skip(job.app.name, f"{job.source.label}: {refused}"))
        return
    try:
        named = kustomize.helm_charts(job.app_dir, job.repo_root)
    except ChartShareError:
        prepared.jobs.append(job)  # the render reports it
        return
    charts: list[tuple[RemoteChart, Path]] = []
    for chart in named:
        key = (chart, job.access)
        if key not in folders:
            folders[key] = _found(chart, job, job.cache_root or Path(), env, offline) if chart.version else "no version"
        folder = folders[key]
        what = f"helmCharts chart {chart.name} {chart.version or '(no version)'} from {chart.repository}"
        if isinstance(folder, Path):
            charts.append((chart, folder))
        elif folder == "no version":
            prepared.skipped.append(Skip(job.app.name, f"{job.source.label}: {what}: check renders a pinned version"))
            return
        elif isinstance(folder, str):
            prepared.failed.append(Skip(job.app.name, f"{RENDER_FAILED}: spec.{job.source.label}: {what}: {folder}"))
            return
        else:
            missing = f"{what} is not in the chart cache (--offline); fill it by running check without --offline"
            prepared.skipped.append(Skip(job.app.name, f"{job.source.label}: {missing}"))
            return
    prepared.jobs.append(replace(job, helm_charts=tuple(charts)))


def _named_by_config(job: Job) -> RemoteChart | None:
    """The remote chart a chartshare source's chartshare.yaml names; a problem is left to the render, which
    reports it as generate would."""
    if job.renderer != "chartshare":
        return None
    try:
        ownership = load_ownership(chartshare_config(job))
    except ChartShareError:
        return None
    return ownership.chart if ownership is not None and isinstance(ownership.chart, RemoteChart) else None


def _found(chart: RemoteChart, job: Job, cache_root: Path, env: Mapping[str, str], offline: bool) -> Path | str | None:
    """The chart's folder in the store as the app's project may be served it (fetched unless `offline`), or
    why it could not be had."""
    store = chart_store(cache_root, env, job.access)
    deadline = Deadline(FETCH_SECONDS, FETCH_HINT, "for a chart check fetches")
    try:
        if offline:
            return store.lookup(chart)
        return fetch(chart, Fetcher(store, job.helm, deadline, env)).folder
    except ChartShareError as error:
        return str(error)


def _filled_by(job: Job) -> str:
    if job.renderer == "chartshare":
        return f"fill it with `chartshare init {job.source.path or '.'}`, or run check without --offline"
    return "fill it by running check without --offline"
