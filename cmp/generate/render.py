"""An app's render end to end: its chartshare.yaml, its chart, helm, and the ownership rules applied.

`generate` prints the outcome; `check` and `parameters` read it. The modules an app's rules need are
imported while helm renders, when the CPU they take costs least.
"""

from __future__ import annotations

from cmp import manifests
from cmp.generate.chart import chart_dir, load_ownership
from cmp.helm import template
from cmp.inputs.config import Config
from cmp.model import App
from cmp.ownership.outcome import Outcome
from cmp.ownership.process import process
from cmp.ownership.rewrite.apply import preload


def render(config: Config) -> Outcome:
    """Render the app's chart and apply its ownership rules."""
    ownership = load_ownership(config)
    chart = chart_dir(config, ownership)
    call = template.HelmInvocation(chart, config.template)
    stream = template.render(config.helm, call, config.timeout, lambda: preload(ownership))
    return process(manifests.parse(stream), ownership, App(config.app_name, config.release, config.namespace))
