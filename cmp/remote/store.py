"""The chart store: `$CHARTSHARE_CACHE/charts/`, downloaded charts keyed by repository, name, version and grant.

The grant is the entry of the repositories file that fetched a chart (anonymous for none): one team's
private chart, fetched with an entry its AppProject may use, is never served to another project's app,
which fetches its own copy (anonymously, or with an entry of its own) and fails cleanly when the
repository refuses it. Two kinds of entries share one naming,
`<blake2b(repository, grant), 24 hex digits>/<name>-<version>`:
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
from typing import TYPE_CHECKING, NamedTuple

from cmp.cache import bounded
from cmp.errors import PathError
from cmp.model import CHART_NAME, Access, RemoteChart

if TYPE_CHECKING:
    from cmp.remote.credentials import Credentials

CHART_FOLDER = "chart"
READ_ONLY_FILE = 0o444
READ_ONLY_FOLDER = 0o555
ANONYMOUS = "anonymous"  # the grant of a chart fetched with no entry of the repositories file


def chart_store(cache_root: Path, env: Mapping[str, str] | None = None, access: Access | None = None) -> Store:
    """The store inside the cache folder ($CHARTSHARE_CACHE), under the cap CHARTSHARE_CACHE_MB names, as
    the request of `env` (or `access`: the repositories file and the AppProject) may use it."""
    env = os.environ if env is None else env
    return Store(cache_root / "charts", bounded.cap_from(env)[0], access or Access.of(env))


class Store(NamedTuple):
    """The chart store under `root` ($CHARTSHARE_CACHE/charts); `cap` is the whole cache folder's budget;
    `access` is whose credentials a fetch may use, and so which entries a look-up may serve."""

    root: Path
    cap: int = bounded.DEFAULT_MB << 20
    access: Access = Access()

    def credentials(self) -> Credentials:
        """The repositories file's entries as the access's project may use them (read at each use: a
        Secret mounted as a file changes under a running sidecar)."""
        from cmp.remote import credentials

        return credentials.load_for(self.access)

    def grant(self, chart: RemoteChart) -> str:
        """The credential entry a fetch of `chart` uses for this access, or anonymous. Without a repositories
        file nothing is read (a cached generate imports no YAML)."""
        if not self.access.repositories:
            return ANONYMOUS
        return self.credentials().grant(source_url(chart)) or ANONYMOUS

    def base(self, chart: RemoteChart) -> Path:
        keyed = f"{chart.repository.rstrip('/')}\n{self.grant(chart)}"
        repository = blake2b(keyed.encode(), digest_size=12).hexdigest()
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


def source_url(chart: RemoteChart) -> str:
    """The URL whose credential entry fetches `chart`: the OCI reference, or the repository's index."""
    if chart.oci:
        return f"{chart.repository.rstrip('/')}/{chart.name}"
    return chart.repository.rstrip("/") + "/index.yaml"


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
