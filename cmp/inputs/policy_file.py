"""Where the fleet policy is, and its text, read once per run: the platform team's file beside the sidecar
(mounted from a ConfigMap), never a file of the tenant's repository.

Its text, not its path, goes into the run's configuration, so that the render cache keys on the content
every render is decided by (a ConfigMap edit is a new key), and the render parses the very bytes it was
keyed on. Reading is bounded like chartshare.yaml's; parsing is cmp/ownership/policy.py's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from cmp.errors import PolicyError
from cmp.inputs.paths import MAX_CONFIG_BYTES

ENV = "CHARTSHARE_POLICY"
DEFAULT_PATH = Path("/home/argocd/cmp-server/config/chartshare-policy.yaml")


class PolicyText(NamedTuple):
    """The policy file as messages name it (its path), and its text."""

    display: str
    text: str


def read_policy(env: Mapping[str, str]) -> PolicyText | None:
    """The policy $CHARTSHARE_POLICY names (a missing file is an error: the platform meant one), else the
    default path's (absent: no policy)."""
    named = env.get(ENV, "")
    path = Path(named) if named else DEFAULT_PATH
    if not named and not path.exists():
        return None
    return read(path)


def read(path: Path) -> PolicyText:
    """The file's text, refused past 1 MiB or when it is not UTF-8; every error names the file."""
    display = str(path)
    try:
        if not path.exists():
            raise PolicyError(
                f"{display}: the policy file {ENV} names does not exist; mount the chartshare-policy ConfigMap "
                f"there or point {ENV} at it"
            )
        if not path.is_file():  # a FIFO would block open() for ever, a device never end
            raise PolicyError(f"{display}: the policy is not a regular file")
        with path.open("rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)
            size = max(len(raw), os.fstat(file.fileno()).st_size)
    except OSError as error:
        raise PolicyError(f"{display}: cannot read the policy file: {error.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise PolicyError(f"{display}: {size} bytes is too large for a policy file (limit 1 MiB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise PolicyError(
            f"{display}:{line}: the policy is not UTF-8 text (bad byte at offset {error.start})"
        ) from None
    return PolicyText(display, text)
