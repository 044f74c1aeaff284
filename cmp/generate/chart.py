"""Where an app's chart lives: the folder chartshare.yaml's `chart:` names, else the app's own folder.

The exact answer comes from the loaded chartshare.yaml. The plain `generate` line also needs it before
anything is imported (helm starts first), so `quick_chart_dir` reads the one `chart:` line without YAML,
and answers None whenever the file writes it any other way; a test holds it to the exact answer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from cmp.errors import ConfigError
from cmp.inputs.paths import MAX_CONFIG_BYTES, confine_tree, resolve_path, shown

if TYPE_CHECKING:
    from cmp.inputs.config import Config
    from cmp.ownership.rules import Ownership


def load_ownership(config: Config) -> Ownership | None:
    """The app's chartshare.yaml, loaded strictly; None when the app has none."""
    return ownership_of(config.config_path, config.repo_root)


def ownership_of(config_path: Path | None, root: Path) -> Ownership | None:
    if config_path is None:
        return None
    from cmp.ownership import rules

    return rules.load(config_path, shown(config_path, root))


def chart_dir(config: Config, ownership: Ownership | None) -> Path:
    """The chart folder of a resolved configuration (see chart_of)."""
    return chart_of(ownership, config.app_dir, config.repo_root)


def chart_of(ownership: Ownership | None, app_dir: Path, root: Path) -> Path:
    """The chart folder chartshare.yaml names (the app's own folder without one), confined to the
    repository with every symlink in it."""
    if ownership is None:
        if not (app_dir / "Chart.yaml").is_file():
            raise ConfigError(f"{app_dir} holds neither chartshare.yaml nor Chart.yaml; point the app at a chart")
        confine_tree(app_dir, root, "chart")
        return app_dir
    what = f"{ownership.path.name}: chart"
    chart = resolve_path(ownership.chart, ownership.path.parent, root, what)
    if not (chart / "Chart.yaml").is_file():
        raise ConfigError(f"{shown(ownership.path, root)}: chart: {chart} holds no Chart.yaml")
    confine_tree(chart, root, what)
    return chart


# chartshare.yaml's top-level `chart:` line with a plain or simply quoted value; any line that may be one.
_CHART = re.compile(r"^chart[ \t]*:[ \t]*(?:([^\s'\"#][^\s#]*)|\"([^\"\\\n]*)\"|'([^'\n]*)')[ \t]*(?:#.*)?$", re.M)
_CHART_KEY = re.compile(r"^(?:[\"']|\?[ \t]+)?chart\b", re.M)


def chart_entry(text: str) -> str | None:
    """The `chart:` of chartshare.yaml read without YAML ("." when absent); None when written otherwise."""
    keys = _CHART_KEY.findall(text)
    if not keys:
        return "."
    found = _CHART.findall(text)
    if len(keys) != 1 or len(found) != 1:
        return None
    plain, double, single = found[0]
    return plain or double or single or "."


def quick_chart_dir(config: Config) -> Path | None:
    """The chart folder as far as it can be known without loading chartshare.yaml; None when unsure.
    Raises what resolving the path raises (the caller gives up then: the pipeline says it properly)."""
    if config.config_path is None:
        return config.app_dir
    path = config.config_path
    if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
        return None  # a FIFO, a device, a huge file: the loader says what is wrong with it
    entry = chart_entry(path.read_text(encoding="utf-8"))
    if entry is None:
        return None
    return resolve_path(entry, path.parent, config.repo_root, "chart")
