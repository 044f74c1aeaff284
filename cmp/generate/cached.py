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

The files chartshare.yaml names (its patches' `path:`) are known only once it is parsed, and the look-up
parses nothing. A render whose chartshare.yaml names some keeps, under its key, a note that it does, and
its output under that key gone on with those files' names and bytes (cmp/cache/key.py files_key): a run
that finds the note parses chartshare.yaml, as the render did, and looks there. Which files it names
follows from chartshare.yaml's bytes, which its key counts; where they lead and what they hold is read
again on every run. A chartshare.yaml that names none costs its look-up nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from cmp.cache.key import Fingerprint, PartialFingerprint, begin_fingerprint, files_key, printed_key
from cmp.cache.store import Entry, Store
from cmp.errors import ChartShareError
from cmp.generate.output import Output
from cmp.inputs.config import Template
from cmp.render.chart import ownership_of, quick_chart_dir
from cmp.render.settings import named_files, settings

if TYPE_CHECKING:
    from cmp.inputs.config import Config
    from cmp.ownership.rules import Ownership

PURPOSE = "generate"  # what the entries hold: generate's stdout and stderr
CACHED = " (cached)"
_MARK = Entry(b"", ())  # kept under a settings key: a render with those settings is kept
_NAMES_FILES = Entry(b"", ("names files",))  # kept under a render's key whose chartshare.yaml names files:
# its output is under files_key (no render's entry is either: every render prints its summary line)


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
        config: Config | None = None,
    ):
        """`partial`: the key, its chart folder still to walk; `config`: the run's, for `recall` and for
        the files its chartshare.yaml names."""
        self.chart = chart
        self.hit: Output | None = None
        self._store = store
        self._partial = partial
        self._settings_key = partial.settings_key if partial is not None else None
        self._found: Fingerprint | None = None
        self._key: str | None = None  # where the output is kept: the render's key, or files_key of it
        self._marked = False  # a mark was found under the settings' key
        self._config = config
        self._printed: str | None = None  # the key of what the rules make of this run's helm output
        self._recalled = False  # the output was read from under it
        self._told = False  # why the scan could not read the chart whole is told once

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
            self._config = None
            return
        self._found = found
        self._key = found.key
        entry = self._store.get(found.key)
        if entry == _NAMES_FILES:
            entry = self._named(found.key)
        if entry is None:
            return
        self._mark()  # the next run with these settings looks before helm
        self._config = None
        lines = (entry.lines[0] + CACHED, *entry.lines[1:]) if entry.lines else ()
        self.hit = Output(entry.output, lines + tuple(self._store.notices))

    def _named(self, key: str) -> Entry | None:
        """The entry under the key gone on with the files chartshare.yaml names, parsed as the render
        parses it; None when it cannot be (the render then says why)."""
        assert self._store is not None and self._config is not None
        try:
            ownership = ownership_of(self._config.config_path, self._config.repo_root)
        except (ChartShareError, OSError, ValueError):
            return None
        self._key = files_key(key, named_files(ownership), root=self._config.repo_root)
        return self._store.get(self._key) if self._key is not None else None

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
        return self._store is not None and self._found is not None and self._config is not None

    def recall(self, ownership: Ownership | None, printed: bytes) -> Output | None:
        """What the rules made of a helm output whose SHA-256 is `printed`, kept by an earlier miss (values
        whose change changed nothing helm prints, a chart file helm does not read); None when none is kept,
        or when `cache:` would not keep this chart."""
        if not self.recalls or not self._allowed(ownership):
            return None
        assert self._store is not None and self._config is not None
        fields, root = settings(self._config, ownership), self._config.repo_root
        self._printed = printed_key(PURPOSE, printed_settings(fields), root=root, printed=printed)
        entry = self._store.get(self._printed) if self._printed is not None else None
        self._recalled = entry is not None
        return Output(entry.output, entry.lines) if entry is not None else None

    def rendered(self, render: Callable[[], Rendered]) -> Output:
        """What `render` prints, kept when it may be: under the key of what the rules made of helm's output
        (unless it was read from there), with the render's key an alias of it; a render that raises keeps
        nothing."""
        fresh = render()
        key = self._keep_under(fresh)
        if self._store is not None and key is not None:
            self._mark()
            if self._printed is None:
                self._store.put(key, Entry(fresh.output.data, fresh.output.lines))
            else:  # kept once, under helm's output; the render's key names it
                if not self._recalled:
                    self._store.put(self._printed, Entry(fresh.output.data, fresh.output.lines))
                self._store.put_alias(key, self._printed)
        return fresh.output._replace(lines=fresh.output.lines + self.notices)

    def _keep_under(self, fresh: Rendered) -> str | None:
        """The key a fresh render is kept under, when it may be kept: the render's own, or, when its
        chartshare.yaml names files, that key gone on with them (and the render's key says so)."""
        if self._store is None or self._found is None or self._config is None or not self._may_keep(fresh):
            return None
        files = named_files(fresh.ownership)
        if not files:
            return self._found.key
        key = files_key(self._found.key, files, root=self._config.repo_root)
        if key is not None:
            self._store.put(self._found.key, _NAMES_FILES)
        return key

    def _may_keep(self, fresh: Rendered) -> bool:
        """The key walked the chart chartshare.yaml names, and its `cache:` allows this chart to be kept."""
        return fresh.chart == self.chart and self._allowed(fresh.ownership)

    def _allowed(self, ownership: Ownership | None) -> bool:
        """chartshare.yaml's `cache:` allows this chart to be kept; when `auto` keeps nothing because the
        scan could not read the chart whole (a packed chart past helm's bounds, the deadline), a notice
        says why."""
        assert self._found is not None and self._store is not None
        mode = ownership.cache if ownership is not None else "auto"
        if mode != "auto":
            return mode == "always"
        if not self._found.nondeterministic:
            return True
        if self._found.unread is not None and not self._told:
            self._told = True
            self._store.notices.append(f"notice: render cache: this render was not kept: {self._found.unread}")
        return False

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
    partial = begin_fingerprint(
        PURPOSE,
        settings(config),
        chart=chart,
        root=config.repo_root,
        helm=config.helm,
        env=env,
        seconds=config.timeout / 4,
    )
    return Lookup(chart, store, partial, config)
