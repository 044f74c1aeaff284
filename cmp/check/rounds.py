"""The fleet rendered in rounds: the apps read from files, then the apps those render (App of Apps), and so
on until a round creates none (cmp/check/fleet/appofapps.py says which Applications a render adds).

With `--shard`, the tree must be the same in every shard, so every shard renders each app that may create
others (its files name `argoproj.io`, or hold a chart archive that may) and keeps the claims only of the
apps whose name hashes to it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cmp.cache.store import Store
from cmp.check.fleet.applications import ARGO_GROUP, Application, Contest, Fleet, Skip
from cmp.check.fleet.appofapps import Known, children
from cmp.check.fleet.generators.context import ClusterSecret
from cmp.check.fleet.repos import Repositories
from cmp.check.output.shards import Shard
from cmp.check.sources import charts, dependencies, kustomize, renders
from cmp.check.sources.plan import Job, plan
from cmp.check.sources.renders import Rendered
from cmp.errors import ChartShareError
from cmp.inputs.policy_file import PolicyText
from cmp.remote.store import chart_store

MAX_DEPTH = 20  # rounds of children: deeper is a generator gone wrong, not a fleet
_SCAN_BYTES = 8 << 20  # per file, when asking whether an app may render Argo CD objects
_ARCHIVES = (".tgz", ".tar.gz")


@dataclass(frozen=True, slots=True)
class Settings:
    """What every round of the tree's rendering shares."""

    repositories: Repositories
    control_plane_namespace: str
    clusters: Sequence[ClusterSecret] | None
    raw: bool
    helm: str
    timeout: float
    cache_root: Path
    env: Mapping[str, str]
    offline: bool
    shard: Shard | None
    workers: int
    progress: Callable[[int, int], None] | None
    store: Store | None
    scratch: Path  # where dependencies are built; the caller removes it
    build_options: tuple[str, ...] = ()  # of every kustomize build (argocd-cm's kustomize.buildOptions)
    policy: PolicyText | None = None  # `--policy`: the fleet policy chartshare sources render under


@dataclass(slots=True)
class Tree:
    """The whole fleet with the apps its apps create, and what the renders gave.

    `jobs` and `skipped` are the fleet's (the same in every shard); `rendered`, `unfetched` and `failed`
    are the shard's own apps' (every app's without a shard)."""

    applications: list[Application] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    rendered: list[Rendered] = field(default_factory=list)  # successful renders
    unfetched: list[Skip] = field(default_factory=list)  # --offline: a chart or dependency the cache lacks
    failed: list[Skip] = field(default_factory=list)  # `render failed: ...`
    errors: list[str] = field(default_factory=list)
    contested: dict[str, Contest] = field(default_factory=dict)  # names with two definitions, checked for none


def render_tree(fleet: Fleet, settings: Settings) -> Tree:
    """Render the fleet's apps, then the apps they create, round after round."""
    tree = Tree(skipped=list(fleet.skipped))
    known = Known(contested=dict(fleet.contested), control_plane_namespace=settings.control_plane_namespace)
    pending = [app for app in fleet.applications if known.admit(app, tree.errors)]
    depth = 0
    while pending and not tree.errors:
        depth += 1
        if depth > MAX_DEPTH:
            tree.errors.append(f"{pending[0].origin}: Applications nest more than {MAX_DEPTH} levels deep")
            break
        tree.applications += pending
        planned = plan(
            pending,
            settings.repositories,
            raw=settings.raw,
            helm=settings.helm,
            timeout=settings.timeout,
            build_options=settings.build_options,
            policy=settings.policy,
        )
        tree.jobs += planned.jobs
        tree.skipped += planned.skipped
        tree.errors += planned.errors
        fleet.notes |= planned.notes
        if tree.errors:
            break
        pending = []
        for result in _rendered(planned.jobs, settings, tree):
            if _held(settings.shard, result.job.app.name):
                tree.rendered.append(result)
            objects = ((claim.id, claim.obj) for claim in result.emitted)
            where = (settings.control_plane_namespace, settings.repositories, settings.clusters)
            for child in children(result.job.app, objects, where, fleet, tree.errors, tree.skipped):
                if known.admit(child, tree.errors):
                    pending.append(child)
    parents, contested = known.parents, known.contested
    tree.contested = contested  # a name contested after its first definition rendered: that render is dropped
    tree.applications = [
        replace(app, parent=parents.get(app.name)) for app in tree.applications if app.name not in contested
    ]
    tree.jobs = [job for job in tree.jobs if job.app.name not in contested]
    tree.rendered = [
        replace(result, job=replace(result.job, app=replace(result.job.app, parent=parents.get(result.job.app.name))))
        for result in tree.rendered
        if result.job.app.name not in contested
    ]
    tree.skipped += [contest.skip(name) for name, contest in sorted(contested.items())]
    return tree


def _held(shard: Shard | None, name: str) -> bool:
    return shard is None or shard.holds(name)


def _rendered(jobs: Sequence[Job], settings: Settings, tree: Tree) -> Iterator[Rendered]:
    """The round's renders that succeeded: the shard's own jobs, and those that may create apps."""
    wanted = [job for job in jobs if _held(settings.shard, job.app.name) or may_create_apps(job, settings.cache_root)]
    ready = charts.prepare(wanted, cache_root=settings.cache_root, env=settings.env, offline=settings.offline)
    completed = dependencies.complete(
        ready.jobs, settings.scratch, cache_root=settings.cache_root, env=settings.env, offline=settings.offline
    )
    held = [skip for skip in [*ready.skipped, *completed.skipped] if _held(settings.shard, skip.app)]
    tree.unfetched += held
    tree.failed += [skip for skip in [*ready.failed, *completed.failed] if _held(settings.shard, skip.app)]
    for result in renders.render_all(completed.jobs, settings.workers, settings.progress, settings.store):
        if result.error is None:
            empty = not (result.emitted or result.stripped) and result.job.app.parent is None
            yield (
                replace(result, names_apps=True)
                if empty and may_create_apps(result.job, settings.cache_root)
                else result
            )
        elif result.malformed:  # an Application field check cannot read: bad input, in every shard
            tree.errors.append(result.error)
        elif _held(settings.shard, result.job.app.name):
            why = result.error.removeprefix(f"{result.job.app.origin}: ")
            tree.failed.append(Skip(result.job.app.name, f"{renders.RENDER_FAILED}: {why}"))


def may_create_apps(job: Job, cache_root: Path) -> bool:
    """Whether the job's files could render an Application or ApplicationSet: a file naming
    `argoproj.io`, or an archive (a packaged chart) that might. A shard renders these for every app."""
    places = {job.app_dir}
    if job.remote is not None:
        try:
            folder = chart_store(cache_root, access=job.access).lookup(job.remote)
        except ChartShareError:
            return True  # an unreadable repositories file: the render reports it
        if folder is None:
            return True  # not fetched yet: it may
        places = {folder}
    elif job.renderer == "chartshare":
        chart = dependencies.git_chart(job)
        if chart is None:
            return True  # a published chart, or a chartshare.yaml the render will refuse
        places.add(chart)
    elif job.renderer == "kustomize":
        try:
            found, _ = kustomize.references(job.app_dir, job.repo_root)
        except ChartShareError:
            return True  # the render reports it
        places |= found
    return any(_names_argo(path) for place in sorted(places) for path in _files(place))


def _files(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        yield folder
        return
    for top, subfolders, names in os.walk(folder):
        subfolders.sort()
        for name in sorted(names):
            yield Path(top, name)


def _names_argo(path: Path) -> bool:
    if path.name.endswith(_ARCHIVES):
        return True
    try:
        with path.open("rb") as file:
            return ARGO_GROUP.encode() in file.read(_SCAN_BYTES)
    except OSError:
        return False
