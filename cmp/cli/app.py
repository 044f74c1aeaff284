"""The command line: argv and environment in, manifests on stdout, diagnostics on stderr, an exit status.

Parsing and help are typer's; the options of `generate` (and those init and parameters share with it) are
declared once, in the option table of cmp/inputs/parameters.py. How a command ends (output written only on
success, every error one stderr line, the exit status) is exits.py's, shared with launch.py's plain path.
"""

from __future__ import annotations

import enum
import functools
import inspect
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import click
import typer

from cmp import __version__
from cmp.cli import exits
from cmp.errors import BadInput, UsageError
from cmp.inputs.options import Given, options
from cmp.inputs.parameters import BY_OPTION, GENERATE_OPTIONS, Parameter

if TYPE_CHECKING:
    from cmp.check.command import Outcome as CheckOutcome

_HELP = """Share one Helm chart between several Argo CD Applications without fighting over its objects.

Argo CD's sidecar runs init, generate and parameters; check runs in CI.

Start at README.md in chartshare's repository; each command's --help names its page under docs/."""

app = typer.Typer(
    name="chartshare",
    help=_HELP,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _option(option: Parameter) -> Any:
    """typer's option for one row of the option table."""
    if option.switch:
        return typer.Option("/".join(option.flags), help=option.tooltip)
    if option.choices:
        return typer.Option(*option.flags, help=option.tooltip, click_type=click.Choice(option.choices))
    return typer.Option(*option.flags, help=option.tooltip)


def _annotation(option: Parameter) -> Any:
    """The annotation of one row of the option table, as typer reads a command's signature."""
    if option.switch:
        return Annotated[Optional[bool], _option(option)]
    if option.kind == "string":
        return Annotated[Optional[str], _option(option)]
    return Annotated[Optional[list[str]], _option(option)]


# Arguments and options several commands share, declared once so their names and help stay alike.
AppDir = Annotated[Path, typer.Argument(help="The Application's source path.")]
ConfigFile = Annotated[Optional[str], _option(BY_OPTION["config"])]
AppName = Annotated[Optional[str], _option(BY_OPTION["app"])]
HelmBinary = Annotated[Optional[str], _option(BY_OPTION["helm"])]
RepoRoot = Annotated[Optional[str], _option(BY_OPTION["repo-root"])]


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
    """The options before the command (--version); the group's help is _HELP."""


def _generate_option(option: Parameter) -> inspect.Parameter:
    return inspect.Parameter(option.field, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=_annotation(option))


def _given(option: Parameter, value: object) -> Given | None:
    """A typer value as the option table spells it: a switch's choice, a repeated option's tuple."""
    if value is None or (value is False and len(option.flags) == 1):
        return None
    if option.switch:
        return option.choices[0 if value else 1]
    return tuple(value) if isinstance(value, list) else str(value)


def generate(app_dir: Path = Path("."), **given: object) -> int:
    """Render the chart and print the manifests this Application owns (Argo CD's generate step).

    Reference: docs/generate.md (every parameter and flag); the ownership rules it applies: docs/rules.md.
    """
    found = {option.name: _given(option, given[option.field]) for option in GENERATE_OPTIONS}
    return exits.generate(options(app_dir, found))


_GENERATE_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter("app_dir", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=Path("."), annotation=AppDir),
        *(_generate_option(option) for option in GENERATE_OPTIONS),
    ]
)
generate.__signature__ = _GENERATE_SIGNATURE  # type: ignore[attr-defined]  # typer reads the table's options
generate.__annotations__ = {name: value.annotation for name, value in _GENERATE_SIGNATURE.parameters.items()}
app.command()(generate)


@app.command("init")
def init_(
    app_dir: AppDir = Path("."),
    config: ConfigFile = None,
    helm: HelmBinary = None,
    timeout: Annotated[
        Optional[float], typer.Option("--timeout", min=1, help="Seconds init may take in all (default 30).")
    ] = None,
    repo_root: RepoRoot = None,
) -> int:
    """Make the chart and its dependencies present before generate renders (Argo CD's init step).

    Reference: docs/install.md (charts from Helm repositories and OCI registries, $CHARTSHARE_REPOSITORIES, caches).

    A remote chart goes to the chart cache; charts/ stays as vendored; file://, HTTP(S) and OCI dependencies are built.
    """
    from cmp.init.command import init

    root = Path(repo_root) if repo_root else None
    for line in init(app_dir, os.environ, config=config, helm=helm, timeout=timeout, repo_root=root):
        exits.say(f"init: {line}")
    return 0


@app.command()
def parameters(
    app_dir: AppDir = Path("."),
    app_name: AppName = None,
    helm: HelmBinary = None,
    repo_root: RepoRoot = None,
) -> int:
    """Print what Argo CD's Parameters tab shows for this app (its dynamic parameter announcement, JSON).

    Reference: docs/generate.md, "Parameters in Argo CD".

    The chart's values, the value files found beside it, and what the ownership rules decide for this app.
    """
    from cmp.parameters import announcement

    root = Path(repo_root) if repo_root else None
    entries = announcement.announce(app_dir, os.environ, app_name=app_name, helm=helm, repo_root=root)
    sys.stdout.write(announcement.render(entries))
    return 0


class CheckFormat(enum.StrEnum):
    text = "text"
    json = "json"
    junit = "junit"
    markdown = "markdown"
    sarif = "sarif"
    html = "html"


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    end = "\r" + " " * (width + 40) + "\r" if done == total else ""
    sys.stderr.write(f"\rchartshare: rendering [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{end}")
    sys.stderr.flush()


@app.command()
def check(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Application / ApplicationSet files or folders (recursive); with --merge, claims documents."
        ),
    ],
    repo_root: Annotated[
        Path, typer.Option("--repo-root", help="The local repository the apps' source paths are in.")
    ] = Path("."),
    output_format: Annotated[
        Optional[CheckFormat], typer.Option("--format", help="Report format (default text).")
    ] = None,
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
    clusters: Annotated[
        Optional[Path],
        typer.Option(
            "--clusters", help="Argo CD's cluster Secrets, `kubectl get secret -o yaml` (clusters generator)."
        ),
    ] = None,
    repo: Annotated[
        Optional[list[str]],
        typer.Option("--repo", help="URL=DIR: the checkout of another repository (repeatable)."),
    ] = None,
    tracking_method: Annotated[
        Optional[str],
        typer.Option(
            "--tracking-method",
            click_type=click.Choice(["annotation", "label", "annotation+label"]),
            help="How Argo CD tracks live objects (default annotation, or argocd-cm's).",
        ),
    ] = None,
    instance_label_key: Annotated[
        Optional[str],
        typer.Option("--instance-label-key", help="The label of label tracking (default app.kubernetes.io/instance)."),
    ] = None,
    installation_id: Annotated[
        Optional[str], typer.Option("--installation-id", help="This Argo CD's installationID (default none).")
    ] = None,
    argocd_cm: Annotated[
        Optional[Path],
        typer.Option(
            "--argocd-cm",
            help="An argocd-cm dump: tracking method, instance label key, installation ID, kustomize.buildOptions, "
            "ignoreDifferences customizations.",
        ),
    ] = None,
    kustomize_build_options: Annotated[
        Optional[str],
        typer.Option(
            "--kustomize-build-options",
            metavar="OPTIONS",
            help="kustomize build options, as argocd-cm's kustomize.buildOptions (replaces them), e.g. --enable-helm.",
        ),
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Published charts from the chart cache only; skip the others.")
    ] = False,
    shard: Annotated[
        Optional[str],
        typer.Option("--shard", metavar="I/N", help="Render shard I of N only; print its claims document."),
    ] = None,
    merge: Annotated[
        bool, typer.Option("--merge", help="PATHS are the shards' claims documents: print the fleet's report.")
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Render every source, neither reading nor keeping the render cache.")
    ] = False,
    base: Annotated[
        Optional[str],
        typer.Option(
            "--base",
            metavar="REV",
            help="Also render the fleet at this Git revision: what the change does (LIFECYCLE).",
        ),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any app is skipped (a source check cannot render).")
    ] = False,
    report: Annotated[
        Optional[list[str]],
        typer.Option(
            "--report", metavar="FORMAT=FILE", help="Also write this format to FILE, from the same run (repeatable)."
        ),
    ] = None,
    baseline: Annotated[
        Optional[Path],
        typer.Option("--baseline", help="Findings recorded here are reported as known and do not fail the run."),
    ] = None,
    write_baseline: Annotated[
        Optional[Path],
        typer.Option("--write-baseline", help="Record this run's findings in FILE (and pass): adopt check gradually."),
    ] = None,
    policy: Annotated[
        Optional[Path],
        typer.Option("--policy", metavar="FILE", help="The fleet policy (chartshare-policy.yaml) the sidecar reads."),
    ] = None,
) -> int:
    """Render every Application from Git and report objects two of them would both claim (exit 1), in CI.

    Reference: docs/check.md (sources, generators, options, --live) and docs/ci.md (recipes, --shard, --merge).
    """
    from cmp.check.command import Installation, Reports, check_fleet, merge_claims
    from cmp.check.output import shards
    from cmp.inputs.config import DEFAULT_TIMEOUT, default_helm

    chosen = (output_format or CheckFormat.text).value
    reports = Reports(tuple(_report_file(text) for text in report or ()), baseline, write_baseline)
    if merge:
        shard_side = {
            "--shard": shard,
            "--live": live,
            "--raw": raw,
            "--clusters": clusters,
            "--repo": repo,
            "--tracking-method": tracking_method,
            "--instance-label-key": instance_label_key,
            "--installation-id": installation_id,
            "--argocd-cm": argocd_cm,
            "--kustomize-build-options": kustomize_build_options,
            "--offline": offline,
            "--base": base,
            "--policy": policy,
        }
        given = [flag for flag, value in shard_side.items() if value]
        if given:
            raise UsageError(f"--merge takes {given[0]} from the shards' claims documents: leave it out here")
        return _checked(merge_claims(paths, output_format=chosen, reports=reports, root=repo_root), strict)
    part = shards.parse(shard) if shard is not None else None
    if part is not None and output_format is not None:
        raise UsageError("--format is the report's: a shard prints its claims document; give --format to --merge")
    if part is not None and reports != Reports():
        flag = "--report" if report else "--baseline" if baseline else "--write-baseline"
        raise UsageError(f"{flag} is the report's: a shard prints its claims document; give {flag} to --merge")
    root = repo_root.resolve()
    if not root.is_dir():
        raise UsageError(f"--repo-root {repo_root} is not a directory")
    outcome = check_fleet(
        paths,
        root,
        output_format=chosen,
        raw=raw,
        live=live,
        control_plane_namespace=control_plane_namespace,
        helm=helm or default_helm(os.environ),
        timeout=DEFAULT_TIMEOUT,
        workers=jobs,
        progress=_progress if sys.stderr.isatty() else None,
        environ=os.environ,
        installation=Installation(
            clusters=clusters,
            repos=tuple(repo or ()),
            tracking_method=tracking_method,
            instance_label_key=instance_label_key,
            installation_id=installation_id,
            argocd_cm=argocd_cm,
            kustomize_build_options=kustomize_build_options,
        ),
        offline=offline,
        shard=part,
        cache=not no_cache,
        base=base,
        reports=reports,
        policy=policy,
    )
    return _checked(outcome, strict)


def _report_file(text: str) -> tuple[str, Path]:
    """`--report FORMAT=FILE` as (format, file)."""
    name, equals, file = text.partition("=")
    choices = ", ".join(member.value for member in CheckFormat)
    if not equals or not file:
        raise UsageError(f"--report {text!r} is not FORMAT=FILE (e.g. --report sarif=chartshare.sarif)")
    if name not in CheckFormat.__members__:
        raise UsageError(f"--report {text}: the format must be one of {choices}")
    return name, Path(file)


def _checked(outcome: CheckOutcome, strict: bool = False) -> int:
    """check's ending: the cache notices, then bad input (every problem, nothing on stdout, exit 2), or the
    notes and the report (exit 1 with a conflict or a failed render, or with --strict a skipped app)."""
    for notice in outcome.notices:
        exits.say(notice)
    if outcome.errors:
        raise BadInput(outcome.errors)
    for note in outcome.notes:
        exits.say(f"note: {note}")
    for path, text in outcome.files:
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as problem:
            why = problem.strerror or str(problem)
            raise BadInput([f"{path}: cannot write the report: {why}; give a file in a folder that exists"]) from None
    sys.stdout.write(outcome.text)
    if outcome.recorded:
        return 0
    return 1 if outcome.conflicts or outcome.failed or (strict and outcome.skipped) else 0


@functools.cache
def click_command() -> click.Command:
    """The click command typer builds from `app` on every call (a third of a served `init`): built once,
    and in the warm process before it forks."""
    return typer.main.get_command(app)


def run_typer(argv: list[str]) -> int:
    """The typer CLI on a command line: the command's exit status, or click's for help and usage errors
    (which click prints itself)."""
    try:
        status = click_command()(argv, standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as problem:
        problem.show()
        return problem.exit_code
    except click.exceptions.Abort:
        exits.say("error: aborted")
        return 1
    return status if isinstance(status, int) else 0
