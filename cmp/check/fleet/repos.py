"""Which local folder holds the repository a `repoURL` names.

check reads checkouts, never the network: the checkout at `--repo-root` stands for every URL its own
remotes have (`git remote -v`), and `--repo URL=DIR` adds others. URLs compare as Argo CD's users write
them interchangeably: scheme, user, a `.git` suffix, a trailing slash and case aside, and the scp form
`git@host:org/repo` equal to `ssh://git@host/org/repo` and to `https://host/org/repo`.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.*)$")
GIT_TIMEOUT = 10


def normalize(url: str) -> str:
    """host/path of a Git URL, lower case, without scheme, user, port-less `:` form, `.git` or trailing `/`."""
    text = url.strip()
    if _SCHEME.match(text):
        text = _SCHEME.sub("", text)
        text = text.split("@", 1)[1] if "@" in text.split("/", 1)[0] else text
    else:
        scp = _SCP.match(text)
        if scp:
            text = f"{scp.group(1)}/{scp.group(2)}"
    text = text.rstrip("/")
    text = text.removesuffix(".git").rstrip("/")
    return text.lower()


@dataclass(frozen=True, slots=True)
class Repositories:
    """The checkouts check may read, by normalised URL."""

    root: Path
    checkouts: Mapping[str, Path] = field(default_factory=dict)

    def checkout_of(self, url: str) -> Path | None:
        """The folder holding the repository at `url`, or None when no checkout stands for it."""
        return self.checkouts.get(normalize(url)) if url else None

    @classmethod
    def build(cls, root: Path, remotes: Iterable[str], given: Iterable[tuple[str, Path]]) -> Repositories:
        checkouts = {normalize(url): root for url in remotes}
        checkouts.update((normalize(url), folder) for url, folder in given)
        return cls(root, checkouts)


def remotes_of(root: Path) -> list[str]:
    """The fetch URLs of the checkout's remotes; none when `root` is no Git checkout or git is missing."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "remote", "-v"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if listed.returncode != 0:
        return []
    return sorted({line.split()[1] for line in listed.stdout.splitlines() if len(line.split()) >= 2})


def parse_mapping(text: str, base: Path) -> tuple[str, Path]:
    """`URL=DIR` of a --repo option; raises ValueError naming what is wrong."""
    url, sign, folder = text.rpartition("=")
    if not sign or not url or not folder:
        raise ValueError(f"--repo {text!r} must be URL=DIR")
    path = (base / folder).resolve()
    if not path.is_dir():
        raise ValueError(f"--repo {text!r}: {folder} is not a directory")
    return url, path
