"""`chartshare parameters`: the dynamic parameter announcement shown in Argo CD's Parameters tab.

Argo CD runs it with less than generate gets (no KUBE_*, no revision, no destination namespace) and puts
its entries before the static ones of plugin.yaml; the UI shows the first entry of each name. So the
entries here replace the static ones for this app:

- `set` carries the chart's own values flattened (`image.tag`, `ports[0].name`), as the native Helm source
  shows them: they are the defaults helm applies when nothing is set;
- `values-files` names, in its tooltip, the value files found beside the chart and the app;
- `config` summarises what the ownership rules decide for this app.

The announcement changes nothing in the cluster, so a problem the user can fix from this very tab (a bad
parameter, a failing render) is shown in the `config` entry instead of failing the call, which would hide
the whole tab.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cmp import goyaml, tenant_yaml
from cmp.errors import ChartShareError, ConfigError, PolicyError
from cmp.inputs import parameters as params
from cmp.inputs.config import Config
from cmp.inputs.options import options
from cmp.inputs.paths import CONFIG_FILE

if TYPE_CHECKING:
    from cmp.ownership.rules import Ownership

RENDER_TIMEOUT = 30.0  # the announcement has the same 60 s as generate, and may build dependencies first
DEPENDENCY_TIMEOUT = 20.0
_SKIPPED_DIRS = frozenset({"charts", "templates", ".git"})
_NOT_SENT = "rendered without the destination namespace and cluster versions, which Argo CD does not send here"


def announce(
    app_dir: Path, env: Mapping[str, str], *, app_name: str | None, helm: str | None, repo_root: Path | None
) -> list[dict[str, Any]]:
    """The announcement for one app: never raises for a problem the Parameters tab can help fix."""
    try:
        given = {"app": app_name, "helm": helm, "repo-root": str(repo_root) if repo_root else None}
        config = options(app_dir, given).resolve(env)._replace(timeout=RENDER_TIMEOUT)
    except PolicyError as error:
        return [_config_entry("", _policy_problem(error))]
    except ChartShareError as error:
        return [_config_entry("", f"this app's parameters are not valid: {error}")]
    from cmp.render.chart import chart_dir, load_ownership

    try:
        ownership = load_ownership(config)
        chart = chart_dir(config, ownership)
    except ChartShareError as error:
        return [_config_entry(_config_name(config), f"cannot read the ownership file: {error}")]
    entries: list[dict[str, Any]] = []
    try:
        entries.append(_values_files_entry(config, chart))
        entries.append(_set_entry(chart))
    except ChartShareError as error:
        return [_config_entry(_config_name(config), str(error))]
    entries.append(_config_entry(_config_name(config), _decisions(config, chart, env) + _post_render(ownership)))
    return entries


def _policy_problem(error: PolicyError) -> str:
    """A broken fleet policy, said without its content: the tab shows a tenant what decides its own objects,
    never the platform's file (generate's error, which the platform team reads, names the problem)."""
    return (
        f"Cannot show this app's decisions: the fleet policy ({error.where}) is missing or not valid, so every "
        "render fails; the platform team must fix it"
    )


def _post_render(ownership: Ownership | None) -> str:
    """The post-render fields chartshare.yaml sets, named as a kustomization names them."""
    fields = ownership.post_render if ownership is not None else None
    if fields is None or fields.empty:
        return ""
    named = [
        (name, len(entries))
        for name, entries in (
            ("patchesStrategicMerge", fields.strategic),
            ("patches", fields.patches),
            ("labels", fields.labels),
            ("commonAnnotations", fields.annotations),
            ("patchesJson6902", fields.json6902),
            ("images", fields.images),
        )
        if entries
    ]
    listed = ", ".join(f"{name} ({count})" for name, count in named)
    return f". Post-render, before the rules (kustomize's fields and order): {listed}"


def render(entries: list[dict[str, Any]]) -> str:
    return json.dumps(entries, indent=None, separators=(",", ":"), ensure_ascii=False) + "\n"


def _parameter(name: str) -> params.Parameter:
    return params.BY_NAME[name]


def _config_name(config: Config) -> str:
    if config.config_path is None:
        return ""
    path = config.config_path
    return os.path.relpath(path, config.app_dir) if path.is_relative_to(config.repo_root) else str(path)


def _config_entry(config_name: str, summary: str) -> dict[str, Any]:
    parameter = _parameter("config")
    entry: dict[str, Any] = {
        "name": parameter.name,
        "title": parameter.title,
        "tooltip": f"{parameter.tooltip}. {summary}",
        "collectionType": "string",
    }
    if config_name:
        entry["string"] = config_name
    return entry


def _values_files_entry(config: Config, chart: Path) -> dict[str, Any]:
    parameter = _parameter("values-files")
    found = sorted(set(_value_files(chart, config)) | set(_value_files(config.app_dir, config)))
    listed = ", ".join(found) if found else "none"
    return {
        "name": parameter.name,
        "title": parameter.title,
        "tooltip": f"{parameter.tooltip}. Found beside the chart and the app: {listed}",
        "collectionType": "array",
    }


def _value_files(folder: Path, config: Config) -> Iterator[str]:
    """Files named like value files (Argo CD's rule: `values` in the name, .yaml or .yml), as values-files
    entries: relative to the app path inside it, else from the repository root with a leading `/`."""
    chart_values = (folder / "values.yaml").resolve()
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in files:
            if "values" not in name or not name.endswith((".yaml", ".yml")):
                continue
            path = (Path(current) / name).resolve()
            if path == chart_values and (folder / "Chart.yaml").is_file():
                continue  # helm applies the chart's own values.yaml anyway
            if not path.is_relative_to(config.repo_root):
                continue
            if path.is_relative_to(config.app_dir):
                yield str(path.relative_to(config.app_dir))
            else:
                yield "/" + str(path.relative_to(config.repo_root))


def _set_entry(chart: Path) -> dict[str, Any]:
    parameter = _parameter("set")
    values_file = chart / "values.yaml"
    flat: dict[str, str] = {}
    if values_file.is_file():
        try:
            loaded = goyaml.load(tenant_yaml.read(values_file, values_file.name))
        except ConfigError as error:
            raise _ValuesError(f"cannot read the chart's {error}") from None
        except (OSError, yaml.YAMLError) as error:
            raise _ValuesError(f"cannot read {values_file.name} of the chart: {error}") from None
        if isinstance(loaded, dict):
            flatten(loaded, flat)
    return {
        "name": parameter.name,
        "title": parameter.title,
        "tooltip": f"{parameter.tooltip}. Shown: the chart's defaults from values.yaml",
        "collectionType": "map",
        "map": dict(sorted(flat.items())),
    }


class _ValuesError(ChartShareError):
    """The chart's values.yaml cannot be read."""


def flatten(value: Any, out: dict[str, str], prefix: str = "") -> None:
    """Argo CD's flatVals: nested keys joined with `.`, list items as `key[i]`; empty maps and lists vanish."""
    if isinstance(value, dict):
        for key, item in value.items():
            flatten(item, out, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            flatten(item, out, f"{prefix}[{index}]")
    else:
        out[prefix] = _scalar(value)


def _scalar(value: Any) -> str:
    """The text `--set key=<text>` needs to give helm back the same value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _decisions(config: Config, chart: Path, env: Mapping[str, str]) -> str:
    """One line on what the rules do for this app, from a real render."""
    from cmp.ownership.report import summary
    from cmp.remote import dependencies
    from cmp.remote.deadline import Deadline
    from cmp.remote.store import chart_store
    from cmp.render.pipeline import render

    try:
        build_spec = dependencies.Build(
            chart=chart,
            root=config.repo_root,
            helm=config.helm,
            deadline=Deadline(DEPENDENCY_TIMEOUT),
            env=env,
            store=chart_store(config.cache_root, env, config.access),
        )
        dependencies.ensure(build_spec)
        outcome = render(config)
    except PolicyError as error:
        return _policy_problem(error)
    except ChartShareError as error:
        return f"Cannot show this app's decisions: {error}"
    lines = summary(outcome)
    source = f"{_config_name(config)}: " if config.config_path else f"no {CONFIG_FILE}, every resource is kept: "
    return f"{source}{'; '.join(line.strip() for line in lines)} ({_NOT_SENT})"
