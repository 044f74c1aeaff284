"""`chartshare init`: the app's chart and its dependencies made present before `generate` renders it.

Argo CD runs init before every generate, in a fresh copy of the repository, under the same 60 s deadline.
A Git chart gets its dependencies (cmp/remote/dependencies.py); a remote chart (chartshare.yaml's
`chart:` mapping) is fetched into the chart store, its own dependencies completed before it is published.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cmp.errors import ChartShareError, PathError
from cmp.inputs.config import cache_root, default_helm, merged
from cmp.inputs.paths import config_file, find_repo_root
from cmp.model import Access, RemoteChart
from cmp.ownership.rules import Ownership
from cmp.remote.deadline import Deadline
from cmp.remote.dependencies import Build, ensure
from cmp.remote.fetch import Fetcher, fetch
from cmp.remote.store import chart_store
from cmp.render.chart import chart_of, ownership_of

DEFAULT_TIMEOUT = 30.0  # init and generate share Argo CD's 60 s; generate's helm gets 45 of them
REMOTE_HINT = "check that the repository answers from the sidecar, or raise init's --timeout"


def locate(
    app_dir: Path, env: Mapping[str, str], config: str | None, repo_root: Path | None
) -> tuple[Ownership | None, Path, Path]:
    """The app's chartshare.yaml (None without one), its folder and the repository root; as generate finds them."""
    app_dir = app_dir.resolve()
    if not app_dir.is_dir():
        raise PathError(f"APP_DIR {app_dir} is not a directory")
    root = repo_root.resolve() if repo_root else find_repo_root(app_dir, env.get("ARGOCD_APP_SOURCE_PATH", ""))
    chosen = merged({"config": config}, env).get("config")
    config_path = config_file(app_dir, root, chosen if isinstance(chosen, str) else "")
    return ownership_of(config_path, root), app_dir, root


def init(
    app_dir: Path,
    env: Mapping[str, str],
    *,
    config: str | None,
    helm: str | None,
    timeout: float | None,
    repo_root: Path | None,
) -> list[str]:
    """`chartshare init`: locate the app's chart (fetching a remote one) and make its dependencies present."""
    ownership, app_dir, root = locate(app_dir, env, config, repo_root)
    seconds = timeout if timeout is not None else DEFAULT_TIMEOUT
    helm = helm or default_helm(env)
    cache = cache_root(env)
    store = chart_store(cache, env)
    if ownership is not None and isinstance(ownership.chart, RemoteChart):
        fetcher = Fetcher(store, helm, Deadline(seconds, REMOTE_HINT), env)
        where = ownership.display or ownership.path.name
        try:
            return fetch(ownership.chart, fetcher).lines
        except ChartShareError as error:
            raise type(error)(f"{where}: chart: {error}") from None
    chart = chart_of(ownership, app_dir, root, cache, Access.of(env))
    return ensure(Build(chart, root, helm, Deadline(seconds), env, store))
