"""The settings of a render: every field of the run's configuration that can change what it prints, and
the files chartshare.yaml names beside the chart (its patches), which count as chartshare.yaml does.

The render cache keys on them (cmp/cache/key.py walks the chart folder beside them); generate and check
take them from here, so that what one keeps the other would key alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cmp.errors import ChartShareError
from cmp.render.chart import ownership_of

if TYPE_CHECKING:
    from cmp.inputs.config import Config

NOT_COUNTED = ("timeout", "cache", "cache_root")  # how long helm may take, whether to use the caches and where
# they are change no output (a remote chart's folder in the chart store counts as the chart, walked)


def settings(config: Config) -> dict[str, object]:
    """Every field of the run's configuration that can change what generate prints: all but NOT_COUNTED,
    so that a field added to Config counts without being named here."""
    fields: dict[str, object] = config._asdict()
    for name in NOT_COUNTED:
        del fields[name]
    files = post_render_files(config.config_path, config.repo_root)
    if files:
        fields["post_render_files"] = files
    return fields


def post_render_files(config_path: Path | None, root: Path) -> tuple[Path, ...]:
    """The patch files chartshare.yaml names (`path:`, legacy patchesStrategicMerge): they count in the key
    as chartshare.yaml does. chartshare.yaml is parsed only when it may name one; when it cannot be loaded
    the render fails on it too, and nothing is kept."""
    if config_path is None:
        return ()
    try:
        data = config_path.read_bytes()
    except OSError:
        return ()
    if b"path" not in data and b"patchesStrategicMerge" not in data:
        return ()
    try:
        ownership = ownership_of(config_path, root)
    except (ChartShareError, OSError, ValueError):
        return ()
    return ownership.post_render.files if ownership is not None else ()
