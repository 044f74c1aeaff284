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
    from cmp.inputs.config import Config


def generate(options: GenerateOptions, env: Mapping[str, str]) -> Output:
    """Resolve the configuration; what the render cache keeps for it, else render, apply the rules, keep."""
    config = options.resolve(env)
    looked = cached.lookup(config, env)
    if looked.hit is not None:
        return looked.hit
    return looked.rendered(lambda: _render(config, looked))


def _render(config: Config, looked: cached.Lookup) -> cached.Rendered:
    """helm's render; what the rules made of the same output before when that is kept, else the rules."""
    from cmp.generate.output import output
    from cmp.render.chart import chart_dir, load_ownership
    from cmp.render.pipeline import apply_rules, printed
    from cmp.render.policy import policy_entry

    ownership = load_ownership(config)
    policy_entry(config, ownership)  # a malformed policy fails before helm starts
    chart = chart_dir(config, ownership)
    render = printed(config, ownership, chart, identities=looked.identities, digest=looked.recalls)
    recalled = looked.recall(ownership, render.digest) if render.digest is not None else None
    if recalled is not None:
        return cached.Rendered(recalled, ownership, chart)
    return cached.Rendered(output(config, apply_rules(config, ownership, render)), ownership, chart)
