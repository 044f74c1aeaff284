"""The `check` command from end to end: Application files -> plan -> published charts -> renders ->
analysis -> report text.

The CLI parses the options and, with what this returns, prints and chooses the exit status; nothing here
prints or exits. Bad input (manifests, paths, renders that fail) comes back as error lines before any
report is written, so a report is only ever printed for a fleet that rendered whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cmp.check import analysis, applications, charts, inventory, live, renders
from cmp.check import report as reporting
from cmp.check.generators.clusters import read_clusters
from cmp.check.live import Tracking
from cmp.check.plan import plan
from cmp.check.repos import Repositories, parse_mapping, remotes_of
from cmp.inputs.config import cache_root

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The report to print, how many conflicts it holds, or the errors that stopped the check."""

    text: str = ""
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for stderr, once each


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

    def tracking(self, errors: list[str]) -> Tracking:
        settings = live.read_argocd_cm(self.argocd_cm, errors) if self.argocd_cm is not None else {}
        given = {"method": self.tracking_method, "label_key": self.instance_label_key}
        given["installation_id"] = self.installation_id
        settings.update({key: value for key, value in given.items() if value is not None})
        return Tracking(**settings)

    def repositories(self, root: Path, errors: list[str]) -> Repositories:
        mappings = []
        for text in self.repos:
            try:
                mappings.append(parse_mapping(text, Path.cwd()))
            except ValueError as problem:
                errors.append(str(problem))
        return Repositories.build(root, remotes_of(root), mappings)


def check_fleet(
    paths: Sequence[Path],
    root: Path,
    *,
    json_output: bool,
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
) -> Outcome:
    """Render every Application under `paths` from the repository at `root` and report on them.
    `progress` (for a terminal) is called only when a bar is worth showing; `offline` takes published
    charts from the chart cache only."""
    problems: list[str] = []
    repositories = installation.repositories(root, problems)
    tracking = installation.tracking(problems)
    clusters = read_clusters(installation.clusters, problems) if installation.clusters is not None else None
    if problems:
        return Outcome(errors=problems)
    loaded = inventory.load(paths, control_plane_namespace, repositories, clusters)
    live_objects = applications.load_live(live, loaded.errors) if live is not None else None
    if not (loaded.applications or loaded.skipped or loaded.errors):
        loaded.errors.append(f"no Application or ApplicationSet in {', '.join(map(str, paths))}")
    planned = plan(loaded.applications, repositories, raw=raw, helm=helm, timeout=timeout)
    if loaded.errors or planned.errors:
        return Outcome(errors=loaded.errors + planned.errors)
    ready = charts.prepare(planned.jobs, cache_root=cache_root(environ), env=environ, offline=offline)
    if ready.errors:
        return Outcome(errors=ready.errors)
    wanted = progress is not None and reporting.progress_wanted(True, json_output, environ, len(ready.jobs))
    rendered = renders.render_all(ready.jobs, workers or renders.default_workers(), progress if wanted else None)
    failed = [result.error for result in rendered if result.error]
    if failed:
        return Outcome(errors=failed)
    skipped = [*loaded.skipped, *planned.skipped, *ready.skipped]
    report = analysis.analyse(rendered, skipped, live_objects, tracking)
    text = reporting.to_json(report) if json_output else reporting.to_text(report, raw=raw)
    return Outcome(text, len(report.conflicts), notes=sorted(loaded.notes))
