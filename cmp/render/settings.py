"""The settings of a render: every field of the run's configuration that can change what it prints, and,
once chartshare.yaml is parsed, the files it names beside the chart (its patches), which count as it does.

The render cache keys on them (cmp/cache/key.py walks the chart folder beside them); generate and check
take them from here, so that what one keeps the other would key alike. The files come from the parsed
configuration's own list, never from a search of chartshare.yaml's bytes (a key written `"p\\x61th"` is
`path` to YAML): generate's look-up, which reads no YAML, keys on chartshare.yaml's bytes first and goes on
with its files only where a render with those bytes found some (cmp/generate/cached.py).
"""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cmp.inputs.config import Config
    from cmp.ownership.rules import Ownership

NOT_COUNTED = ("timeout", "spent", "cache", "cache_root")  # how long helm may take, whether to use the caches and where
# they are change no output (a remote chart's folder in the chart store counts as the chart, walked)


def settings(config: Config, ownership: Ownership | None = None) -> dict[str, object]:
    """Every field of the run's configuration that can change what generate prints: all but NOT_COUNTED,
    so that a field added to Config counts without being named here; with the parsed chartshare.yaml, the
    files it names (`named_files`)."""
    fields: dict[str, object] = config._asdict()
    for name in NOT_COUNTED:
        del fields[name]
    fields.update(policy_fields(config))
    files = named_files(ownership)
    if files:
        fields["named_files"] = files
    return fields


def policy_fields(config: Config) -> dict[str, object]:
    """The fleet policy by its content (a digest of its text), never its path; the app's project, which
    picks its entry, counts already (config.access)."""
    text = config.policy.text if config.policy is not None else None
    return {"policy": sha256(text.encode("utf-8", "surrogatepass")).hexdigest() if text is not None else None}


def named_files(ownership: Ownership | None) -> tuple[Path, ...]:
    """The files the parsed chartshare.yaml read besides itself (`path:` of its patches, legacy
    patchesStrategicMerge), as it resolved them: they count in the key as chartshare.yaml does."""
    return ownership.post_render.files if ownership is not None else ()
