"""An app's render end to end: its chartshare.yaml, its chart, helm, and the ownership rules applied.

`generate` prints the outcome; `check` and `parameters` read it. While helm renders, when the CPU it
takes costs least, the modules an app's rules need are imported and the chart's crds/ files, which helm
prints as they are, identified (cmp/helm/crds.py), and what the scan found in the chart's documents at
its last renders read back (cmp/cache/identities.py): only documents not seen then are scanned.
"""

from __future__ import annotations

from pathlib import Path

from cmp import manifests
from cmp.cache.identities import Identities
from cmp.generate.chart import chart_dir, load_ownership
from cmp.helm import template
from cmp.helm.crds import printed_crds
from cmp.inputs.config import Config
from cmp.model import Action, App
from cmp.ownership.outcome import Outcome
from cmp.ownership.process import process
from cmp.ownership.rules import Ownership


def render(config: Config) -> Outcome:
    """Render the app's chart and apply its ownership rules."""
    ownership = load_ownership(config)
    return render_loaded(config, ownership, chart_dir(config, ownership))


def render_loaded(
    config: Config, ownership: Ownership | None, chart: Path, *, identities: Path | None = None
) -> Outcome:
    """The same, once chartshare.yaml is loaded and the chart folder found (the render cache needs both);
    with `identities`, the folder where what the scan found is kept across renders."""
    call = template.HelmInvocation(chart, config.template)
    foreseen = manifests.Foreseen()
    memory = Identities(identities, chart, config.repo_root) if identities is not None else None

    def meanwhile() -> None:
        _import_what_the_rules_need(ownership)
        if memory is not None:
            memory.load()
        if config.template.include_crds:
            foreseen.update(manifests.foresee(printed_crds(chart), memory))

    stream = template.render(config.helm, call, config.timeout, meanwhile)
    resources = manifests.parse(stream, foreseen=foreseen, memory=memory)
    if memory is not None:
        memory.save()
    return process(resources, ownership, App(config.app_name, config.release, config.namespace))


def _import_what_the_rules_need(ownership: Ownership | None) -> None:
    """Import the modules this app's rules will need (renames, text patches) while helm renders, rather
    than after it, when every millisecond adds to the render's time."""
    rules = ownership.rules if ownership is not None else ()
    if any(rule.others is Action.RENAME for rule in rules):
        from cmp.ownership import reference_fields  # noqa: F401
        from cmp.ownership.rewrite import references  # noqa: F401
    if any(rule.patch for rule in rules):
        from cmp.manifests import textpatch  # noqa: F401
