"""The command line: argv and environment in, manifests on stdout, diagnostics on stderr, an exit status.

Parsing and help are typer's; how a command ends (output written only on success, every error one stderr
line and an exit status) is run.py's, shared with the plain-generate path of launch.py.
"""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from cmp import __version__
from cmp.cli import exits
from cmp.errors import UsageError

app = typer.Typer(
    name="chartshare",
    help="Share one Helm chart between several Argo CD Applications without fighting over its objects.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


# Arguments and options several commands share, declared once so their names and help stay alike.
AppDir = Annotated[Path, typer.Argument(help="The Application's source path.")]
ConfigFile = Annotated[Optional[str], typer.Option("--config", help="Ownership file (default chartshare.yaml).")]
AppName = Annotated[Optional[str], typer.Option("--app", help="Application name (default $ARGOCD_APP_NAME).")]
HelmBinary = Annotated[Optional[str], typer.Option("--helm", help="helm binary (default $CHARTSHARE_HELM, else helm).")]
RepoRoot = Annotated[Optional[Path], typer.Option("--repo-root", help="Repository root (default: derived).")]


class OutputFormat(enum.StrEnum):
    yaml = "yaml"
    json = "json"


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"chartshare {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Share one Helm chart between several Argo CD Applications without fighting over its objects."""


@app.command()
def generate(
    app_dir: AppDir = Path("."),
    release_name: Annotated[Optional[str], typer.Option("--release-name", help="helm release name.")] = None,
    namespace: Annotated[Optional[str], typer.Option("--namespace", "-n", help="helm --namespace.")] = None,
    values: Annotated[
        Optional[list[str]], typer.Option("--values", "-f", help="Value file (repeatable; '/' = repo root; globs).")
    ] = None,
    values_inline: Annotated[Optional[str], typer.Option("--values-inline", help="Inline values YAML, last.")] = None,
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="helm --set key=value (repeatable).")] = None,
    set_string: Annotated[
        Optional[list[str]], typer.Option("--set-string", help="helm --set-string key=value (repeatable).")
    ] = None,
    include_crds: Annotated[
        Optional[bool], typer.Option("--include-crds/--skip-crds", help="Render crds/ (default: include).")
    ] = None,
    skip_tests: Annotated[bool, typer.Option("--skip-tests", help="Leave out helm test hooks.")] = False,
    kube_version: Annotated[Optional[str], typer.Option("--kube-version", help="helm --kube-version.")] = None,
    api_versions: Annotated[
        Optional[list[str]], typer.Option("--api-versions", help="helm --api-versions entry (repeatable).")
    ] = None,
    config: ConfigFile = None,
    app_name: AppName = None,
    helm: HelmBinary = None,
    timeout: Annotated[
        Optional[float], typer.Option("--timeout", min=1, help="Seconds helm may take (default 45).")
    ] = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="Output format.")] = OutputFormat.yaml,
    repo_root: RepoRoot = None,
) -> None:
    """Render the chart and print the manifests this Application owns (Argo CD's generate step)."""
    from cmp.cli.launch import GenerateOptions

    exits.generate(
        GenerateOptions(
            app_dir=app_dir,
            release_name=release_name,
            namespace=namespace,
            values=tuple(values or ()),
            values_inline=values_inline,
            set_values=tuple(set_ or ()),
            set_strings=tuple(set_string or ()),
            include_crds=include_crds,
            skip_tests=skip_tests,
            kube_version=kube_version,
            api_versions=tuple(api_versions or ()),
            config=config,
            app_name=app_name,
            helm=helm,
            timeout=timeout,
            repo_root=repo_root,
            output=output.value,
        )
    )


@app.command("init")
def init_(
    app_dir: AppDir = Path("."),
    config: ConfigFile = None,
    helm: HelmBinary = None,
    timeout: Annotated[
        Optional[float], typer.Option("--timeout", min=1, help="Seconds init may take in all (default 30).")
    ] = None,
    repo_root: RepoRoot = None,
) -> None:
    """Make the chart's dependencies present (Argo CD's init step): vendored charts/ as they are, file://
    packaged offline, HTTP(S) and OCI repositories with $CHARTSHARE_REPOSITORIES credentials and a cache."""
    from cmp.init import dependencies

    for line in dependencies.run(app_dir, os.environ, config=config, helm=helm, timeout=timeout, repo_root=repo_root):
        exits.say(f"init: {line}")


@app.command()
def parameters(
    app_dir: AppDir = Path("."),
    app_name: AppName = None,
    helm: HelmBinary = None,
    repo_root: RepoRoot = None,
) -> None:
    """Print the dynamic parameter announcement (JSON) for Argo CD's Parameters tab: the chart's values,
    the value files found beside it, and what the ownership rules decide for this app."""
    from cmp.parameters import announce

    entries = announce.announce(app_dir, os.environ, app_name=app_name, helm=helm, repo_root=repo_root)
    sys.stdout.write(announce.render(entries))
    sys.stdout.flush()


class CheckFormat(enum.StrEnum):
    text = "text"
    json = "json"


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    end = "\r" + " " * (width + 40) + "\r" if done == total else ""
    sys.stderr.write(f"\rchartshare: rendering [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{end}")
    sys.stderr.flush()


@app.command()
def check(
    paths: Annotated[list[Path], typer.Argument(help="Application / ApplicationSet files or folders (recursive).")],
    repo_root: Annotated[
        Path, typer.Option("--repo-root", help="The local repository the apps' source paths are in.")
    ] = Path("."),
    output_format: Annotated[CheckFormat, typer.Option("--format", help="Report format.")] = CheckFormat.text,
    raw: Annotated[
        bool, typer.Option("--raw", help="Ignore every chartshare.yaml: the contention it removes.")
    ] = False,
    live: Annotated[
        Optional[list[Path]], typer.Option("--live", help="Live objects, `kubectl get -o yaml` (repeatable).")
    ] = None,
    control_plane_namespace: Annotated[
        str, typer.Option("--control-plane-namespace", help="Argo CD's own namespace.")
    ] = "argocd",
    helm: HelmBinary = None,
    jobs: Annotated[
        Optional[int], typer.Option("--jobs", "-j", min=1, help="Parallel renders (default: the CPUs).")
    ] = None,
) -> None:
    """Render every Application from Git and report objects two of them would both claim (exit 1)."""
    from cmp.check import applications, fleet
    from cmp.check import report as reporting
    from cmp.inputs.config import DEFAULT_TIMEOUT

    root = repo_root.resolve()
    if not root.is_dir():
        raise UsageError(f"--repo-root {repo_root} is not a directory")
    loaded = applications.load(paths, control_plane_namespace)
    live_objects = applications.load_live(live, loaded.errors) if live is not None else None
    if not (loaded.applications or loaded.skipped or loaded.errors):
        loaded.errors.append(f"no Application or ApplicationSet in {', '.join(map(str, paths))}")
    binary = helm or os.environ.get("CHARTSHARE_HELM", "") or "helm"
    planned = fleet.plan(loaded.applications, root, raw=raw, helm=binary, timeout=DEFAULT_TIMEOUT)
    _refuse(loaded.errors + planned.errors)
    json_output = output_format is CheckFormat.json
    wanted = reporting.progress_wanted(sys.stderr.isatty(), json_output, os.environ, len(planned.jobs))
    renders = fleet.run(planned.jobs, jobs or fleet.default_workers(), _progress if wanted else None)
    _refuse([rendered.error for rendered in renders if rendered.error])
    report = fleet.analyse(renders, [*loaded.skipped, *planned.skipped], live_objects)
    sys.stdout.write(reporting.to_json(report) if json_output else reporting.to_text(report, raw=raw))
    sys.stdout.flush()
    raise typer.Exit(1 if report.conflicts else 0)


def _refuse(problems: list[str]) -> None:
    """Bad input: every problem on stderr, nothing on stdout, exit 2."""
    if problems:
        for problem in problems:
            exits.say(f"error: {problem}")
        raise typer.Exit(2)


def main() -> None:
    """Console entry point: every failure becomes one stderr line and an exit status, never a traceback."""
    exits.guarded(app)
