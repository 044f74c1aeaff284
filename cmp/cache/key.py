"""The render cache's key: one digest over everything a render's output depends on.

What counts is chosen by subtraction: the caller hands the whole resolved configuration minus the fields that
cannot change the output (a deadline), so a field added to the configuration later counts without anyone
remembering to add it, and a value with no canonical form here is refused rather than guessed at. Paths count
by their names relative to the repository root, never absolutely (Argo CD unpacks each request into a fresh
folder, and two checkouts of one app must share entries), and files by their bytes too. The chart counts by
every file in its folder, symlinks followed as helm follows them. The Git revision is no input: a commit that
changes nothing a render reads is a hit.

The same reading tells whether the chart or its values call a function that renders differently each time
(helm.nondeterminism). That costs a scan that a hit does not need, so it is done only when asked.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Mapping, Sequence
from hashlib import sha256  # OpenSSL's: 2.4x blake2b's speed where the CPU has SHA extensions
from pathlib import Path
from typing import BinaryIO

import cmp

_SCHEME = b"chartshare render key 4\n"  # bump with any change of the encoding below: old entries then miss
_HELM_ENV = "KUBECONFIG"  # read by helm besides the HELM_* variables (a context's default namespace)
_CHUNK = 1 << 20
MAX_FILES = 20_000  # past any of these the chart is read no further and nothing is cached
MAX_BYTES = 512 << 20
MAX_KEPT = 64 << 20  # bytes kept for the nondeterminism scan; past them every file is "not read by the scan"
WALK_SECONDS = 10.0


class Fingerprint:
    """A render's key, and whether its inputs call a nondeterministic function (worked out when asked).
    `usable` is False when the inputs could not all be read within the bounds (then `key` is no key, and
    `notices` say why): such a render is neither looked up nor kept."""

    __slots__ = ("_files", "_seconds", "_verdict", "key", "notices", "unread", "usable")

    def __init__(
        self,
        key: str,
        files: list[tuple[str, bytes]],
        *,
        unscanned: str | None = None,
        notice: str | None = None,
        seconds: float = WALK_SECONDS,
    ) -> None:
        self.key = key
        self.usable = notice is None
        self.notices = () if notice is None else (notice,)
        self.unread = unscanned  # why the scan could not read a file that may hold an action, if it could not
        self._files = files
        self._seconds = seconds
        self._verdict: bool | None = None

    @property
    def nondeterministic(self) -> bool:
        """Whether a template action of the chart (packed subcharts included) or a value calls one; also
        True when the scan could not read a file that may hold an action (so `auto` keeps nothing), and
        then `unread` says why."""
        return self.judge()

    def judge(self) -> bool:
        """`nondeterministic`, worked out on the first call only (a miss asks while helm renders), within
        the same share of the deadline as the walk, and within the bounds of cmp/packed.py."""
        if self._verdict is None:
            try:
                from cmp.helm.nondeterminism import Scan  # the table: misses only

                scan = Scan(self._seconds)
                self._verdict = self.unread is not None or scan.calls(self._files)
                self.unread = self.unread or scan.unread
            except Exception as error:  # a scan that fails says "do not cache", never fails the render
                self._verdict = True
                self.unread = f"{type(error).__name__}: {error}"
            self._files = []
        return self._verdict


def begin_fingerprint(
    purpose: str,
    settings: Mapping[str, object],
    *,
    chart: Path,
    root: Path,
    helm: str,
    env: Mapping[str, str] | None = None,
    seconds: float = WALK_SECONDS,
) -> PartialFingerprint:
    """The key of rendering `chart` with `settings` (every field that can change the output), for `purpose`
    (what the entry holds: generate's output, check's render...), read in two steps: everything but the
    chart folder here, the folder's walk (the costly part) in `finish`. Paths in `settings` are files or
    folders under `root`; a file among them counts by its bytes, a folder by its name only (the chart is
    walked). Reading stops past `seconds`, MAX_FILES or MAX_BYTES: the fingerprint is then not usable. A
    setting with no canonical form raises TypeError (a field Config gained that this encoding does not know)."""
    env = os.environ if env is None else env
    reader = _Reader(root, time.monotonic() + seconds, seconds)
    try:
        reader.frame(b"purpose", purpose.encode())
        reader.frame(b"version", cmp.__version__.encode())
        reader.frame(b"helm", _helm_identity(helm, chart, root, env))
        reader.value({name: value for name, value in env.items() if name.startswith("HELM_") or name == _HELM_ENV})
        reader.value(dict(settings))
        reader.value(chart)
    except TypeError:
        raise
    except Exception as error:
        return PartialFingerprint(reader, chart, _unusable(error))
    return PartialFingerprint(reader, chart)


class PartialFingerprint:
    """A render's key with all but the chart folder read. `settings_key` is the key of those settings
    alone (None when they could not be read): generate keeps a mark under it beside a render kept with
    them, so a run that finds none knows its render is no hit before walking the chart, and starts helm
    first."""

    __slots__ = ("_chart", "_failed", "_reader", "settings_key")

    def __init__(self, reader: _Reader, chart: Path, failed: Fingerprint | None = None) -> None:
        self._reader = reader
        self._chart = chart
        self._failed = failed
        self.settings_key: str | None = None
        if failed is None:
            alone = reader.digest.copy()
            alone.update(b"the settings alone\n")  # never the key of a render, whose chart frames follow
            self.settings_key = alone.hexdigest()

    def finish(self) -> Fingerprint:
        """The key, once the chart folder is walked."""
        if self._failed is not None:
            return self._failed
        reader = self._reader
        try:
            reader.tree(self._chart)
        except Exception as error:
            return _unusable(error)
        return Fingerprint(reader.digest.hexdigest(), reader.files, unscanned=reader.unscanned, seconds=reader.seconds)


def _unusable(error: Exception) -> Fingerprint:
    """The key only saves time: whatever goes wrong reading its inputs means "do not cache"."""
    if isinstance(error, _Bounded):
        return Fingerprint("", [], notice=f"notice: render cache: {error}; rendering without the cache")
    reason = f"{type(error).__name__}: {error}"
    return Fingerprint("", [], notice=f"notice: render cache: the chart could not be read ({reason}); not cached")


def printed_key(purpose: str, settings: Mapping[str, object], *, root: Path, printed: bytes) -> str | None:
    """The key of what `purpose` makes of a helm output whose SHA-256 is `printed`, with `settings` (every
    field that can change that, encoded as `begin_fingerprint` encodes them). What helm printed stands for all
    it read: the chart, the helm binary and whatever settings only helm reads are for the caller to leave
    out. None when a setting's file cannot be read in time (nothing is then looked up or kept)."""
    reader = _Reader(root, time.monotonic() + WALK_SECONDS, WALK_SECONDS)
    try:
        reader.frame(b"printed by helm", printed)
        reader.frame(b"purpose", purpose.encode())
        reader.frame(b"version", cmp.__version__.encode())
        reader.value(dict(settings))
    except TypeError:
        raise
    except Exception:  # the key only saves time
        return None
    return reader.digest.hexdigest()


def files_key(key: str, files: Sequence[Path], *, root: Path) -> str | None:
    """The render key `key` gone on with `files` by name and bytes: the files chartshare.yaml names (its
    patches), known only once it is parsed, which `key` (over its bytes) cannot count before. None when
    one cannot be read in time (nothing is then looked up or kept)."""
    reader = _Reader(root, time.monotonic() + WALK_SECONDS, WALK_SECONDS)
    try:
        reader.frame(b"render key", key.encode())
        reader.value(tuple(files))
    except Exception:  # the key only saves time
        return None
    return reader.digest.hexdigest()


class _Bounded(Exception):
    """The inputs are larger or slower to read than the key may spend, or lead out of the repository."""


class _Reader:
    """Feeds the digest a canonical, self-delimiting encoding, and keeps what the scan needs of what it read
    (only files that can hold a template action: `{{`, or a packed chart)."""

    def __init__(self, root: Path, until: float, seconds: float) -> None:
        self.root = root
        self.until = until
        self.seconds = seconds
        self.digest = sha256(_SCHEME)
        self.files: list[tuple[str, bytes]] = []
        self.unscanned: str | None = None  # why a file the scan needs was let go, if one was
        self._within: tuple[Path, ...] = (root,)  # where a link in the chart may lead
        self._seen: dict[tuple[int, int], str] = {}  # each real file and folder is read once
        self._count = 0
        self._bytes = 0
        self._kept = 0

    def frame(self, tag: bytes, data: bytes) -> None:
        self.digest.update(b"%s%d:" % (tag, len(data)))
        self.digest.update(data)

    def value(self, value: object) -> None:
        if isinstance(value, str):
            if "{{" in value:  # an inline value or --set that `tpl` may render
                self.files.append(("", value.encode("utf-8", "surrogatepass")))
            self.frame(b"s", value.encode("utf-8", "surrogatepass"))
        elif isinstance(value, bool) or value is None:
            self.frame(b"c", repr(value).encode())
        elif isinstance(value, int | float):
            self.frame(b"n", repr(value).encode())
        elif isinstance(value, Path):
            self._path(value)
        elif isinstance(value, tuple | list):
            self.frame(b"(", b"%d" % len(value))
            for item in value:
                self.value(item)
        elif isinstance(value, Mapping):
            self.frame(b"{", b"%d" % len(value))
            for name in sorted(value):
                self.value(name)
                self.value(value[name])
        else:
            raise TypeError(f"the render cache's key has no canonical form for {type(value).__name__} ({value!r})")

    def _path(self, path: Path) -> None:
        shown = _shown(path, self.root)
        self.frame(b"p", os.fsencode(shown))
        if path.is_file():
            self._file(shown, str(path))
        else:
            self.frame(b"d" if path.is_dir() else b"?", b"")

    def _file(self, name: str, path: str) -> None:
        """A file by name and bytes, hashed as read; one already read (another link to it) by that name."""
        try:
            with open(path, "rb") as handle:
                info = os.fstat(handle.fileno())
                node = (info.st_dev, info.st_ino)
                first = self._seen.get(node)
                if first is not None:
                    self.frame(b"=", os.fsencode(f"{name}\0{first}"))
                    return
                self._seen[node] = name
                self._spend(1, info.st_size)
                self.frame(b"f", os.fsencode(name))
                kept = self._read(name, handle)
        except OSError as error:  # helm fails on it too, so the entry is never written
            self.frame(b"!", os.fsencode(name) + b" %d" % (error.errno or 0))
            return
        if kept is not None:
            self.files.append((name, kept))

    def _read(self, name: str, handle: BinaryIO) -> bytes | None:
        """Hash the file chunk by chunk; its bytes when the scan needs them (a packed chart, or a file with
        `{{` in it) and they fit in MAX_KEPT, else None (and the scan is told when it needed them)."""
        wanted = _scanned(name)
        packed = name.endswith(".tgz")
        chunks: list[bytes] = []
        action, last = False, b""
        while chunk := handle.read(_CHUNK):
            self.frame(b"b", chunk)
            action = action or b"{{" in last + chunk[:1] or holds_action(chunk)
            last = chunk[-1:]
            if not wanted:
                continue
            if action or packed or len(chunks) < 4:
                chunks.append(chunk)
            else:
                wanted, chunks = False, []  # a large file with no action in its first MiBs: let go
            if wanted and self._kept + sum(map(len, chunks)) > MAX_KEPT:
                wanted, chunks = False, []
        self.frame(b"e", b"")
        if (action or packed) and not wanted and _scanned(name):  # the scan needed bytes that were let go
            self.unscanned = f"{name}: past the {MAX_KEPT >> 20} MiB the key keeps for the scan"
        if not wanted or not (action or packed):
            return None
        data = b"".join(chunks)
        self._kept += len(data)
        return data

    def _spend(self, files: int, size: int) -> None:
        self._count += files
        self._bytes += size
        if self._count > MAX_FILES:
            raise _Bounded(f"the chart has more than {MAX_FILES} files")
        if self._bytes > MAX_BYTES:
            raise _Bounded(f"the chart holds more than {MAX_BYTES >> 20} MiB")
        if time.monotonic() > self.until:
            raise _Bounded("reading the chart took longer than its share of the deadline")

    def tree(self, folder: Path) -> None:
        """Every file under `folder` by relative name and bytes, in name order, links followed as helm
        follows them; a real folder or file met again (a link to it: a DAG, or a loop helm refuses) counts
        by the name it was first read under. A link that leads out of the repository (and out of `folder`,
        a chart in the chart store) is never followed: the render refuses it, and nothing is kept.
        Iterative: no depth is too deep."""
        info = folder.stat()
        self._seen[(info.st_dev, info.st_ino)] = ""
        self._within = (self.root, folder)
        stack = [(str(folder), "", iter(self._entries(str(folder), "")))]
        while stack:
            _, prefix, entries = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                continue
            name = prefix + entry.name
            if entry.is_symlink():  # where it leads counts: a link out of the repository must fail again
                target = Path(os.path.realpath(entry.path))
                if not any(target.is_relative_to(place) for place in self._within):
                    raise _Bounded(f"{name} is a link out of the repository")
                self.frame(b"@", os.fsencode(name + " " + _shown(target, self.root)))
            try:
                if entry.is_file():
                    self._file(name, entry.path)
                    continue
                if entry.is_dir():
                    found = entry.stat()
                    node = (found.st_dev, found.st_ino)
                    first = self._seen.get(node)
                    if first is not None:
                        self.frame(b"=", os.fsencode(f"{name}\0{first}"))
                    else:
                        self._seen[node] = name
                        self._spend(1, 0)
                        self.frame(b"D", os.fsencode(name))
                        stack.append((entry.path, name + "/", iter(self._entries(entry.path, name + "/"))))
                    continue
            except OSError:
                pass
            self.frame(b"x", os.fsencode(name))  # a broken link, a FIFO, a socket: helm decides what they mean

    def _entries(self, folder: str, prefix: str) -> list[os.DirEntry[str]]:
        """A folder's entries in name order; no more of them are listed than the walk may read."""
        listed: list[os.DirEntry[str]] = []
        try:
            with os.scandir(folder) as found:
                for entry in found:
                    listed.append(entry)
                    if len(listed) + self._count > MAX_FILES:
                        raise _Bounded(f"the chart has more than {MAX_FILES} files")
        except OSError as error:
            self.frame(b"!", os.fsencode(prefix) + b" %d" % (error.errno or 0))
            return []
        return sorted(listed, key=lambda entry: entry.name)


def holds_action(data: bytes) -> bool:
    """Whether `data` holds `{{`, as `b"{{" in data` tells (which reads a byte at a time: 1.2 ms a MB, more
    than the digest). Each `{` is found by memchr and the byte after it looked at; past _BRACES of them (JSON,
    say) the rest goes to the regex engine's literal search (0.7 ms a MB)."""
    at = data.find(b"{")
    for _ in range(_BRACES):
        if at < 0:
            return False
        if data[at + 1 : at + 2] == b"{":
            return True
        at = data.find(b"{", at + 1)
    return at >= 0 and _OPENER.search(data, at) is not None


_BRACES = 64
_OPENER = re.compile(rb"\{\{")


def _scanned(name: str) -> bool:
    """Whether the nondeterminism scan may need the file: all but what cannot hold an action (a packed
    chart is read only under charts/)."""
    if not name.endswith(".tgz"):
        return True
    from cmp.packed import is_packed  # only charts with a .tgz pay its import

    return is_packed(name)


def _helm_identity(helm: str, chart: Path, root: Path, env: Mapping[str, str]) -> bytes:
    """The binary that would run (looked up as Popen does: on PATH, or relative to the chart, helm's working
    folder) by path, size and modification time; a binary replaced in place is another helm."""
    if "/" in helm:
        candidates = [os.path.join(chart, helm)]
    else:
        candidates = [os.path.join(folder, helm) for folder in os.get_exec_path(env)]
    for candidate in candidates:
        try:
            info = os.stat(candidate)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and os.access(candidate, os.X_OK):
            shown = _shown(Path(os.path.abspath(candidate)), root)
            return b"%s %d %d" % (os.fsencode(shown), info.st_size, info.st_mtime_ns)
    return b"not found: " + os.fsencode(helm)


def _shown(path: Path, root: Path) -> str:
    """Relative to the repository root, so that two checkouts agree; absolute when outside it."""
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
