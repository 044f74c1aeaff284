"""`generate` through the render cache: a render kept under its key is printed again without helm.

The key (cmp/cache/key.py) is looked up before helm starts and before the pipeline loads (YAML, the rules):
the chart folder comes from chartshare.yaml's `chart:` line read without YAML (chart.quick_chart_dir), and
chartshare.yaml is never parsed for it. Its bytes are in the key, so an entry exists only if the render it
came from was allowed to be kept. A miss renders as ever and keeps what it printed when the render succeeded
and chartshare.yaml's `cache:` allows: `auto` (the default) keeps every chart but those calling a function
that renders differently each time, `always` keeps those too (their first render's values then stay),
`never` keeps nothing. `--no-cache` and CHARTSHARE_RENDER_CACHE=off leave the cache out altogether. A hit
prints what the cold render printed, its summary line saying `(cached)`.

Walking the chart folder for the key is the costly part of the look-up. A miss also keeps a mark under
the key of its settings alone (every input but the chart folder): a run that finds no mark for its
settings (the first render of an app, a values change) cannot be a hit, so it starts helm first and walks
the chart while helm renders (a mark evicted before its entry only means the hit is found then, and
helm killed).

A miss keeps what it printed under a second key, that of what the rules made of helm's output (its digest
and the settings but the values: cmp/cache/key.py printed_key), the render's key an alias of it, and looks
that key up once helm has printed: a miss whose helm output is one seen before (a values comment, a chart
file helm does not read) prints it again, as a fresh render would, without parsing or applying the rules,
and adds only an alias to the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from cmp.cache.key import Fingerprint, PartialFingerprint, begin_fingerprint, printed_key
from cmp.cache.store import Entry, Store
from cmp.errors import ChartShareError
from cmp.generate.output import Output
from cmp.inputs.config import Template
from cmp.render.chart import quick_chart_dir
from cmp.render.settings import settings

if TYPE_CHECKING:
    from cmp.inputs.config import Config
    from cmp.ownership.rules import Ownership

PURPOSE = "generate"  # what the entries hold: generate's stdout and stderr
CACHED = " (cached)"
_MARK = Entry(b"", ())  # kept under a settings key: a render with those settings is kept


class Rendered(NamedTuple):
    """A miss's render: what it prints, and what decides whether that may be kept."""

    output: Output
    ownership: Ownership | None
    chart: Path


class Lookup:
    """One run's place in the render cache: the chart folder known without YAML (None when unsure), and the
    kept output when there is one (once `complete`)."""

    def __init__(
        self,
        chart: Path | None,
        store: Store | None,
        partial: PartialFingerprint | None = None,
        after_helm: tuple[dict[str, object], Path] | None = None,
    ):
        """`partial`: the key, its chart folder still to walk; `after_helm`: the settings and the repository
        root, for `recall`."""
        self.chart = chart
        self.hit: Output | None = None
        self._store = store
        self._partial = partial
        self._settings_key = partial.settings_key if partial is not None else None
        self._found: Fingerprint | None = None
        self._marked = False  # a mark was found under the settings' key
        self._after_helm = after_helm
        self._printed: str | None = None  # the key of what the rules make of this run's helm output
        self._recalled = False  # the output was read from under it

    def marked(self) -> bool:
        """Whether a render with these settings is kept (so this run may be a hit): the look-up is then
        completed before helm starts."""
        if self._store is None or self._settings_key is None:
            return True
        self._marked = self._store.get(self._settings_key, quiet=True) is not None  # a hint: its trouble is no news
        return self._marked

    def complete(self) -> None:
        """Walk the chart folder for the key and look it up (once; nothing to do without the cache)."""
        partial, self._partial = self._partial, None
        if partial is None or self._store is None:
            return
        found = partial.finish()
        if not found.usable:  # inputs too large or slow to read, or unreadable: rendered, never kept
            self._store.notices.extend(found.notices)
            self._after_helm = None
            return
        self._found = found
        entry = self._store.get(found.key)
        if entry is None:
            return
        self._mark()  # the next run with these settings looks before helm
        self._after_helm = None
        lines = (entry.lines[0] + CACHED, *entry.lines[1:]) if entry.lines else ()
        self.hit = Output(entry.output, lines + tuple(self._store.notices))

    def _mark(self) -> None:
        """Keep the mark under the settings' key, unless it was found there."""
        if self._store is not None and self._settings_key is not None and not self._marked:
            self._store.put(self._settings_key, _MARK)

    def judge(self) -> None:
        """Work out whether a miss's render may be kept (a scan of the chart's templates for a function that
        renders differently each time) now, while helm renders, rather than after it; a hit needs nothing."""
        if self._found is not None and self.hit is None:
            self._found.judge()

    @property
    def recalls(self) -> bool:
        """Whether `recall` may find anything: the render cache is on for this run."""
        return self._store is not None and self._found is not None and self._after_helm is not None

    def recall(self, ownership: Ownership | None, printed: bytes) -> Output | None:
        """What the rules made of a helm output whose SHA-256 is `printed`, kept by an earlier miss (values
        whose change changed nothing helm prints, a chart file helm does not read); None when none is kept,
        or when `cache:` would not keep this chart."""
        if not self.recalls or not self._allowed(ownership):
            return None
        assert self._store is not None and self._after_helm is not None
        fields, root = self._after_helm
        self._printed = printed_key(PURPOSE, printed_settings(fields), root=root, printed=printed)
        entry = self._store.get(self._printed) if self._printed is not None else None
        self._recalled = entry is not None
        return Output(entry.output, entry.lines) if entry is not None else None

    def rendered(self, render: Callable[[], Rendered]) -> Output:
        """What `render` prints, kept when it may be: under the key of what the rules made of helm's output
        (unless it was read from there), with the render's key an alias of it; a render that raises keeps
        nothing."""
        fresh = render()
        if self._store is not None and self._found is not None and self._may_keep(fresh):
            self._mark()
            if self._printed is None:
                self._store.put(self._found.key, Entry(fresh.output.data, fresh.output.lines))
            else:  # kept once, under helm's output; the render's key names it
                if not self._recalled:
                    self._store.put(self._printed, Entry(fresh.output.data, fresh.output.lines))
                self._store.put_alias(self._found.key, self._printed)
        return fresh.output._replace(lines=fresh.output.lines + self.notices)

    def _may_keep(self, fresh: Rendered) -> bool:
        """The key walked the chart chartshare.yaml names, and its `cache:` allows this chart to be kept."""
        return fresh.chart == self.chart and self._allowed(fresh.ownership)

    def _allowed(self, ownership: Ownership | None) -> bool:
        """chartshare.yaml's `cache:` allows this chart to be kept."""
        assert self._found is not None
        mode = ownership.cache if ownership is not None else "auto"
        return mode == "always" or (mode == "auto" and not self._found.nondeterministic)

    @property
    def identities(self) -> Path | None:
        """Where what the scan found in the chart's documents is kept across renders (cmp/cache/identities.py):
        beside the render cache, and only when it is on."""
        if self._store is None or not self._store.on:
            return None
        return Path(self._store.folder).parent / "identities"

    @property
    def notices(self) -> tuple[str, ...]:
        """Why the cache could not be used, for stderr."""
        return tuple(self._store.notices) if self._store is not None else ()


HELM_READS = ("values_files", "values_inline", "set_values", "set_strings", "set_files")  # the values: helm
# alone reads them, so what it printed stands for them in the key of what the rules made of its output


def printed_settings(fields: Mapping[str, object]) -> dict[str, object]:
    """The settings that can change what the rules make of a helm output: `settings` but the values."""
    template = fields["template"]
    assert isinstance(template, Template)
    return {**fields, "template": template._replace(**{name: Template._field_defaults[name] for name in HELM_READS})}


_ahead: tuple[Config, Mapping[str, str], Lookup] | None = None


def look_ahead(config: Config, env: Mapping[str, str]) -> Lookup:
    """Look before starting helm (the plain-generate path), and hold the answer for the command's `lookup`;
    when no render with these settings is kept, the chart's walk is left to `complete`, after helm started."""
    global _ahead
    looked = _lookup(config, env)
    if looked.marked():
        looked.complete()
    _ahead = (config, env, looked)
    return looked


def lookup(config: Config, env: Mapping[str, str]) -> Lookup:
    """The lookup held for this very configuration and environment, else a new one; complete."""
    global _ahead
    held, _ahead = _ahead, None
    looked = held[2] if held is not None and held[0] == config and held[1] is env else _lookup(config, env)
    looked.complete()
    return looked


def _lookup(config: Config, env: Mapping[str, str]) -> Lookup:
    """The run's look-up, its key's walk of the chart folder still to do."""
    try:
        chart = quick_chart_dir(config)
    except (ChartShareError, OSError, ValueError):
        chart = None  # the pipeline meets the problem again, and says it properly
    if not config.cache or chart is None:
        return Lookup(chart, None)
    store = Store.from_env(env)
    if not store.on:
        return Lookup(chart, store)
    fields = settings(config)
    partial = begin_fingerprint(
        PURPOSE,
        fields,
        chart=chart,
        root=config.repo_root,
        helm=config.helm,
        env=env,
        seconds=config.timeout / 4,
    )
    return Lookup(chart, store, partial, (fields, config.repo_root))
