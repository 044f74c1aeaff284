"""check's renders through the render cache: a job whose inputs have not changed gets back the claims its
earlier render produced, without helm.

The key is the render cache's own (cmp/cache/key.py: every file of the chart folder, every value file and
chartshare.yaml by their bytes, every setting of the render, helm's identity, chartshare's version, never
the Git revision), under the purpose `check`, so that generate's entries (the manifests it prints) and
check's never mix, plus what only check's claims depend on: the renderer, `--raw`, and the app's
destination (claims are keyed by its cluster and land in its namespace). The value is the claims the render
produced (emitted, stripped, the fields that changed between two renders), as a claims document writes
them: a hit is one read and a JSON decode, with no YAML to parse again.

Only a render that succeeded is kept, and only when it may be: `cache: never` in chartshare.yaml keeps
nothing, and a chart that calls a function rendering differently each time (helm.nondeterminism) is
rendered, twice, on every run unless its chartshare.yaml says `cache: always` (then the claims and the
differences its first run found stay). Plain Helm sources have no chartshare.yaml: `auto` holds for them.
kustomize and directory sources are read again on every run: what a kustomization reads is known only to
kustomize, and neither runs helm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from cmp.cache.key import Fingerprint, begin_fingerprint
from cmp.cache.store import Entry
from cmp.check.analysis.claims import Claim, Unstable
from cmp.check.analysis.claims_json import NotClaims, read_render_entry, render_entry
from cmp.check.sources.plan import Job
from cmp.ownership.rules import Ownership

PURPOSE = "check"  # the entries hold check's claims, never generate's output
CLAIMS_VERSION = 2  # what a kept claim holds (2: the deciding rule, a rename, protection): older entries miss
KEYED = ("chartshare", "helm")  # the renderers whose every input the key knows: a chart folder and its values

Claims = tuple[tuple[Claim, ...], tuple[Claim, ...], tuple[Unstable, ...], tuple[str, ...]]
# emitted, stripped, unstable, and the post-render targets that matched nothing


def key(job: Job, chart: Path, settings: Mapping[str, object]) -> Fingerprint | None:
    """The key of a job's render of `chart` with `settings` (every field of its render that can change it);
    None when its inputs could not all be read within the key's bounds (the render is then never kept)."""
    ours = {"renderer": job.renderer, "raw": job.raw, "cluster": job.app.cluster, "namespace": job.app.namespace}
    ours["claims"] = CLAIMS_VERSION
    found = begin_fingerprint(
        PURPOSE, {**settings, "check": ours}, chart=chart, root=job.repo_root, helm=job.helm, seconds=job.timeout / 4
    ).finish()
    return found if found.usable else None


def may_keep(ownership: Ownership | None, nondeterministic: bool) -> bool:
    """Whether chartshare.yaml's `cache:` (`auto` without one) lets this render be kept."""
    mode = ownership.cache if ownership is not None else "auto"
    return mode == "always" or (mode == "auto" and not nondeterministic)


def entry(
    emitted: Sequence[Claim], stripped: Sequence[Claim], unstable: Sequence[Unstable], unmatched: Sequence[str] = ()
) -> Entry:
    return Entry(render_entry(emitted, stripped, unstable, unmatched), ())


def claims(kept: Entry) -> Claims | None:
    """The claims of a kept render; None for an entry that holds none (another purpose's, or damaged)."""
    try:
        return read_render_entry(kept.output)
    except NotClaims:
        return None
