"""An app's render end to end: its chartshare.yaml, its chart, helm, and the ownership rules applied.

`generate` prints the outcome; `check` and `parameters` read it. While helm renders, when the CPU it
takes costs least, the modules an app's rules need are imported and the chart's crds/ files, which helm
prints as they are, identified (cmp/helm/crds.py), and what the scan found in the chart's documents at
its last renders read back (cmp/cache/identities.py): only documents not seen then are scanned.
"""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path
from typing import NamedTuple

from cmp import manifests
from cmp.cache.identities import Identities
from cmp.helm import template
from cmp.helm.crds import printed_crds
from cmp.inputs.config import Config
from cmp.model import Action, App
from cmp.ownership.outcome import Outcome
from cmp.ownership.process import process
from cmp.ownership.rules import Ownership
from cmp.render.chart import chart_dir, load_ownership
from cmp.render.policy import policy_entry


def render(config: Config) -> Outcome:
    """Render the app's chart and apply its ownership rules."""
    ownership = load_ownership(config)
    policy_entry(config, ownership)  # a malformed policy fails before helm starts
    return render_loaded(config, ownership, chart_dir(config, ownership))


def render_loaded(
    config: Config, ownership: Ownership | None, chart: Path, *, identities: Path | None = None
) -> Outcome:
    """The same, once chartshare.yaml is loaded and the chart folder found (the render cache needs both);
    with `identities`, the folder where what the scan found is kept across renders."""
    return apply_rules(config, ownership, printed(config, ownership, chart, identities=identities))


class Printed(NamedTuple):
    """What helm printed (its text, and its bytes' SHA-256), and what parse needs that was found beside it."""

    stream: str
    digest: bytes | None
    foreseen: manifests.Foreseen
    memory: Identities | None


def printed(
    config: Config, ownership: Ownership | None, chart: Path, *, identities: Path | None = None, digest: bool = False
) -> Printed:
    """helm's render of the chart, the crds/ files and the kept identities read while it ran; with `digest`,
    the SHA-256 of helm's bytes (the key of what the rules make of them, cmp/generate/cached.py)."""
    call = template.HelmInvocation(chart, config.template)
    foreseen = manifests.Foreseen()
    memory = Identities(identities, chart, config.repo_root) if identities is not None else None
    hashed = sha256() if digest else None

    def meanwhile() -> None:
        _import_what_the_rules_need(ownership)
        if memory is not None:
            memory.load()
        if config.template.include_crds:
            foreseen.update(manifests.foresee(printed_crds(chart), memory))

    seen = hashed.update if hashed else None
    stream = template.render(config.helm, call, config.timeout, meanwhile, seen, spent=config.spent)
    return Printed(stream, hashed.digest() if hashed else None, foreseen, memory)


def apply_rules(config: Config, ownership: Ownership | None, render: Printed) -> Outcome:
    """The render parsed (what the scan found kept) and the ownership rules applied."""
    resources = manifests.parse(render.stream, foreseen=render.foreseen, memory=render.memory)
    if render.memory is not None:
        render.memory.save()
    app = App(config.app_name, config.release, config.namespace)
    return process(resources, ownership, app, policy_entry(config, ownership))


def _import_what_the_rules_need(ownership: Ownership | None) -> None:
    """Import the modules this app's rules will need (renames, text patches) while helm renders, rather
    than after it, when every millisecond adds to the render's time."""
    rules = ownership.rules if ownership is not None else ()
    if any(rule.others is Action.RENAME for rule in rules):
        from cmp.ownership import reference_fields  # noqa: F401
        from cmp.ownership.rewrite import references  # noqa: F401
    if any(rule.patch for rule in rules):
        from cmp.manifests import textpatch  # noqa: F401
