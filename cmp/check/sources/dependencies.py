"""Helm dependencies completed the way Argo CD's repo-server completes them, never in the checkout.

The repo-server renders a Helm source (or runs chartshare's init) in its own copy of the repository and
builds the dependencies a chart declares but does not vendor in `charts/`. check does the same in a
scratch copy: the chart folder, and every `file://` dependency it names, copied into a scratch tree at
their places in the repository, completed there by `chartshare init`'s own code (cmp/remote/dependencies:
the chart store as cache, CHARTSHARE_REPOSITORIES' credentials), and rendered from there. `--offline`
builds only from the cache: a dependency it lacks skips the app, naming the dependency and what fills the
cache. A build that fails is that app's render failure; the rest of the fleet is still checked.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cmp.check.fleet.applications import Skip
from cmp.check.sources.plan import Job
from cmp.check.sources.renders import RENDER_FAILED, chartshare_config
from cmp.errors import ChartShareError
from cmp.model import Access
from cmp.remote import dependencies
from cmp.remote.deadline import Deadline
from cmp.remote.store import chart_store
from cmp.render.chart import chart_dir, load_ownership

BUILD_SECONDS = 120.0  # per chart: CI has no Argo CD deadline, but a stalled repository must not hang it
BUILD_HINT = "check that the dependencies' repositories answer from here"


@dataclass(slots=True)
class Completed:
    """The jobs to render (a built chart where one was needed), and the apps skipped or failed instead."""

    jobs: list[Job] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)  # --offline: a dependency the cache lacks
    failed: list[Skip] = field(default_factory=list)  # a build that failed: the app's render failure


@dataclass(frozen=True, slots=True)
class Lacking:
    """--offline: a dependency the chart cache does not hold."""

    dependency: str  # its label: name, version and repository


def complete(
    jobs: Sequence[Job], scratch: Path, *, cache_root: Path, env: Mapping[str, str], offline: bool
) -> Completed:
    """Every job, those whose chart in Git lacks dependencies pointed at a completed copy under `scratch`
    (a folder the caller removes once the renders are done). One chart is built once for all its apps of
    one AppProject (each project builds with the credentials it may use)."""
    done = Completed()
    built: dict[tuple[Path, Access], Path | Lacking | str] = {}  # str: why the build failed
    for job in jobs:
        chart = git_chart(job)
        if chart is None or not _missing(chart):
            done.jobs.append(job)
            continue
        key = (chart, job.access)
        if key not in built:
            try:
                built[key] = _build(job, chart, scratch, cache_root, env, offline)
            except (ChartShareError, OSError) as error:
                built[key] = f"dependencies of {chart.name}: {error}"
        outcome = built[key]
        if isinstance(outcome, Path):
            done.jobs.append(replace(job, built=outcome))
        elif isinstance(outcome, Lacking):
            missing = f"dependency {outcome.dependency} is not in the chart cache (--offline); {_filled_by(job)}"
            done.skipped.append(Skip(job.app.name, f"{job.source.label}: {missing}"))
        else:
            done.failed.append(Skip(job.app.name, f"{RENDER_FAILED}: spec.{job.source.label}: {outcome}"))
    return done


def git_chart(job: Job) -> Path | None:
    """The chart folder of the repository a Helm or chartshare job renders; None for a published chart
    (completed when it was fetched), other sources, and a chartshare.yaml the render will report on."""
    if job.remote is not None or job.renderer not in ("helm", "chartshare"):
        return None
    if job.renderer == "helm":
        return job.app_dir if (job.app_dir / "Chart.yaml").is_file() else None
    try:
        config = chartshare_config(job)
        ownership = load_ownership(config)
        if ownership is not None and not isinstance(ownership.chart, str):
            return None
        return chart_dir(config, ownership)
    except ChartShareError:
        return None


def _missing(chart: Path) -> list[dependencies.Dependency]:
    try:
        declared = dependencies.read(chart)
    except ChartShareError:
        return []  # helm's render says what is wrong with the chart
    return [dependency for dependency in declared if not dependencies.present(chart, dependency)]


def _build(
    job: Job, chart: Path, scratch: Path, cache_root: Path, env: Mapping[str, str], offline: bool
) -> Path | Lacking:
    """The chart's completed copy, or (offline) the first dependency the cache lacks."""
    store = chart_store(cache_root, env, job.access)
    if offline:
        for dependency in _missing(chart):
            if dependency.scheme in ("http", "oci") and not (
                dependency.exact and store.archive(dependency.pinned(dependency.exact))
            ):
                return Lacking(dependency.label)
    root = job.repo_root
    tree = Path(tempfile.mkdtemp(prefix="deps-", dir=scratch))
    copy = _copied(chart, root, tree)
    for dependency in _missing(chart):
        if dependency.scheme == "file":
            target = (chart / dependency.repository.removeprefix("file://")).resolve()
            if target.is_relative_to(root) and target.is_dir() and not (tree / target.relative_to(root)).exists():
                _copied(target, root, tree)  # outside the repository: the build refuses it, as init does
    deadline = Deadline(BUILD_SECONDS, BUILD_HINT, "for a chart's dependencies in check")
    dependencies.ensure(dependencies.Build(copy, tree, job.helm, deadline, dict(env), store))
    return copy


def _copied(folder: Path, root: Path, tree: Path) -> Path:
    """`folder` of the repository copied to its place under `tree` (links inside the repository followed)."""
    target = tree / folder.relative_to(root)
    shutil.copytree(folder, target, symlinks=False)
    return target


def _filled_by(job: Job) -> str:
    """The command that fills the chart cache with the app's dependencies."""
    if job.renderer == "chartshare":
        return f"fill it with `chartshare init {job.source.path or '.'}`, or run check without --offline"
    return "fill it by running check without --offline (it keeps what it downloads in the chart cache)"
