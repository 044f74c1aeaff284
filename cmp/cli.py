"""The command line: argv and environment in, manifests on stdout, diagnostics on stderr, an exit status.

The only module that prints or exits. Output is built fully in memory and written only after everything
succeeded: on any error stdout stays empty, so Argo CD fails the sync instead of pruning the app.
"""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from . import __version__
from .errors import ChartShareError

app = typer.Typer(
    name="chartshare",
    help="Share one Helm chart between several Argo CD Applications without fighting over its objects.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(enum.StrEnum):
    yaml = "yaml"
    json = "json"


def _say(line: str) -> None:
    sys.stderr.write(f"chartshare: {line}\n")


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
    app_dir: Annotated[Path, typer.Argument(help="The Application's source path.")] = Path("."),
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
    config: Annotated[Optional[str], typer.Option("--config", help="Ownership file (default chartshare.yaml).")] = None,
    app_name: Annotated[
        Optional[str], typer.Option("--app", help="Application name (default $ARGOCD_APP_NAME).")
    ] = None,
    helm: Annotated[
        Optional[str], typer.Option("--helm", help="helm binary (default $CHARTSHARE_HELM, else helm).")
    ] = None,
    timeout: Annotated[
        Optional[float], typer.Option("--timeout", min=1, help="Seconds helm may take (default 45).")
    ] = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="Output format.")] = OutputFormat.yaml,
    repo_root: Annotated[
        Optional[Path], typer.Option("--repo-root", help="Repository root (default: derived).")
    ] = None,
) -> None:
    """Render the chart and print the manifests this Application owns (Argo CD's generate step)."""
    from . import manifests, pipeline
    from .launch import GenerateOptions

    options = GenerateOptions(
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
    )
    resolved = options.resolve(os.environ)
    outcome = pipeline.generate(resolved)
    if output is OutputFormat.json:
        text = manifests.emit_json(outcome.resources)
    else:
        text = manifests.emit_yaml(outcome.resources)
    for line in pipeline.summary(outcome):
        _say(line)
    sys.stdout.write(text)
    sys.stdout.flush()


@app.command("init")
def init_(
    app_dir: Annotated[Path, typer.Argument(help="The Application's source path.")] = Path("."),
    config: Annotated[Optional[str], typer.Option("--config", help="Ownership file (default chartshare.yaml).")] = None,
    helm: Annotated[
        Optional[str], typer.Option("--helm", help="helm binary (default $CHARTSHARE_HELM, else helm).")
    ] = None,
    timeout: Annotated[
        Optional[float], typer.Option("--timeout", min=1, help="Seconds init may take in all (default 30).")
    ] = None,
    repo_root: Annotated[
        Optional[Path], typer.Option("--repo-root", help="Repository root (default: derived).")
    ] = None,
) -> None:
    """Make the chart's dependencies present (Argo CD's init step): vendored charts/ as they are, file://
    packaged offline, HTTP(S) and OCI repositories with $CHARTSHARE_REPOSITORIES credentials and a cache."""
    from . import dependencies

    for line in dependencies.run(app_dir, os.environ, config=config, helm=helm, timeout=timeout, repo_root=repo_root):
        _say(f"init: {line}")


@app.command()
def parameters(
    app_dir: Annotated[Path, typer.Argument(help="The Application's source path.")] = Path("."),
    app_name: Annotated[
        Optional[str], typer.Option("--app", help="Application name (default $ARGOCD_APP_NAME).")
    ] = None,
    helm: Annotated[
        Optional[str], typer.Option("--helm", help="helm binary (default $CHARTSHARE_HELM, else helm).")
    ] = None,
    repo_root: Annotated[
        Optional[Path], typer.Option("--repo-root", help="Repository root (default: derived).")
    ] = None,
) -> None:
    """Print the dynamic parameter announcement (JSON) for Argo CD's Parameters tab: the chart's values,
    the value files found beside it, and what the ownership rules decide for this app."""
    from . import announce

    entries = announce.announce(app_dir, os.environ, app_name=app_name, helm=helm, repo_root=repo_root)
    sys.stdout.write(announce.render(entries))
    sys.stdout.flush()


def main() -> None:
    """Console entry point: every failure becomes one stderr line and an exit status, never a traceback."""
    try:
        app()
    except ChartShareError as error:
        _say(f"error: {error}")
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        _say("error: interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as error:
        _say(f"error: internal error ({type(error).__name__}: {error}); please report it")
        sys.exit(1)
