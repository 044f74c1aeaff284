"""Which shard of a fleet an Application falls to: a split that CI runners agree on without talking.

`check --shard I/N` renders the Applications whose instance name hashes to shard I of N. The hash is the
first eight bytes of the name's SHA-256, read big-endian, modulo N, plus one: the same on every machine and
every Python (Python's own `hash()` is salted per process), and an app keeps its shard however the rest of
the fleet changes. Whatever else a shard's document carries (skipped sources, live objects) goes by the
app it names, so each item lands in exactly one shard.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from cmp.errors import UsageError

MAX_SHARDS = 1000  # a CI matrix far past this is a typo, not a fleet
_SHARD = re.compile(r"^([0-9]+)/([0-9]+)$")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard `index` (1 to `count`) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, app: str) -> bool:
        return shard_of(app, self.count) == self.index


def shard_of(app: str, count: int) -> int:
    """The shard (1 to `count`) of an Application's instance name."""
    digest = hashlib.sha256(app.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse(text: str) -> Shard:
    """`I/N` as `--shard` takes it: 1 <= I <= N <= MAX_SHARDS."""
    found = _SHARD.match(text.strip())
    if found is None:
        raise UsageError(f"--shard {text!r} is not I/N (shard I of N, e.g. --shard 2/4)")
    index, count = int(found[1]), int(found[2])
    if not 1 <= count <= MAX_SHARDS:
        raise UsageError(f"--shard {text}: N must be 1 to {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise UsageError(f"--shard {text}: I must be 1 to {count} (shards count from 1)")
    return Shard(index, count)
