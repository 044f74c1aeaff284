"""helm starts before typer loads; typer stays the authority on the command line.

The early reader must understand generate's command line exactly as typer does, or decline; the early
helm is used only for an equal configuration and is killed otherwise.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import click
import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp.cache.key import Fingerprint
from cmp.cli import app as cli
from cmp.cli import exits, launch
from cmp.errors import ChartShareError
from cmp.helm import early, template
from cmp.inputs import options, parameters
from cmp.render.chart import chart_dir, chart_entry, load_ownership
from conftest import TESTS, run_cli

CHART = TESTS / "charts" / "shared"


def _generate_command() -> click.Command:
    group = typer.main.get_command(cli.app)
    assert isinstance(group, click.Group)
    return group.commands["generate"]


def test_typer_and_the_early_reader_know_the_same_options_of_generate() -> None:
    typer_flags = {
        name: param.is_flag or param.multiple
        for param in _generate_command().params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
        if name not in ("--help", "-h")
    }
    table = {flag: option.switch or option.kind != "string" for flag, option in parameters.BY_FLAG.items()}
    assert typer_flags == table


COMMAND_LINES = [
    ["generate"],
    ["generate", "apps/x"],
    ["generate", "apps/x", "--app", "web", "-n", "shop", "--release-name=r1"],
    ["generate", "-f", "a.yaml", "--values", "b.yaml", "--values=c.yaml", "--set", "a=1", "--set-string=b=2"],
    ["generate", "--skip-crds", "--skip-tests", "--include-crds", "--kube-version", "1.31.0"],
    ["generate", "--api-versions", "a/v1", "--api-versions=b/v1", "--config", "x.yaml", "--helm", "/bin/helm"],
    ["generate", "--timeout", "30", "-o", "json", "--repo-root", "/tmp", "--values-inline", "a: 1"],
    ["generate", "--output=yaml", "--timeout=1.5", "dir"],
]


def _typer_options(argv: list[str]) -> options.GenerateOptions | None:
    """The options typer's generate command builds from a command line; None when typer refuses it."""
    seen: list[options.GenerateOptions] = []

    class Stop(Exception):
        pass

    def record(self: options.GenerateOptions, env: object) -> None:
        seen.append(self)
        raise Stop

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(options.GenerateOptions, "resolve", record)
        with contextlib.suppress(Stop, click.UsageError):
            cli.app(argv, standalone_mode=False)
    return seen[0] if seen else None


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda argv: " ".join(argv[1:]) or "bare")
def test_the_early_reader_finds_the_options_typer_finds(argv: list[str]) -> None:
    typer_options = _typer_options(argv)
    assert typer_options is not None
    assert launch.read_generate(argv) == typer_options


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["generate", "--help"],
        ["generate", "-h"],
        ["generate", "-nshop"],
        ["generate", "-n=shop"],
        ["generate", "--", "dir"],
        ["generate", "a", "b"],
        ["generate", "--unknown", "x"],
        ["generate", "--app"],
        ["generate", "--app", "--namespace", "x"],
        ["generate", "--output", "xml"],
        ["generate", "--skip-tests=true"],
        ["check", "apps"],
    ],
)
def test_the_early_reader_declines_what_it_does_not_know(argv: list[str]) -> None:
    assert launch.read_generate(argv) is None


def _env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith(("ARGOCD_", "CHARTSHARE_"))}


def _cli_invocation(argv: list[str]) -> tuple[str, template.HelmInvocation, float]:
    """What the CLI path hands to template.render for this command line."""
    config = launch.read_generate(argv).resolve(_env())  # type: ignore[union-attr]
    chart = chart_dir(config, load_ownership(config))
    return config.helm, template.HelmInvocation(chart, config.template), config.timeout


CASE = TESTS / "cases" / "generate" / "owner-keeps-and-protects"


def test_the_early_helm_is_the_one_the_cli_uses(helm: str) -> None:
    argv = ["generate", str(CASE), "--app", "dev-a", "-n", "shoong", "--helm", helm, "--repo-root", str(TESTS)]
    launch.start_early(launch.read_generate(argv), _env())
    started = early.waiting()
    assert started is not None
    stream = template.render(*_cli_invocation(argv))
    assert early.waiting() is None and started.process.returncode == 0
    assert "kind: Namespace" in stream


def test_an_early_helm_for_another_invocation_is_killed(helm: str) -> None:
    argv = ["generate", str(CASE), "--app", "dev-a", "-n", "shoong", "--helm", helm, "--repo-root", str(TESTS)]
    launch.start_early(launch.read_generate(argv), _env())
    started = early.waiting()
    assert started is not None
    stream = template.render(*_cli_invocation([*argv, "--release-name", "other"]))
    assert started.process.returncode is not None and started.process.returncode < 0
    assert "\n  name: other\n" in stream and "\n  name: dev-a\n" not in stream  # the workload, named by release


def test_a_miss_is_judged_while_its_helm_renders(helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether the render may be kept (a scan of the chart's templates) is worked out once helm has started,
    not after it rendered."""
    asked: list[bool] = []
    judge = Fingerprint.judge
    monkeypatch.setattr(Fingerprint, "judge", lambda found: asked.append(early.waiting() is not None) or judge(found))
    env = {**_env(), "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    argv = ["generate", str(CASE), "--app", "dev-a", "-n", "shoong", "--helm", helm, "--repo-root", str(TESTS)]
    launch.start_early(launch.read_generate(argv), env)
    early.discard()
    assert asked == [True]


def test_sigterm_while_the_miss_is_judged_stops_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Argo CD's SIGTERM can land while the look-ahead works (helm just started): the look-ahead falls
    back on any Exception, so the signal must not be one, or the command goes on waiting for helm."""
    slow = tmp_path / "helm"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setattr(Fingerprint, "judge", lambda found: os.kill(os.getpid(), signal.SIGTERM) or time.sleep(5))
    env = {**_env(), "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    argv = ["generate", str(CASE), "--app", "dev-a", "--helm", str(slow), "--repo-root", str(TESTS)]
    started: list[object] = []
    before = signal.getsignal(signal.SIGTERM)
    try:
        status = exits.run(lambda: launch.start_early(launch.read_generate(argv), env) or started.append(1) or 0)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert (status, started, early.waiting()) == (exits.TERMINATED, [], None)


def test_sigterm_while_an_error_is_said_still_ends_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM that lands in the error path is the command's end too, not a traceback; a second one is
    ignored while chartshare cleans up."""
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        os.kill(os.getpid(), signal.SIGTERM)  # the first raises where it lands, the second is ignored

    def failing() -> int:
        raise ChartShareError("bad input")

    monkeypatch.setattr(exits, "say", say)
    before = signal.getsignal(signal.SIGTERM)
    try:
        status = exits.run(failing)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert status == exits.TERMINATED
    assert said == ["error: bad input", "error: stopped by SIGTERM; helm and everything it started were killed"]


def test_an_early_helm_nobody_takes_is_killed(tmp_path: Path) -> None:
    slow = tmp_path / "helm"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    argv = ["generate", str(CASE), "--app", "dev-a", "--helm", str(slow), "--repo-root", str(TESTS)]
    launch.start_early(launch.read_generate(argv), _env())
    started = early.waiting()
    assert started is not None
    begun = time.monotonic()
    early.discard()
    assert started.process.returncode is not None
    assert time.monotonic() - begun < 5


def test_nothing_starts_early_when_the_configuration_is_wrong() -> None:
    launch.start_early(launch.read_generate(["generate", str(CASE), "--repo-root", str(TESTS)]), {})  # no app name
    assert early.waiting() is None


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        ("apiVersion: chartshare/v1\nkind: ChartShare\n", "."),
        ("chart: ../../charts/app\n", "../../charts/app"),
        ("chart: '../c'   # the chart\n", "../c"),
        ('chart: "../c"\n', "../c"),
        ("rules:\n  - match: {kind: A}\n    chart: x\n", "."),
        ("chart: ../a\nchart: ../b\n", None),
        ('"chart": ../a\n', None),
        ("chart: &c ../a\n", None),
        ("chart:\n  ../a\n", None),
        ("? chart\n: ../a\n", None),
    ],
)
def test_the_chart_line_is_read_only_when_plain(text: str, entry: str | None) -> None:
    assert chart_entry(text) == entry


def test_help_still_works_and_leaves_no_helm_behind(helm: str) -> None:
    result = run_cli(["generate", "--help"], env={"CHARTSHARE_HELM": helm})
    assert result.exit_code == 0
    assert "--release-name" in result.stdout and "Render the chart" in result.stdout


TOKENS = [
    "--release-name", "--namespace", "-n", "--values", "-f", "--values-inline", "--set", "--set-string",
    *parameters.BY_FLAG, "--help", "--", "-nx", "--app=", "--timeout=2", "--output=json",
    "yaml", "json", "xml", "1", "0.5", "nan", "a=1", "dir", "-", "", "x y", "--unknown", "-x",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=8))
def test_a_line_the_early_reader_takes_is_read_as_typer_reads_it(tokens: list[str]) -> None:
    """The reader decides alone for the lines it takes (typer never sees them): each must be one typer
    accepts with the very same options."""
    argv = ["generate", *tokens]
    early = launch.read_generate(argv)
    if early is None:
        return
    assert _typer_options(argv) == early, f"typer reads {argv!r} otherwise, or refuses it"
