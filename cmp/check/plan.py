"""Which sources of which Applications `check` renders, and with which renderer, as Argo CD would choose.

Argo CD picks a source's renderer from the Application and from the files in the source path: an
explicit type wins, then the sidecars' discover rules (chartshare's is a `chartshare.yaml` in the path),
then Kustomize (a kustomization file), Helm (a `Chart.yaml`) and, for anything else, a plain directory.
This is the one stage of `check` that looks at the filesystem before rendering; a source it cannot render
is skipped with the field or the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cmp.check import directory, kustomize, sources
from cmp.check.applications import Application, Skip, Source
from cmp.check.repos import Repositories
from cmp.errors import ChartShareError
from cmp.inputs.paths import CONFIG_FILE

PLUGIN_NAME = "chartshare-v1"  # plugin.yaml: metadata.name chartshare, spec.version v1
RENDERERS = ("chartshare", "helm", "kustomize", "directory")  # an app's row names the first it uses


@dataclass(frozen=True, slots=True)
class Job:
    """One source of one Application to render, and how."""

    app: Application
    source: Source
    renderer: str  # one of RENDERERS
    app_dir: Path
    repo_root: Path
    raw: bool
    helm: str
    timeout: float


@dataclass(frozen=True, slots=True)
class Plan:
    """The jobs to render, the sources skipped, and the sources that are bad input."""

    jobs: list[Job]
    skipped: list[Skip]
    errors: list[str]


def plan(
    applications: Iterable[Application],
    repositories: Repositories,
    *,
    raw: bool,
    helm: str,
    timeout: float,
) -> Plan:
    """Which sources to render with which renderer, as Argo CD would choose; the rest skipped with a reason.
    A source renders from the checkout its repoURL maps to, else from the repository root."""
    result = Plan([], [], [])
    for app in applications:
        for source in app.sources:
            root = repositories.checkout_of(source.repo_url) or repositories.root
            try:
                choice = choose_renderer(source, root)
            except ChartShareError as error:
                result.errors.append(f"{app.origin}: spec.{source.label}: {error}")
                continue
            if isinstance(choice, str):
                result.skipped.append(Skip(app.name, f"{source.label}: {choice}"))
            elif choice is not None:
                renderer, app_dir = choice
                result.jobs.append(Job(app, source, renderer, app_dir, root, raw, helm, timeout))
    return result


def choose_renderer(source: Source, root: Path) -> tuple[str, Path] | str | None:
    """(renderer, app dir), a reason to skip, or None for a values-only `ref` source."""
    if source.ref and source.path is None and not source.chart:
        return None
    if source.chart:
        origin = source.repo_url or "a Helm repository"
        return f"chart {source.chart} comes from {origin}, not from the local repository"
    raw_path = source.path if source.path is not None else ""
    try:
        app_dir = (root / raw_path.strip("/")).resolve()
    except (OSError, RuntimeError):  # a symlink loop: RuntimeError in Python 3.11
        raise ChartShareError(f"path {raw_path!r} is a symlink loop") from None
    if not app_dir.is_relative_to(root):
        raise ChartShareError(f"path {raw_path!r} resolves outside the repository root {root}")
    if not app_dir.is_dir():
        return f"path {raw_path} is not a folder of the local repository (repoURL {source.repo_url or '?'})"
    has_config = (app_dir / CONFIG_FILE).is_file()
    explicit = source.types[0] if source.types else None
    if explicit is None:  # Argo CD asks the sidecars' discover rules first; kustomize wins over a Chart.yaml
        if has_config:
            return "chartshare", app_dir
        if kustomize.kustomization_in(app_dir) is not None:
            explicit = "kustomize"
        elif (app_dir / "Chart.yaml").is_file():
            explicit = "helm"
        else:
            explicit = "directory"
    if explicit == "helm":
        unsupported = [key for key in source.helm if key in sources.UNSUPPORTED_HELM_FIELDS]
        if unsupported:
            flag = sources.UNSUPPORTED_HELM_FIELDS[unsupported[0]]
            return f"helm.{unsupported[0]} ({flag}) is not evaluated by check"
        return "helm", app_dir
    if explicit == "kustomize":
        why = kustomize.unevaluated(source.kustomize)
        _, remote = kustomize.references(app_dir, root)
        if why is None and remote:
            why = f"{remote[0]} is a remote base, which check cannot read offline"
        return why or ("kustomize", app_dir)
    if explicit == "directory":
        why = directory.unevaluated(source.directory)
        files = directory.manifest_files(app_dir, root, source.directory, f"spec.{source.label}.directory")
        jsonnet = directory.jsonnet_file(files)
        if why is None and jsonnet is not None:
            why = f"directory: {jsonnet.relative_to(app_dir)} is jsonnet, which check does not evaluate"
        return why or ("directory", app_dir)
    name = str(source.plugin.get("name") or "")
    if name and name != PLUGIN_NAME:
        if name == "chartshare":
            return f"plugin name 'chartshare' matches no sidecar: Applications must name it {PLUGIN_NAME}"
        return f"plugin {name} is not chartshare"
    if not has_config:
        return (
            f"plugin {name or '{}'} but {raw_path or '.'} holds no {CONFIG_FILE}, which chartshare "
            "discovers apps by: Argo CD would not hand it to chartshare"
        )
    return "chartshare", app_dir
