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
import stat
from _blake2 import blake2b  # hashlib's own blake2b; hashlib loads OpenSSL first: 2 ms of a 30 ms hit
from collections.abc import Mapping
from pathlib import Path

import cmp

_SCHEME = b"chartshare render key 1\n"  # bump with any change of the encoding below: old entries then miss
_HELM_ENV = "KUBECONFIG"  # read by helm besides the HELM_* variables (a context's default namespace)


class Fingerprint:
    """A render's key, and whether its inputs call a nondeterministic function (worked out when asked)."""

    __slots__ = ("_files", "_verdict", "key")

    def __init__(self, key: str, files: list[tuple[str, bytes]]) -> None:
        self.key = key
        self._files = files
        self._verdict: bool | None = None

    @property
    def nondeterministic(self) -> bool:
        """Whether a template action of the chart (packed subcharts included) or a value calls one."""
        if self._verdict is None:
            from cmp.helm.nondeterminism import file_is_nondeterministic  # tarfile and the table: misses only

            self._verdict = any(file_is_nondeterministic(name, data) for name, data in self._files)
            self._files = []
        return self._verdict


def fingerprint(
    purpose: str,
    settings: Mapping[str, object],
    *,
    chart: Path,
    root: Path,
    helm: str,
    env: Mapping[str, str] | None = None,
) -> Fingerprint:
    """The key of rendering `chart` with `settings` (every field that can change the output), for `purpose`
    (what the entry holds: generate's output, check's render...). Paths in `settings` are files or folders
    under `root`; a file among them counts by its bytes, a folder by its name only (the chart is walked)."""
    env = os.environ if env is None else env
    reader = _Reader(root)
    reader.frame(b"purpose", purpose.encode())
    reader.frame(b"version", cmp.__version__.encode())
    reader.frame(b"helm", _helm_identity(helm, chart, root, env))
    reader.value({name: value for name, value in env.items() if name.startswith("HELM_") or name == _HELM_ENV})
    reader.value(dict(settings))
    reader.value(chart)
    reader.tree(chart)
    return Fingerprint(reader.digest.hexdigest(), reader.files)


class _Reader:
    """Feeds the digest a canonical, self-delimiting encoding, and keeps what it read for the scan."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.digest = blake2b(_SCHEME, digest_size=32)
        self.files: list[tuple[str, bytes]] = []
        self._read: dict[str, bytes] = {}  # a values file inside the chart is read once

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
        data = self._read.get(path)
        if data is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError as error:  # helm fails on it too, so the entry is never written
                self.frame(b"!", os.fsencode(name) + b" %d" % (error.errno or 0))
                return
            self._read[path] = data
            self.files.append((name, data))
        self.frame(b"f", os.fsencode(name))
        self.frame(b"b", data)

    def tree(self, folder: Path) -> None:
        """Every file under `folder` by relative name and bytes, in name order, links followed; a link back
        to a folder above it is marked, not followed (helm refuses such a chart)."""
        info = folder.stat()
        self._walk(str(folder), "", frozenset({(info.st_dev, info.st_ino)}))

    def _walk(self, folder: str, prefix: str, above: frozenset[tuple[int, int]]) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as error:
            self.frame(b"!", os.fsencode(prefix) + b" %d" % (error.errno or 0))
            return
        for entry in entries:
            name = prefix + entry.name
            if entry.is_symlink():  # where it leads counts: a link out of the repository must fail again
                self.frame(b"@", os.fsencode(name + " " + _shown(Path(os.path.realpath(entry.path)), self.root)))
            try:
                if entry.is_file():
                    self._file(name, entry.path)
                    continue
                if entry.is_dir():
                    info = entry.stat()
                    node = (info.st_dev, info.st_ino)
                    if node in above:
                        self.frame(b"l", os.fsencode(name))
                    else:
                        self._walk(entry.path, name + "/", above | {node})
                    continue
            except OSError:
                pass
            self.frame(b"x", os.fsencode(name))  # a broken link, a FIFO, a socket: helm decides what they mean


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
