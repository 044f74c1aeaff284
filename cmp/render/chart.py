"""Where an app's chart lives: the folder chartshare.yaml's `chart:` names, else the app's own folder, or,
for a remote chart, its folder in the chart store that `chartshare init` filled (never the network).

The exact answer comes from the loaded chartshare.yaml. The plain `generate` line also needs it before
anything is imported (helm starts first), so `quick_chart_dir` reads `chart:` without YAML: a plain or
simply quoted folder on the key's line, or a block of plain or simply quoted `repository`, `name`,
`version` and `digest` lines at one indentation; it answers None whenever the file writes it any other
way, or a value might not be a string to YAML. A test holds it to the exact answer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from cmp.errors import ConfigError
from cmp.inputs.paths import MAX_CONFIG_BYTES, confine_tree, resolve_path, shown

if TYPE_CHECKING:
    from cmp.inputs.config import Config
    from cmp.model import Access, RemoteChart
    from cmp.ownership.rules import Ownership


def load_ownership(config: Config) -> Ownership | None:
    """The app's chartshare.yaml, loaded strictly; None when the app has none."""
    return ownership_of(config.config_path, config.repo_root)


def ownership_of(config_path: Path | None, root: Path) -> Ownership | None:
    if config_path is None:
        return None
    from cmp.ownership import rules

    return rules.load(config_path, shown(config_path, root), root)


def chart_dir(config: Config, ownership: Ownership | None) -> Path:
    """The chart folder of a resolved configuration (see chart_of)."""
    return chart_of(ownership, config.app_dir, config.repo_root, config.cache_root, config.access)


def chart_of(ownership: Ownership | None, app_dir: Path, root: Path, cache_root: Path, access: Access) -> Path:
    """The chart folder chartshare.yaml names (the app's own folder without one), confined to the
    repository with every symlink in it; a remote chart's folder in the chart store, as `access` (the
    request's AppProject) may be served it."""
    if ownership is None:
        if not (app_dir / "Chart.yaml").is_file():
            raise ConfigError(f"{app_dir} holds neither chartshare.yaml nor Chart.yaml; point the app at a chart")
        confine_tree(app_dir, root, "chart")
        return app_dir
    if not isinstance(ownership.chart, str):
        return cached_chart(ownership.chart, cache_root, ownership.display or ownership.path.name, access)
    what = f"{ownership.path.name}: chart"
    chart = resolve_path(ownership.chart, ownership.path.parent, root, what)
    if not (chart / "Chart.yaml").is_file():
        raise ConfigError(f"{shown(ownership.path, root)}: chart: {chart} holds no Chart.yaml")
    confine_tree(chart, root, what)
    return chart


def cached_chart(chart: RemoteChart, cache_root: Path, where: str, access: Access) -> Path:
    """A remote chart's folder in the chart store, as fetched with the entry this request's project may use;
    an error naming `chartshare init` when it is absent."""
    from cmp.remote.store import chart_store

    store = chart_store(cache_root, access=access)
    folder = store.lookup(chart)
    if folder is None:
        raise ConfigError(
            f"{where}: chart: {chart.label} is not in the chart cache {store.root}: `chartshare init` did not run "
            "or failed (Argo CD runs it before generate; outside Argo CD, run it first with the same CHARTSHARE_CACHE, "
            f"CHARTSHARE_REPOSITORIES and ARGOCD_APP_PROJECT_NAME: project {access.project} is served only what "
            "it may fetch)"
        )
    return folder


# chartshare.yaml's top-level `chart:` line with a plain or simply quoted value; any line that may be one.
_CHART = re.compile(
    r"^chart[ \t]*:[ \t]*(?:([^\s'\"#][^\s#]*)|\"([^\"\\\n]*)\"|'([^'\n]*)')(?:[ \t]+#.*)?[ \t]*$", re.M
)
_CHART_KEY = re.compile(r"^(?:[\"']|\?[ \t]+)?chart\b", re.M)
_CONTINUED = re.compile(r"\n(?:[ \t]*\n)*[ \t]+\S")  # an indented line after the value
# The mapping form: `chart:` alone on its line, then one entry per line at one indentation.
_CHART_BLOCK = re.compile(r"^chart[ \t]*:(?:[ \t]+#.*)?[ \t]*$", re.M)
_REMOTE_ENTRY = re.compile(
    r"^( +)(repository|name|version|digest)[ \t]*:[ \t]+"
    r"(?:([A-Za-z0-9_./][^\s#]*)|\"([^\"\\\n]*)\"|'([^'\n]*)')(?:[ \t]+#.*)?[ \t]*$"
)
# A plain name YAML might read as a number, a bool or null: the quick reading gives up on it.
_MAYBE_NOT_STRING = re.compile(
    r"^(?:[-+0-9._a-fA-FxXoO]*|[yYnN~]|yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|null|Null|NULL)$"
)


def chart_entry(text: str) -> str | RemoteChart | None:
    """The `chart:` of chartshare.yaml read without YAML ("." when absent); None when written otherwise."""
    keys = _CHART_KEY.findall(text)
    if not keys:
        return "."
    if len(keys) != 1:
        return None
    found = list(_CHART.finditer(text))
    if len(found) == 1:
        if _CONTINUED.match(text, found[0].end()):
            return None  # a plain scalar goes on over indented lines; anything else there is the loader's
        plain, double, single = found[0].groups()
        return plain or double or single or "."
    block = _CHART_BLOCK.search(text)
    return None if block is None or found else _remote_entry(text[block.end() :].split("\n")[1:])


def _remote_entry(lines: list[str]) -> RemoteChart | None:
    """The remote chart of the block after `chart:`; None for anything but plain entry lines."""
    from cmp.model import DIGEST, EXACT_VERSION, REMOTE_SCHEMES, RemoteChart

    values: dict[str, str] = {}
    indent = ""
    for line in lines:
        if not line.strip() or line.lstrip(" \t").startswith("#"):
            continue
        if line[0] not in " \t":
            break
        entry = _REMOTE_ENTRY.match(line)
        if entry is None or entry.group(2) in values or (indent and entry.group(1) != indent):
            return None
        indent, key, plain = entry.group(1), entry.group(2), entry.group(3)
        if plain is not None and (plain.endswith(":") or (key == "name" and _MAYBE_NOT_STRING.match(plain))):
            return None  # a version or URL is never a YAML number (EXACT_VERSION has two dots)
        values[key] = plain if plain is not None else entry.group(4) if entry.group(4) is not None else entry.group(5)
    if {"repository", "name", "version"} - set(values):
        return None
    chart = RemoteChart(values["repository"], values["name"], values["version"], values.get("digest", ""))
    exact = chart.repository.startswith(REMOTE_SCHEMES) and EXACT_VERSION.match(chart.version)
    return chart if exact and (not chart.digest or DIGEST.match(chart.digest)) else None


def quick_chart_dir(config: Config) -> Path | None:
    """The chart folder as far as it can be known without loading chartshare.yaml; None when unsure (or
    when a remote chart is not in the store). Raises what resolving the path raises (the caller gives up
    then: the pipeline says it properly)."""
    if config.config_path is None:
        return config.app_dir
    path = config.config_path
    if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
        return None  # a FIFO, a device, a huge file: the loader says what is wrong with it
    entry = chart_entry(path.read_text(encoding="utf-8"))
    if entry is None:
        return None
    if not isinstance(entry, str):
        from cmp.remote.store import chart_store

        return chart_store(config.cache_root, access=config.access).lookup(entry)
    return resolve_path(entry, path.parent, config.repo_root, "chart")
