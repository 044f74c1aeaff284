"""The `check` command from end to end: Application files -> plan -> renders -> analysis -> report text.

The CLI parses the options and, with what this returns, prints and chooses the exit status; nothing here
prints or exits. Bad input (manifests, paths, renders that fail) comes back as error lines before any
report is written, so a report is only ever printed for a fleet that rendered whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cmp.check import analysis, applications, inventory, renders
from cmp.check import report as reporting
from cmp.check.plan import plan
from cmp.check.repos import Repositories, remotes_of

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The report to print, how many conflicts it holds, or the errors that stopped the check."""

    text: str = ""
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)


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
) -> Outcome:
    """Render every Application under `paths` from the repository at `root` and report on them.
    `progress` (for a terminal) is called only when a bar is worth showing."""
    repositories = Repositories.build(root, remotes_of(root), ())
    loaded = inventory.load(paths, control_plane_namespace, repositories)
    live_objects = applications.load_live(live, loaded.errors) if live is not None else None
    if not (loaded.applications or loaded.skipped or loaded.errors):
        loaded.errors.append(f"no Application or ApplicationSet in {', '.join(map(str, paths))}")
    planned = plan(loaded.applications, repositories, raw=raw, helm=helm, timeout=timeout)
    if loaded.errors or planned.errors:
        return Outcome(errors=loaded.errors + planned.errors)
    wanted = progress is not None and reporting.progress_wanted(True, json_output, environ, len(planned.jobs))
    rendered = renders.render_all(planned.jobs, workers or renders.default_workers(), progress if wanted else None)
    failed = [result.error for result in rendered if result.error]
    if failed:
        return Outcome(errors=failed)
    report = analysis.analyse(rendered, [*loaded.skipped, *planned.skipped], live_objects)
    text = reporting.to_json(report) if json_output else reporting.to_text(report, raw=raw)
    return Outcome(text, len(report.conflicts))
