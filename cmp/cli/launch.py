"""A command run in this process (cmp/warm/caller.py hands it here, or to a warm process's child): a plain
`chartshare generate ...` runs without the CLI framework, helm first.

Python's start and the framework's import (click and typer) cost about as much as rendering a small
chart, and helm needs none of it. So the command line is first read here by a small reader built from the
option table (cmp/inputs/parameters.py) that declines anything else (help, other commands, forms it does
not know). For a line it reads, the configuration is resolved exactly as the CLI resolves it, the render
cache is asked (a hit never starts helm, but one found only after helm started, where no render with
these settings was marked kept, cmp/generate/cached.py, kills it), helm is started from chartshare.yaml's
`chart:` line, the rest loads while helm renders, and the command ends in exits.py, as the typer CLI's
commands do; tests hold the reader to typer's parse. Any other line goes to the typer CLI.

The pipeline adopts the early helm only when it was started with exactly the binary, chart, template and
deadline it arrives at (cmp/helm/early.py); otherwise, and on any exit that does not use it, it is killed.
When anything here is unsure or fails, no helm is started early and the pipeline does it all, errors
included.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from cmp.cli import exits
from cmp.errors import ChartShareError
from cmp.inputs import parameters
from cmp.inputs.options import GenerateOptions, Given, options


def read_generate(argv: Sequence[str]) -> GenerateOptions | None:
    """`generate`'s options from a command line the way click reads it, or None whenever the line is
    anything else or uses a form this reader does not know (`-nVALUE`, `--`, help, unknown options...)."""
    if not argv or argv[0] != "generate":
        return None
    given: dict[str, Given] = {}
    positional: list[str] = []
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        flag, equals, value = arg.partition("=")
        option = parameters.BY_FLAG.get(flag)
        if option is None:
            return None
        if option.switch:
            if equals:
                return None
            given[option.name] = option.choices[option.flags.index(flag)]
            continue
        if equals and not flag.startswith("--"):
            return None
        if not equals:
            if not args or args[0].startswith("-"):
                return None
            value = args.pop(0)
        if option.choices and value not in option.choices:
            return None
        if option.kind == "string":
            given[option.name] = value
        else:
            earlier = given.get(option.name, ())
            given[option.name] = (*earlier, value) if isinstance(earlier, tuple) else (value,)
    if len(positional) > 1:
        return None
    return options(Path(positional[0]) if positional else Path("."), given)


def start_early(generate: GenerateOptions, env: Mapping[str, str]) -> None:
    """Start helm for a plain `generate` command line, unless the render cache holds what it would render;
    silently do nothing when unsure or on any error."""
    try:
        from cmp.generate import cached

        config = generate.resolve(env)
        looked = cached.look_ahead(config, env)
        chart = looked.chart
        if looked.hit is not None or chart is None or not (chart / "Chart.yaml").is_file():
            return
        from cmp.helm import template

        call = template.HelmInvocation(chart, config.template)
        template.start_early(config.helm, call, config.timeout, spent=config.spent)
        looked.complete()  # the key's walk of the chart, if left for now: a hit found there kills helm
        looked.judge()
    except Exception:  # the pipeline meets the same problem again and reports it
        return


def within(generate: GenerateOptions, env: Mapping[str, str], spent: float) -> GenerateOptions:
    """The options with helm's deadline shortened by `spent`, the seconds a failed hand-over to the warm
    process took (Argo CD counts its deadline from this process's start): helm gets the rest of it, and a
    helm that overruns it is said to overrun the deadline that was set. Unchanged when there is nothing to
    shorten or the options do not resolve (the pipeline then says why)."""
    if spent <= 0:
        return generate
    try:
        timeout = generate.resolve(env).timeout
    except Exception:  # the pipeline meets the same problem again and reports it
        return generate
    if timeout - spent < 1:
        raise ChartShareError(
            f"the warm chartshare process's child ended without answering after {spent:.1f} s, too late to "
            f"render within helm's {timeout:g} s here; the next sync renders afresh"
        )
    return generate._replace(spent=spent)


def _command(spent: float) -> int:
    generate = read_generate(sys.argv[1:])
    if generate is None:
        from cmp.cli.app import run_typer

        return run_typer(sys.argv[1:])
    generate = within(generate, os.environ, spent)
    start_early(generate, os.environ)
    return exits.generate(generate)


def run() -> int:
    """The status of the command line of `sys.argv`, run here (a warm process's child hands it back)."""
    return exits.run(lambda: _command(0.0))


def main(spent: float = 0.0) -> NoReturn:
    """Run the command line of `sys.argv` here (`python -m cmp`, and the console script's fallback, which
    says how many seconds its hand-over took)."""
    exits.run_and_exit(lambda: _command(spent))
