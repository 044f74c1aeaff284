"""App of Apps: the Applications and ApplicationSets an app renders join the fleet, as Argo CD creates them.

An Application object that an app emits becomes an Application of this Argo CD once the parent syncs, and
an ApplicationSet makes its Applications; so check renders the fleet in rounds: the apps read from files,
then the apps those render, and so on until a round creates none. A child lands in the namespace the
parent's claim puts it in (its own `metadata.namespace`, else the parent's destination), which gives its
instance name. One name is one Application: the same definition read from a file and rendered by a parent
is one app (its parent recorded); an app that renders itself adds nothing; a different definition under a
taken name, or an app that renders one of its ancestors, is bad input naming both places.

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
from cmp.check import charts, dependencies, inventory, kustomize, renders
from cmp.check.applications import ARGO_GROUP, Application, Fleet, Malformed, Skip
from cmp.check.generators.context import ClusterSecret
from cmp.check.plan import Job, plan
from cmp.check.renders import Rendered
from cmp.check.repos import Repositories
from cmp.check.shards import Shard
from cmp.errors import ChartShareError
from cmp.remote.store import chart_store

ARGO_KINDS = ("Application", "ApplicationSet")
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


def render_tree(fleet: Fleet, settings: Settings) -> Tree:
    """Render the fleet's apps, then the apps they create, round after round."""
    tree = Tree(skipped=list(fleet.skipped))
    known = Known()
    pending = [app for app in fleet.applications if known.admit(app, tree.errors)]
    depth = 0
    while pending and not tree.errors:
        depth += 1
        if depth > MAX_DEPTH:
            tree.errors.append(f"{pending[0].origin}: Applications nest more than {MAX_DEPTH} levels deep")
            break
        tree.applications += pending
        planned = plan(pending, settings.repositories, raw=settings.raw, helm=settings.helm, timeout=settings.timeout)
        tree.jobs += planned.jobs
        tree.skipped += planned.skipped
        tree.errors += planned.errors
        if tree.errors:
            break
        pending = []
        for result in _rendered(planned.jobs, settings, tree):
            if _held(settings.shard, result.job.app.name):
                tree.rendered.append(result)
            for child in children(result, settings, fleet, tree):
                if known.admit(child, tree.errors):
                    pending.append(child)
    parents = known.parents
    tree.applications = [replace(app, parent=parents.get(app.name)) for app in tree.applications]
    tree.rendered = [
        replace(result, job=replace(result.job, app=replace(result.job.app, parent=parents.get(result.job.app.name))))
        for result in tree.rendered
    ]
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
            yield result
        elif result.malformed:  # an Application field check cannot read: bad input, in every shard
            tree.errors.append(result.error)
        elif _held(settings.shard, result.job.app.name):
            why = result.error.removeprefix(f"{result.job.app.origin}: ")
            tree.failed.append(Skip(result.job.app.name, f"{renders.RENDER_FAILED}: {why}"))


def children(result: Rendered, settings: Settings, fleet: Fleet, tree: Tree) -> Iterator[Application]:
    """The Applications that the Application and ApplicationSet objects of one render stand for."""
    parent = result.job.app
    for claim in result.emitted:
        if claim.id.group != ARGO_GROUP or claim.id.kind not in ARGO_KINDS:
            continue
        obj = dict(claim.obj)
        metadata = obj.get("metadata")
        obj["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), "namespace": claim.id.namespace}
        where = f"rendered by {parent.name} ({parent.origin})"
        try:
            found, skipped = inventory.argo_object(
                obj, where, settings.control_plane_namespace, settings.repositories, settings.clusters, fleet
            )
        except Malformed as problem:
            tree.errors.append(f"{where}: {claim.id.kind} {claim.id.name}: {problem}")
            continue
        tree.skipped += [replace(skip, reason=f"{skip.reason} (rendered by {parent.name})") for skip in skipped]
        for child in found:
            yield replace(child, parent=parent.name)


@dataclass(slots=True)
class Known:
    """Every app admitted so far: its definition, where it was read, and the app that created it."""

    definitions: dict[str, Application] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)

    def admit(self, app: Application, errors: list[str]) -> bool:
        """Whether `app` is new to the fleet; an app already known only gains its parent."""
        known = self.definitions.get(app.name)
        if known is None:
            self.definitions[app.name] = app
            if app.parent is not None:
                self.parents[app.name] = app.parent
            return True
        if app.parent is None:  # two files: the inventory's own message
            errors.append(
                f"{app.origin}: the name {app.name} is taken by {known.origin}; Argo CD keeps one Application "
                "per name: rename one of them"
            )
            return False
        if app.parent == app.name and _same(app, known):
            return False  # an app that renders itself: Argo CD tracks it, and nothing new is created
        if app.name in self.ancestors(app.parent):
            errors.append(
                f"{app.origin}: Application {app.name} is rendered by {app.parent}, which {app.name} itself "
                f"creates ({known.origin}): a cycle; remove the Application from one of them"
            )
            return False
        if not _same(app, known):
            errors.append(
                f"{app.origin}: Application {app.name} differs from the one of the same name at {known.origin}; "
                "Argo CD keeps one Application per name: make them one definition, or rename one"
            )
            return False
        self.parents.setdefault(app.name, app.parent)
        return False

    def ancestors(self, name: str) -> list[str]:
        chain = [name]
        while (above := self.parents.get(chain[-1])) is not None and above not in chain:
            chain.append(above)
        return chain


def _same(one: Application, other: Application) -> bool:
    """One definition: the same app once where it was read and who created it are set aside."""
    return replace(one, origin="", parent=None) == replace(other, origin="", parent=None)


def may_create_apps(job: Job, cache_root: Path) -> bool:
    """Whether the job's files could render an Application or ApplicationSet: a file naming
    `argoproj.io`, or an archive (a packaged chart) that might. A shard renders these for every app."""
    places = {job.app_dir}
    if job.remote is not None:
        folder = chart_store(cache_root).lookup(job.remote)
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
