"""The console entry point: a plain `chartshare generate ...` runs without the CLI framework, helm first.

Python's start and the framework's import (click and typer) cost about as much as rendering a small
chart, and helm needs none of it. So the command line is first read here by a small reader that knows
only generate's options and declines anything else (help, other commands, forms it does not know). For a
line it reads, the configuration is resolved exactly as the CLI resolves it (`GenerateOptions.resolve`),
helm is started from chartshare.yaml's `chart:` line, YAML and the rules load while helm renders, and
the command runs through run.py, the same ending the typer CLI has; the reader is held to typer's parse
by tests. Any other line goes to the typer CLI.

`render.run_helm` adopts the early helm only when it was started with exactly the binary, invocation and
deadline the pipeline arrives at; otherwise, and on any exit that does not use it, the early helm is
killed. When reading chartshare.yaml's `chart:` line or anything else here is unsure or fails, no helm is
started early and the pipeline does everything itself, errors included.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from cmp.inputs.config import Config


class GenerateOptions(NamedTuple):
    """`generate`'s command-line options, as typer or the early reader found them."""

    app_dir: Path = Path(".")
    release_name: str | None = None
    namespace: str | None = None
    values: tuple[str, ...] = ()
    values_inline: str | None = None
    set_values: tuple[str, ...] = ()
    set_strings: tuple[str, ...] = ()
    include_crds: bool | None = None
    skip_tests: bool = False
    kube_version: str | None = None
    api_versions: tuple[str, ...] = ()
    config: str | None = None
    app_name: str | None = None
    helm: str | None = None
    timeout: float | None = None
    repo_root: Path | None = None
    output: str = "yaml"  # yaml or json

    def resolve(self, env: Mapping[str, str]) -> Config:
        """The run's configuration: flags over Application parameters over plugin env over defaults."""
        from cmp.inputs import config as configuration
        from cmp.inputs.parameters import Value, parse_pairs

        flags: dict[str, Value | None] = {
            "release-name": self.release_name,
            "namespace": self.namespace,
            "values-files": self.values or None,
            "values": self.values_inline,
            "set": parse_pairs(self.set_values, "--set") if self.set_values else None,
            "set-string": parse_pairs(self.set_strings, "--set-string") if self.set_strings else None,
            "include-crds": None if self.include_crds is None else str(self.include_crds).lower(),
            "skip-tests": "true" if self.skip_tests else None,
            "kube-version": self.kube_version,
            "api-versions": self.api_versions or None,
            "config": self.config,
        }
        return configuration.build(
            self.app_dir,
            flags,
            env,
            app_name=self.app_name,
            repo_root=self.repo_root,
            helm=self.helm,
            timeout=self.timeout,
        )


# generate's options that take a value: option -> (field, repeatable). Kept equal to cli.py's by a test.
VALUE_OPTIONS: dict[str, tuple[str, bool]] = {
    "--release-name": ("release_name", False),
    "--namespace": ("namespace", False),
    "-n": ("namespace", False),
    "--values": ("values", True),
    "-f": ("values", True),
    "--values-inline": ("values_inline", False),
    "--set": ("set_values", True),
    "--set-string": ("set_strings", True),
    "--kube-version": ("kube_version", False),
    "--api-versions": ("api_versions", True),
    "--config": ("config", False),
    "--app": ("app_name", False),
    "--helm": ("helm", False),
    "--timeout": ("timeout", False),
    "--output": ("output", False),
    "-o": ("output", False),
    "--repo-root": ("repo_root", False),
}
FLAG_OPTIONS: dict[str, tuple[str, bool]] = {
    "--include-crds": ("include_crds", True),
    "--skip-crds": ("include_crds", False),
    "--skip-tests": ("skip_tests", True),
}


def read_generate(argv: Sequence[str]) -> GenerateOptions | None:
    """`generate`'s options from a command line the way click reads it, or None whenever the line is
    anything else or uses a form this reader does not know (`-nVALUE`, `--`, help, unknown options...)."""
    if not argv or argv[0] != "generate":
        return None
    found: dict[str, object] = {}
    repeated: dict[str, list[str]] = {}
    positional: list[str] = []
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, equals, inline = arg.partition("=")
        if name in FLAG_OPTIONS and not equals:
            field, value = FLAG_OPTIONS[name]
            found[field] = value
            continue
        if name not in VALUE_OPTIONS or (equals and not name.startswith("--")):
            return None
        if not equals:
            if not args or args[0].startswith("-"):
                return None
            inline = args.pop(0)
        field, repeatable = VALUE_OPTIONS[name]
        if repeatable:
            repeated.setdefault(field, []).append(inline)
        else:
            found[field] = inline
    output = str(found.pop("output", "yaml"))
    if len(positional) > 1 or output not in ("yaml", "json"):
        return None
    try:
        timeout = float(str(found.pop("timeout"))) if "timeout" in found else None
    except ValueError:
        return None
    if timeout is not None and not timeout >= 1:
        return None
    repo_root = found.pop("repo_root", None)
    fields: dict[str, Any] = {**found, **{field: tuple(values) for field, values in repeated.items()}}
    return GenerateOptions(
        app_dir=Path(positional[0]) if positional else Path("."),
        timeout=timeout,
        repo_root=Path(str(repo_root)) if repo_root is not None else None,
        output=output,
        **fields,
    )


# chartshare.yaml's top-level `chart:` line with a plain or simply quoted value; any line that may be one.
_CHART = re.compile(r"^chart[ \t]*:[ \t]*(?:([^\s'\"#][^\s#]*)|\"([^\"\\\n]*)\"|'([^'\n]*)')[ \t]*(?:#.*)?$", re.M)
_CHART_KEY = re.compile(r"^(?:[\"']|\?[ \t]+)?chart\b", re.M)


def _chart_entry(text: str) -> str | None:
    """The `chart:` of chartshare.yaml read without YAML ("." when absent); None when written otherwise."""
    keys = _CHART_KEY.findall(text)
    if not keys:
        return "."
    found = _CHART.findall(text)
    if len(keys) != 1 or len(found) != 1:
        return None
    plain, double, single = found[0]
    return plain or double or single or "."


def start_early(options: GenerateOptions, env: Mapping[str, str]) -> None:
    """Start helm for a plain `generate` command line; silently do nothing when unsure or on any error."""
    try:
        from cmp.helm import render
        from cmp.inputs.config import resolve_path

        config = options.resolve(env)
        chart = config.app_dir
        if config.config_path is not None:
            if not config.config_path.is_file() or config.config_path.stat().st_size > 1 << 20:
                return  # a FIFO, a device, a huge file: the loader says what is wrong with it
            entry = _chart_entry(config.config_path.read_text(encoding="utf-8"))
            if entry is None:
                return
            chart = resolve_path(entry, config.config_path.parent, config.repo_root, "chart")
        if not (chart / "Chart.yaml").is_file():
            return
        render.start_early(config.helm, render.invocation(config, chart), config.timeout)
    except Exception:  # the CLI meets the same problem again and reports it
        return


class _Stopped(Exception):
    """SIGTERM before the CLI took over its handling."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def _leave_at_once() -> None:
    """After a successful generate everything is written and helm is reaped: exit without the interpreter
    tearing down the render's objects one by one (milliseconds Argo CD waits for on every refresh)."""
    from cmp.helm.render import discard_early

    discard_early()
    try:  # run.generate flushed its output already: nothing is left to fail here
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        os._exit(1)
    os._exit(0)


def main() -> None:
    """Console entry point (`chartshare`, `python -m cmp`). SIGTERM unwinds from the start (run.py installs
    its own handler when the command runs), so an early helm never outlives chartshare."""
    signal.signal(signal.SIGTERM, _stop)
    try:
        options = read_generate(sys.argv[1:])
        if options is None:
            from cmp.cli.app import main as run_cli

            run_cli()
            return
        start_early(options, os.environ)
        from cmp.cli import exits

        exits.guarded(lambda: exits.generate(options))
        _leave_at_once()
    except _Stopped:
        sys.stderr.write("chartshare: error: stopped by SIGTERM; helm and everything it started were killed\n")
        sys.exit(143)
    finally:
        from cmp.helm.render import discard_early

        discard_early()
