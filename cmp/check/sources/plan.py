"""Which sources of which Applications `check` renders, and with which renderer, as Argo CD would choose.

Argo CD picks a source's renderer from the Application and from the files in the source path: an
explicit type wins, then the sidecars' discover rules (chartshare's is a `chartshare.yaml` in the path),
then Kustomize (a kustomization file), Helm (a `Chart.yaml`) and, for anything else, a plain directory.
A source with `chart:` is Argo CD's Helm source of a published chart: `repoURL` a Helm repository (or an
OCI registry: `oci://`, or a registry path without a scheme, as Argo CD writes one) and `targetRevision`
its version. This is the one stage of `check` that looks at the filesystem before rendering; a source it
cannot render is skipped with the field or the reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from cmp.check.fleet.applications import RENDER_FAILED, Application, Skip, Source
from cmp.check.fleet.repos import SCRATCH_NOTE, Repositories
from cmp.check.sources import directory, kustomize, repo_server
from cmp.errors import ChartShareError
from cmp.inputs.paths import CONFIG_FILE
from cmp.inputs.policy_file import PolicyText
from cmp.model import CHART_NAME, DEFAULT_PROJECT, EXACT_VERSION, REMOTE_SCHEMES, Access, RemoteChart

PLUGIN_NAME = "chartshare-v1"  # plugin.yaml: metadata.name chartshare, spec.version v1
_REGISTRY_PATH = re.compile(r"^[A-Za-z0-9.-]+(?::[0-9]+)?(?:/|$)")  # host[:port]/path, as Argo CD's Helm OCI


@dataclass(frozen=True, slots=True)
class Job:
    """One source of one Application to render, and how."""

    app: Application
    source: Source
    renderer: str  # one of claims.RENDERERS
    app_dir: Path
    repo_root: Path
    raw: bool
    helm: str
    timeout: float
    remote: RemoteChart | None = None  # the published chart it renders (cmp/check/sources/charts.py sets app_dir to it)
    cache_root: Path | None = None  # $CHARTSHARE_CACHE, once cmp/check/sources/charts.py has made remote charts present
    built: Path | None = None  # the chart's scratch copy with its dependencies (cmp/check/sources/dependencies.py)
    policy: PolicyText | None = None  # the fleet policy (`--policy`) a chartshare source renders under
    repositories: str = ""  # CHARTSHARE_REPOSITORIES of the run, which the app's spec.project may use
    build_options: tuple[str, ...] = ()  # a kustomize source's: argocd-cm's kustomize.buildOptions, or the flag's
    helm_charts: tuple[tuple[RemoteChart, Path], ...] = ()  # helmCharts its kustomizations name, in the chart store

    @property
    def access(self) -> Access:
        """The credentials the app's project may use, and so the stored charts it may be served."""
        return Access(self.repositories, self.app.project or DEFAULT_PROJECT)


@dataclass(frozen=True, slots=True)
class Plan:
    """The jobs to render, the sources skipped, and the sources that are bad input."""

    jobs: list[Job]
    skipped: list[Skip]
    errors: list[str]
    notes: set[str] = field(default_factory=set)  # said once on stderr


def plan(
    applications: Iterable[Application],
    repositories: Repositories,
    *,
    raw: bool,
    helm: str,
    timeout: float,
    build_options: tuple[str, ...] = (),
    policy: PolicyText | None = None,
) -> Plan:
    """Which sources to render with which renderer, as Argo CD would choose; the rest skipped with a reason.
    A source renders from the checkout its repoURL names; a repository root without remotes stands for
    any other (said once), one with remotes for none (the app is skipped naming the --repo that reads it)."""
    result = Plan([], [], [])
    for app in applications:
        git = [source for source in app.sources if not source.chart]  # a chart's repoURL is no Git repository
        unread = [source for source in git if repositories.folder_of(source.repo_url) is None]
        if unread:  # Argo CD could not render the app without that source; check reads no other in its place
            result.skipped.append(Skip(app.name, f"{unread[0].label}: {repositories.unmapped(unread[0].repo_url)}"))
            continue
        if any(repositories.stands_in(source.repo_url) for source in git):
            result.notes.add(SCRATCH_NOTE.format(root=repositories.root))
        refs = [source for source in git if source.ref]  # where `$ref/` value files are read
        for source in app.sources:
            url = source.repo_url if not source.chart else refs[0].repo_url if refs else ""
            root = repositories.folder_of(url) or repositories.root  # every Git source's was found above
            try:
                choice = choose_renderer(source, root)
            except ChartShareError as error:
                result.errors.append(f"{app.origin}: spec.{source.label}: {error}")
                continue
            if isinstance(choice, str):
                failed = choice.startswith(RENDER_FAILED)
                result.skipped.append(Skip(app.name, choice if failed else f"{source.label}: {choice}"))
            elif isinstance(choice, RemoteChart):
                result.jobs.append(Job(app, source, "helm", root, root, raw, helm, timeout, remote=choice))
            elif choice is not None:
                renderer, app_dir = choice
                options = build_options if renderer == "kustomize" else ()
                job = Job(app, source, renderer, app_dir, root, raw, helm, timeout, policy=policy)
                result.jobs.append(replace(job, build_options=options))
    return result


def choose_renderer(source: Source, root: Path) -> tuple[str, Path] | RemoteChart | str | None:
    """(renderer, app dir), the published chart of a Helm-repository source, a reason to skip, or None for
    a values-only `ref` source."""
    if source.ref and source.path is None and not source.chart:
        return None
    if source.chart:
        return published_chart(source)
    raw_path = source.path if source.path is not None else ""
    try:
        app_dir = (root / raw_path.strip("/")).resolve()
    except (OSError, RuntimeError):  # a symlink loop: RuntimeError in Python 3.11
        raise ChartShareError(f"path {raw_path!r} is a symlink loop") from None
    if not app_dir.is_relative_to(root):
        raise ChartShareError(f"path {raw_path!r} resolves outside the repository root {root}")
    if not app_dir.is_dir():  # Argo CD's ComparisonError: the app cannot be rendered, not a source check skips
        where = f"{source.label}.path {raw_path} (repoURL {source.repo_url or '?'})"
        return f"{RENDER_FAILED}: app path does not exist: {where}"
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
        return unsupported(source) or ("helm", app_dir)
    if explicit == "kustomize":
        why = kustomize.unevaluated(source.kustomize)
        _, remote = kustomize.references(app_dir, root)
        if why is None and remote:
            why = f"{remote[0]} is a remote base, which check cannot read offline"
        return why or ("kustomize", app_dir)
    if explicit == "directory":
        directory.manifest_files(app_dir, root, source.directory, f"spec.{source.label}.directory")
        return "directory", app_dir
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


def published_chart(source: Source) -> RemoteChart | str:
    """The chart of Argo CD's Helm-repository source, or why check cannot render it."""
    url, name, version = source.repo_url.rstrip("/"), source.chart or "", source.target_revision
    if _REGISTRY_PATH.match(url):
        url = f"oci://{url}"  # Argo CD's Helm OCI source: a registry path without a scheme
    if url.startswith("oci://") and "/" in name.strip("/"):  # `chart: karpenter/karpenter`: a path in the registry
        folder, _, name = name.strip("/").rpartition("/")
        url = f"{url}/{folder}"
    if not url.startswith(REMOTE_SCHEMES):
        return f"chart {name}: repoURL {source.repo_url or '(none)'} is neither a Helm repository nor an OCI registry"
    if not CHART_NAME.match(name):
        return f"chart {name!r} is not a chart name"
    if not EXACT_VERSION.match(version):
        return (
            f"chart {name}: targetRevision {version!r} is not one exact version; check renders a published chart "
            "at the version it pins (pin targetRevision)"
        )
    return unsupported(source) or RemoteChart(url, name, version)


def unsupported(source: Source) -> str | None:
    """Why check cannot render a Helm source's `helm:` block as Argo CD would, if it cannot."""
    fields = [key for key in source.helm if key in repo_server.UNSUPPORTED_HELM_FIELDS]
    if not fields:
        return None
    return f"helm.{fields[0]} ({repo_server.UNSUPPORTED_HELM_FIELDS[fields[0]]}) is not evaluated by check"
