"""The `check` command from end to end: Application files -> plan -> published charts -> dependencies ->
renders -> the apps those render (appofapps.py) -> analysis -> report text.

The CLI parses the options and, with what this returns, prints and chooses the exit status; nothing here
prints or exits. Bad input (manifests, paths, Application fields) comes back as error lines before any
report is written; an app whose render fails is that app's problem: it is skipped (`render failed: ...`),
the others analysed, and the run exits 1. A shard reads and validates the whole fleet, renders its own apps
(and every app that may create others) and writes their claims document instead of a report; the merge
turns the shards' documents into the report a single run prints.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cmp import __version__
from cmp.cache.store import Store
from cmp.check import base as base_fleet
from cmp.check import rounds
from cmp.check.analysis import conflicts, identity, live
from cmp.check.analysis.conflicts import Report
from cmp.check.analysis.ignored import IgnoreRule, argocd_cm_rules
from cmp.check.analysis.lifecycle import LastSpecs, lifecycle, unjudged
from cmp.check.analysis.live import ANNOTATION_TRACKING, Tracking
from cmp.check.fleet import applications, inventory
from cmp.check.fleet.applications import Contest, Fleet, Skip, argocd_cm_data
from cmp.check.fleet.generators.clusters import read_clusters
from cmp.check.fleet.repos import Repositories, parse_mapping, remotes_of
from cmp.check.output import baseline, document, text_report
from cmp.check.output.formats import FORMATS, Settings
from cmp.check.output.merge import merge
from cmp.check.output.shards import Shard
from cmp.check.sources import kustomize, renders
from cmp.check.sources.plan import Plan, plan
from cmp.check.sources.renders import Rendered
from cmp.errors import ChartShareError
from cmp.inputs import policy_file
from cmp.inputs.config import cache_root
from cmp.inputs.policy_file import PolicyText

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The report to print, how many conflicts it holds, or the errors that stopped the check."""

    text: str = ""
    conflicts: int = 0  # what makes the run exit 1: conflicts, and unsafe lifecycle entries
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for stderr, once each
    notices: list[str] = field(default_factory=list)  # why the render cache could not be used, once each
    failed: int = 0  # apps whose render failed (skipped with `render failed: ...`): exit 1
    skipped: int = 0  # apps with a skipped source: exit 1 with --strict
    files: tuple[tuple[Path, str], ...] = ()  # what to write besides stdout: --report files, the baseline
    recorded: bool = False  # --write-baseline: the findings are recorded, so the run passes


@dataclass(frozen=True, slots=True)
class Reports:
    """What one run writes from its one analysis: stdout's format, more formats into files (`--report`),
    and the baseline it reads (`--baseline`) or records (`--write-baseline`)."""

    files: tuple[tuple[str, Path], ...] = ()  # (format, file)
    baseline: Path | None = None
    write_baseline: Path | None = None


@dataclass(frozen=True, slots=True)
class Installation:
    """What check knows of the Argo CD the fleet runs in: its clusters, the checkouts of the repositories it
    reads, and how it tracks objects (each flag wins over argocd-cm, which wins over the defaults)."""

    clusters: Path | None = None
    repos: tuple[str, ...] = ()  # URL=DIR
    tracking_method: str | None = None
    instance_label_key: str | None = None
    installation_id: str | None = None
    argocd_cm: Path | None = None
    kustomize_build_options: str | None = None  # replaces argocd-cm's kustomize.buildOptions

    def build_options(self, errors: list[str]) -> tuple[str, ...]:
        """The options of every `kustomize build`: the flag's, else argocd-cm's kustomize.buildOptions."""
        if self.kustomize_build_options is not None:
            return kustomize.parse_options(self.kustomize_build_options)
        data = argocd_cm_data(self.argocd_cm, errors) if self.argocd_cm is not None else {}
        return kustomize.parse_options(str(data.get(kustomize.BUILD_OPTIONS_KEY) or ""))

    def tracking(self, errors: list[str]) -> Tracking:
        settings = live.read_argocd_cm(self.argocd_cm, errors) if self.argocd_cm is not None else {}
        given = {"method": self.tracking_method, "label_key": self.instance_label_key}
        given["installation_id"] = self.installation_id
        settings.update({key: value for key, value in given.items() if value is not None})
        return Tracking(**settings)

    def ignored(self, errors: list[str]) -> list[IgnoreRule]:
        """argocd-cm's resource.customizations.ignoreDifferences (none without --argocd-cm)."""
        return argocd_cm_rules(argocd_cm_data(self.argocd_cm, errors)) if self.argocd_cm is not None else []

    def repositories(self, root: Path, errors: list[str]) -> Repositories:
        return Repositories.build(root, remotes_of(root), self.mappings(errors))

    def mappings(self, errors: list[str] | None = None) -> list[tuple[str, Path]]:
        """The --repo URL=DIR mappings (their problems into `errors`)."""
        mappings = []
        for text in self.repos:
            try:
                mappings.append(parse_mapping(text, Path.cwd()))
            except ValueError as problem:
                if errors is not None:
                    errors.append(str(problem))
        return mappings


def check_fleet(
    paths: Sequence[Path],
    root: Path,
    *,
    output_format: str = "text",
    raw: bool,
    live: Sequence[Path] | None,
    control_plane_namespace: str,
    helm: str,
    timeout: float,
    workers: int | None,
    progress: Progress | None,
    environ: Mapping[str, str],
    installation: Installation = Installation(),
    offline: bool = False,
    shard: Shard | None = None,
    cache: bool = True,
    base: str | None = None,
    reports: Reports = Reports(),
    policy: Path | None = None,
) -> Outcome:
    """Render every Application under `paths` from the repository at `root` and report on them (or, for a
    shard, on the apps of that shard, as a claims document). `progress` (for a terminal) is called only
    when a bar is worth showing; `offline` takes published charts from the chart cache only; `cache` is
    whether renders go through the render cache; `base` a revision to compare the fleet with (lifecycle);
    `policy` the fleet policy file chartshare sources render under, each app by its spec.project."""
    problems: list[str] = []
    governing = read_policy(policy, problems) if policy is not None else None
    repositories = installation.repositories(root, problems)
    tracking = installation.tracking(problems)
    clusters = read_clusters(installation.clusters, problems) if installation.clusters is not None else None
    if problems:
        return Outcome(errors=problems)
    loaded = inventory.load(paths, control_plane_namespace, repositories, clusters)
    live_objects = applications.load_live(live, loaded.errors) if live is not None else None
    if not (loaded.applications or loaded.skipped or loaded.errors or loaded.contested):
        loaded.errors.append(f"no Application or ApplicationSet in {', '.join(map(str, paths))}")
    if loaded.errors:
        planned = plan(loaded.applications, repositories, raw=raw, helm=helm, timeout=timeout)
        return Outcome(errors=loaded.errors + planned.errors)
    quiet = output_format != "text" or shard is not None
    wanted = progress is not None and text_report.progress_wanted(True, quiet, environ, len(loaded.applications))
    store = Store.from_env(environ) if cache else None
    with tempfile.TemporaryDirectory(prefix="chartshare-check-") as scratch:  # dependencies built here
        settings = rounds.Settings(
            repositories=repositories,
            control_plane_namespace=control_plane_namespace,
            clusters=clusters,
            raw=raw,
            helm=helm,
            timeout=timeout,
            cache_root=cache_root(environ),
            env=environ,
            offline=offline,
            shard=shard,
            workers=workers or renders.default_workers(),
            progress=progress if wanted else None,
            store=store,
            scratch=Path(scratch),
            build_options=installation.build_options(problems),
            policy=governing,
        )
        tree = rounds.render_tree(loaded, settings)
    notices = list(dict.fromkeys([*(store.notices if store else ()), *(n for r in tree.rendered for n in r.notices)]))
    if tree.errors:
        return Outcome(errors=tree.errors, notices=notices)
    places = {app.name: app.located for app in tree.applications}
    tree.skipped, tree.unfetched, tree.failed = (
        [replace(skip, located=places.get(skip.app, skip.located)) for skip in listed]
        for listed in (tree.skipped, tree.unfetched, tree.failed)
    )
    skipped = [*tree.skipped, *tree.unfetched, *tree.failed]
    found = last = None
    if base is not None:
        found = base_fleet.at(base, paths, base_fleet.Settings(root, installation.mappings(), settings))
        notices = list(dict.fromkeys([*notices, *found.notices]))
        if found.errors:
            return Outcome(errors=found.errors, notices=notices)
        loaded.notes.update(found.notes)
        current = {app.name for app in tree.applications} | {skip.app for skip in skipped}
        last = base_fleet.last_specs(found, current, settings)
    if shard is not None:
        whole = Fleet(tree.applications, tree.skipped, notes=loaded.notes)
        own = [*tree.unfetched, *tree.failed]
        planned = Plan(tree.jobs, [], [])
        document_text = claims_document(
            shard,
            whole,
            planned,
            tree.rendered,
            live_objects,
            raw=raw,
            tracking=tracking,
            unfetched=own,
            base=found,
            last=last,
            ignored=installation.ignored(problems),
            contested=list(tree.contested.values()),
        )
        return Outcome(document_text, notes=sorted(loaded.notes), notices=notices)
    apps = renders.claims_by_app(tree.rendered, skipped)
    ignored = installation.ignored(problems)
    report = conflicts.analyse(apps, skipped, live_objects, tracking, tree.contested.values(), ignored)
    if found is not None:
        unsure = found.unrendered | {skip.app for skip in skipped}
        entries = lifecycle(found.apps, apps, live_objects, tracking, unsure, last or LastSpecs())
        missing = unjudged(found.skipped, {*apps, *(skip.app for skip in skipped)})
        report = replace(report, lifecycle=tuple(entries), unjudged=tuple(missing))
    return publish(report, raw, output_format, reports, root, notes=sorted(loaded.notes), notices=notices)


def publish(
    report: Report,
    raw: bool,
    output_format: str,
    reports: Reports,
    root: Path,
    *,
    notes: Sequence[str] = (),
    notices: Sequence[str] = (),
) -> Outcome:
    """Every report of one analysis: stdout's and each --report file's, with the baseline's findings marked
    known (or today's recorded); what fails the run counts only what the baseline does not know."""
    if reports.baseline is not None:
        try:
            known = baseline.read(reports.baseline.read_text(encoding="utf-8"), str(reports.baseline))
        except (OSError, UnicodeDecodeError) as problem:
            why = problem.strerror if isinstance(problem, OSError) else "not UTF-8 text"
            return Outcome(errors=[f"--baseline {reports.baseline}: cannot read: {why}"], notices=list(notices))
        except baseline.NotBaseline as problem:
            return Outcome(errors=[f"--baseline {problem}"], notices=list(notices))
        report = replace(report, known=frozenset(known))
    files = [(path, formatted(report, name, raw, root)) for name, path in reports.files]
    if reports.write_baseline is not None:
        files.append((reports.write_baseline, baseline.write(report)))
    failed, skipped_apps = counts(report)
    return Outcome(
        formatted(report, output_format, raw, root),
        failures(report),
        notes=list(notes),
        notices=list(notices),
        failed=failed,
        skipped=skipped_apps,
        files=tuple(files),
        recorded=reports.write_baseline is not None,
    )


def read_policy(path: Path, problems: list[str]) -> PolicyText | None:
    """`--policy`: the file read and parsed once, up front, so that a malformed policy is bad input (exit 2,
    one line naming the file and line) rather than a failed render of every app."""
    from cmp.render.policy import parsed

    try:
        text = policy_file.read(path)
        parsed(text.text, text.display)
    except ChartShareError as problem:
        problems.append(str(problem))
        return None
    return text


def failures(report: Report) -> int:
    """What makes check exit 1 as a conflict does: each conflict, and each lifecycle entry that is not safe,
    that the baseline (if any) does not know."""
    return identity.new_failures(report)


def counts(report: Report) -> tuple[int, int]:
    """What the exit status reads besides conflicts: apps whose render failed, and apps skipped (--strict),
    the deleted apps the lifecycle could not judge among them."""
    failed = {skip.app for skip in report.skipped if skip.reason.startswith(renders.RENDER_FAILED)}
    return len(failed), len({skip.app for skip in [*report.skipped, *report.unjudged]})


def merge_claims(
    paths: Sequence[Path], *, output_format: str = "text", reports: Reports = Reports(), root: Path = Path(".")
) -> Outcome:
    """The reports of a fleet from its shards' claims documents: what a single run would write."""
    merged = merge(paths)
    if merged.report is None:
        return Outcome(errors=merged.errors)
    return publish(merged.report, merged.raw, output_format, reports, root, notes=merged.notes)


def formatted(report: Report, output_format: str, raw: bool, root: Path = Path(".")) -> str:
    """One report in one of FORMATS (root: what SARIF's locations are relative to)."""
    return FORMATS[output_format](report, Settings(raw=raw, root=root))


def claims_document(
    shard: Shard,
    loaded: Fleet,
    planned: Plan,
    rendered: Sequence[Rendered],
    live_objects: Sequence[dict[str, Any]] | None,
    *,
    raw: bool,
    tracking: Tracking = ANNOTATION_TRACKING,
    unfetched: Sequence[Skip] = (),
    base: base_fleet.Base | None = None,
    last: LastSpecs | None = None,
    ignored: Sequence[IgnoreRule] = (),
    contested: Sequence[Contest] = (),
) -> str:
    """The shard's document: its apps' claims and own warnings, and the skipped sources and live objects
    that fall to it by the app they name (a live object without a tracking id matters to no shard).
    `unfetched` are the shard's own sources whose published chart the chart cache lacked (--offline):
    they are not the fleet's, as the shard fetches only the charts of its own apps. With `base` (--base),
    the document also carries the shard's apps at the base revision, and the live objects no app tracks
    go to shard 1 (what no app tracks decides a lifecycle entry too), and the last specs, rendered at the
    checkout, of the shard's apps the change removes (`last`)."""
    skipped = [*loaded.skipped, *planned.skipped]
    apps = renders.claims_by_app(rendered, [*skipped, *unfetched])
    places = {app.name: place for place, app in enumerate(loaded.applications)}
    notes = tuple(sorted(loaded.notes))
    commit = base.commit if base is not None else ""
    fleet = document.fleet_digest(loaded.applications, planned.jobs, skipped, live_objects, raw, tracking, commit)
    tracked = None
    if live_objects is not None:
        tracked = [
            (n, obj)
            for n, obj in enumerate(live_objects)
            if ((found := live.tracking(obj, tracking)) and shard.holds(found[0]))
            or (not found and base is not None and shard.index == 1)
        ]
    at_base = None
    if base is not None:
        held = [(base.places[name], result) for name, result in base.apps.items()]
        lasting = last or LastSpecs()
        at_base = document.AtBase(
            base.commit,
            held,
            [skip for skip in base.skipped if shard.holds(skip.app)],
            [(base.places[name], result) for name, result in lasting.rendered.items()],
            sorted(lasting.stuck.items()),
        )
    return document.write(
        document.Header(Path("-"), document.VERSION, __version__, fleet, shard, raw, tracking, notes),
        [(places[name], result) for name, result in apps.items()],
        conflicts.own_warnings(apps.values(), ignored),
        [skip for skip in [*skipped, *unfetched] if shard.holds(skip.app)],
        tracked,
        at_base,
        contested,
    )
