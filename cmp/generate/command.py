"""The `generate` command: options and environment in, the app's output out (nothing is printed here).

The render cache is asked first; only a miss loads the pipeline (YAML, the rules) and renders.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cmp.generate import cached
from cmp.generate.output import Output
from cmp.inputs.options import GenerateOptions

if TYPE_CHECKING:
    from pathlib import Path

    from cmp.inputs.config import Config


def generate(options: GenerateOptions, env: Mapping[str, str]) -> Output:
    """Resolve the configuration; what the render cache keeps for it, else render, apply the rules, keep."""
    config = options.resolve(env)
    looked = cached.lookup(config, env)
    if looked.hit is not None:
        return looked.hit
    return looked.rendered(lambda: _render(config, looked.identities))


def _render(config: Config, identities: Path | None) -> cached.Rendered:
    from cmp.generate.chart import chart_dir, load_ownership
    from cmp.generate.output import output
    from cmp.generate.render import render_loaded

    ownership = load_ownership(config)
    chart = chart_dir(config, ownership)
    outcome = render_loaded(config, ownership, chart, identities=identities)
    return cached.Rendered(output(config, outcome), ownership, chart)
