"""The chart store: `$CHARTSHARE_CACHE/charts/`, downloaded charts keyed by repository, name and version.

Two kinds of entries share one naming, `<blake2b(repository), 24 hex digits>/<name>-<version>`:
- a dependency archive, `<name>-<version>.tgz`, which `init` copies into a chart's `charts/`;
- a remote chart, the folder `<name>-<version>[@sha256-<digest>]/` holding the verified `.tgz` and `chart/`,
  its unpacked and checked contents with every dependency present, which `generate` renders.
A pinned digest is part of the key, so a pin never meets an entry fetched without one. Entries appear by
one atomic rename, complete or not at all, and a chart folder is read-only: every app of the sidecar
renders the same files, and nothing may change them under another render. Each entry written is charged
to the cache folder's one disk budget (cmp/cache/bounded.py, CHARTSHARE_CACHE_MB, shared with the render
cache), and an entry found or published is held for the rest of the process (a shared lock on its folder),
so eviction never takes a chart from under its render.
"""

from __future__ import annotations

import contextlib
import os
import stat
from _blake2 import blake2b  # hashlib's own; hashlib loads OpenSSL first, which a cached generate would pay
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from cmp.cache import bounded
from cmp.errors import PathError
from cmp.model import CHART_NAME, RemoteChart

CHART_FOLDER = "chart"
READ_ONLY_FILE = 0o444
READ_ONLY_FOLDER = 0o555


def chart_store(cache_root: Path, env: Mapping[str, str] | None = None) -> Store:
    """The store inside the cache folder ($CHARTSHARE_CACHE), under the cap CHARTSHARE_CACHE_MB names."""
    return Store(cache_root / "charts", bounded.cap_from(os.environ if env is None else env)[0])


class Store(NamedTuple):
    """The chart store under `root` ($CHARTSHARE_CACHE/charts); `cap` is the whole cache folder's budget."""

    root: Path
    cap: int = bounded.DEFAULT_MB << 20

    def base(self, chart: RemoteChart) -> Path:
        repository = blake2b(chart.repository.rstrip("/").encode(), digest_size=12).hexdigest()
        return self.root / repository / f"{chart.name}-{chart.version}"

    def entry(self, chart: RemoteChart) -> Path:
        """The folder of a remote chart's entry."""
        base = self.base(chart)
        return base.with_name(f"{base.name}@{chart.digest.replace(':', '-')}") if chart.digest else base

    def folder(self, chart: RemoteChart) -> Path:
        """The unpacked chart helm renders (present only once the entry is complete)."""
        return self.entry(chart) / CHART_FOLDER

    def lookup(self, chart: RemoteChart) -> Path | None:
        """The chart folder when the entry exists (a real folder, not a link); never the network."""
        entry = self.entry(chart)
        try:
            if not stat.S_ISDIR(entry.lstat().st_mode):
                return None
        except OSError:
            return None
        folder = entry / CHART_FOLDER
        if not (folder / "Chart.yaml").is_file() or not bounded.hold(str(entry)):
            return None  # incomplete, or being evicted: fetched again
        return folder

    def archive(self, chart: RemoteChart) -> Path | None:
        """A cached dependency archive, if any."""
        if not cacheable(chart):
            return None
        base = self.base(chart)
        path = base.with_name(f"{base.name}.tgz")
        if not path.is_file():
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # a use: eviction takes the oldest used first
        return path

    def keep_archive(self, archive: Path, chart: RemoteChart) -> bool:
        """Store a dependency archive; False (and nothing stored) when the store cannot be written."""
        if not cacheable(chart):
            return False
        import shutil

        base = self.base(chart)
        try:
            with staging(base.parent) as scratch:
                shutil.copyfile(archive, scratch / "archive.tgz")
                (base.parent / "repository").write_text(chart.repository.rstrip("/") + "\n", encoding="utf-8")
                kept = base.with_name(f"{base.name}.tgz")
                os.replace(scratch / "archive.tgz", kept)
        except OSError:
            return False
        self._charge(kept)
        return True

    def publish(self, chart: RemoteChart, fill: Callable[[Path], None]) -> Path:
        """Build an entry with `fill(folder)` in a scratch folder beside it, make it read-only and move it in
        place; an entry another process published first wins. Returns the chart folder."""
        entry = self.entry(chart)
        try:
            with staging(entry.parent) as scratch:
                fill(scratch)
                (entry.parent / "repository").write_text(chart.repository.rstrip("/") + "\n", encoding="utf-8")
                freeze(scratch)
                try:
                    scratch.rename(entry)
                except OSError:
                    if self.lookup(chart) is None:
                        raise
                else:
                    bounded.hold(str(entry))
                    self._charge(entry)
        except OSError as error:
            raise PathError(
                f"cannot write the chart cache {self.root} ({error.strerror or error}); point CHARTSHARE_CACHE "
                "at a writable folder"
            ) from None
        return entry / CHART_FOLDER

    def _charge(self, entry: Path) -> None:
        """Count a new entry against the cache folder's budget (which may evict older ones, never this)."""
        with contextlib.suppress(OSError):
            added = bounded.tree_use(str(entry))[0]
            bounded.Budget(str(self.root.parent), self.cap).charge(added, 1, keep=str(entry))


def cacheable(chart: RemoteChart) -> bool:
    """Whether the name and version make one file name each (a dependency may name anything)."""
    return bool(CHART_NAME.match(chart.name) and CHART_NAME.match(chart.version))


@contextlib.contextmanager
def staging(parent: Path) -> Iterator[Path]:
    """A scratch folder in `parent` (same file system, so a rename publishes it), removed unless moved."""
    import tempfile

    parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=parent, prefix=".partial-"))
    try:
        yield scratch
    finally:
        if scratch.exists():
            remove(scratch)


def freeze(folder: Path) -> None:
    """Every file and folder under `folder`, and `folder` itself, read-only (deepest first; the store holds
    no links: unpacking refuses them)."""
    for path, folders, files in os.walk(folder, topdown=False):
        for name in files:
            os.chmod(os.path.join(path, name), READ_ONLY_FILE)
        for name in folders:
            os.chmod(os.path.join(path, name), READ_ONLY_FOLDER)
    os.chmod(folder, READ_ONLY_FOLDER)


def remove(folder: Path) -> None:
    """Delete a tree, read-only folders included."""
    import shutil

    for path, _, _ in os.walk(folder):
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
    shutil.rmtree(folder, ignore_errors=True)
