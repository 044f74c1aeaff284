"""Which local folder holds the repository a `repoURL` names.

check reads checkouts, never the network: the checkout at `--repo-root` stands for every URL its own
remotes have (`git remote -v`), and `--repo URL=DIR` adds others. URLs compare as Argo CD's users write
them interchangeably: scheme, user, port, a `.git` suffix, a trailing slash and case aside, and the scp
form `git@host:org/repo` equal to `ssh://git@host/org/repo` and to `https://host/org/repo`. A checkout
with remotes never stands for another repository (every service repository has a `chart/`: reading the
wrong one is a wrong render or a false conflict); only a `--repo-root` with no remote at all (a scratch
repository, a folder that is no checkout) stands for every URL no mapping names, and check says so once.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.*)$")
_PORT = re.compile(r":[0-9]*$")
GIT_TIMEOUT = 10


def normalize(url: str) -> str:
    """host/path of a Git URL, lower case, without scheme, user, port, the scp form's `:`, `.git` or a
    trailing `/`."""
    text = url.strip()
    if _SCHEME.match(text):
        text = _SCHEME.sub("", text)
        host, slash, rest = text.partition("/")
        text = _PORT.sub("", host.rpartition("@")[2]) + slash + rest
    else:
        scp = _SCP.match(text)
        if scp:
            text = f"{scp.group(1)}/{scp.group(2)}"
    text = text.rstrip("/")
    text = text.removesuffix(".git").rstrip("/")
    return text.lower()


SCRATCH_NOTE = (
    "--repo-root {root} is no checkout with a Git remote, so it stands for every repoURL no --repo maps; "
    "at the top of a checkout with remotes, a repoURL is read only from the checkout it names"
)


@dataclass(frozen=True, slots=True)
class Repositories:
    """The checkouts check may read, by normalised URL; `remotes` are `root`'s own (none: a scratch
    repository, which stands for every URL no mapping names)."""

    root: Path
    checkouts: Mapping[str, Path] = field(default_factory=dict)
    remotes: tuple[str, ...] = ()

    def checkout_of(self, url: str) -> Path | None:
        """The folder holding the repository at `url`, or None when no checkout is named for it."""
        return self.checkouts.get(normalize(url)) if url else None

    def folder_of(self, url: str) -> Path | None:
        """Where an Application source of `url` is read: its checkout; `root` for a source without a
        repoURL or, in a scratch repository, for any URL; None when no checkout holds it (skip the app)."""
        found = self.checkout_of(url)
        if found is not None:
            return found
        return self.root if not url or not self.remotes else None

    def stands_in(self, url: str) -> bool:
        """Whether `root` is read for `url` only because it is a scratch repository (say so once)."""
        return bool(url) and not self.remotes and self.checkout_of(url) is None

    def unmapped(self, url: str) -> str:
        """Why a source of `url` is not read, naming the mapping that would read it."""
        return (
            f"repoURL {url} is not a remote of --repo-root {self.root} (its remotes: {', '.join(self.remotes)}); "
            f"check reads no other repository in its place: pass --repo {url}=DIR to read it from its checkout"
        )

    @classmethod
    def build(cls, root: Path, remotes: Iterable[str], given: Iterable[tuple[str, Path]]) -> Repositories:
        own = tuple(remotes)
        checkouts = {normalize(url): root for url in own}
        checkouts.update((normalize(url), folder) for url, folder in given)
        return cls(root, checkouts, own)


def remotes_of(root: Path) -> list[str]:
    """The fetch URLs of the checkout's remotes; none when `root` is not the top of a Git checkout (a
    folder inside one is no checkout of its remotes: Argo CD reads source paths from the top) or git is
    missing."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or Path(top.strip()).resolve() != root.resolve():
        return []
    listed = _git(root, "remote", "-v")
    if listed is None:
        return []
    return sorted({line.split()[1] for line in listed.splitlines() if len(line.split()) >= 2})


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def parse_mapping(text: str, base: Path) -> tuple[str, Path]:
    """`URL=DIR` of a --repo option; raises ValueError naming what is wrong."""
    url, sign, folder = text.rpartition("=")
    if not sign or not url or not folder:
        raise ValueError(f"--repo {text!r} must be URL=DIR")
    path = (base / folder).resolve()
    if not path.is_dir():
        raise ValueError(f"--repo {text!r}: {folder} is not a directory")
    return url, path
