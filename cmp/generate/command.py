"""The `generate` command: options and environment in, the app's output out (nothing is printed here)."""

from __future__ import annotations

from collections.abc import Mapping

from cmp.generate.output import Output, output
from cmp.generate.render import render
from cmp.inputs.options import GenerateOptions


def generate(options: GenerateOptions, env: Mapping[str, str]) -> Output:
    """Resolve the configuration, render, apply the rules, and build what to print."""
    config = options.resolve(env)
    return output(config, render(config))
