"""The remote-chart bad-input corpus: one row of tests/corpus/remote.yaml per way a remote chart goes wrong.

Every row writes an app whose chartshare.yaml names a chart on real servers started once per module on
127.0.0.1 (a plain HTTP repository holding good and hostile archives, an HTTPS repository with basic auth,
an OCI registry with htpasswd), runs `chartshare init` on helm 3 and helm 4, and asserts what Argo CD
depends on: exit 1, nothing on stdout, no traceback, exactly one `chartshare: error: ...` line matching
the row, no password anywhere, and nothing published in the chart store.

Row keys: `name`, `chart` (the mapping written as chartshare.yaml's chart:), `credentials` (entries of the
CHARTSHARE_REPOSITORIES file), `args` (more init arguments), `error` (regex), `max_seconds`.
Placeholders: {plain} {private} {oci} {closed} (repository URLs), {ca} {user} {password}.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from archives import HOSTILE, hostile
from servers import (
    PASSWORD,
    USER,
    chart_repository,
    free_port,
    library_chart,
    oci_registry,
    package,
    push,
    redirect,
    self_signed,
    stall,
)

from conftest import TESTS, run_cli

ROWS: list[dict[str, Any]] = yaml.safe_load((TESTS / "corpus" / "remote.yaml").read_text(encoding="utf-8"))


def _forbidden(handler: Any) -> None:
    handler.send_response(403)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


@pytest.fixture(scope="module")
def places(helm: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The servers every row may name, and the placeholders that name them."""
    base = tmp_path_factory.mktemp("servers")
    cert, key = self_signed(base)
    charts = [library_chart(base / "src", version=version) for version in ("0.1.0", "0.2.0")]
    with (
        chart_repository(helm, base / "plain", charts) as plain,
        chart_repository(helm, base / "private", charts[:1], auth=True, tls=(cert, key)) as private,
        oci_registry(base / "registry") as registry,
    ):
        for kind in HOSTILE:
            plain.add(f"evil-{kind}", "1.0.0", hostile(kind))
        plain.add("huge", "1.0.0", bytes(21 << 20))
        plain.routes["/charts/stall/index.yaml"] = stall(plain.stopping)
        private.routes["/charts/forbidden/index.yaml"] = _forbidden
        other_host = private.url.replace("127.0.0.1", "localhost")
        private.routes["/charts/moved/index.yaml"] = redirect(f"{other_host}/index.yaml")
        push(helm, registry, package(helm, charts[0], base), base / "pusher")
        yield {
            "plain": plain.url,
            "private": private.url,
            "oci": f"oci://{registry.host}/charts",
            "closed": f"http://127.0.0.1:{free_port()}/charts",
            "ca": str(cert),
            "user": USER,
            "password": PASSWORD,
        }


def _fill(value: Any, places: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, text in places.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, list):
        return [_fill(item, places) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, places) for key, item in value.items()}
    return value


@pytest.mark.parametrize("row", ROWS, ids=[row["name"] for row in ROWS])
def test_remote_bad_input(row: dict[str, Any], places: dict[str, str], helm: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "apps" / "a").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    config = {"apiVersion": "chartshare/v1", "kind": "ChartShare", "owner": "a", "chart": _fill(row["chart"], places)}
    (repo / "apps" / "a" / "chartshare.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    if "credentials" in row:
        (tmp_path / "repositories.yaml").write_text(yaml.safe_dump(_fill(row["credentials"], places)))
        env["CHARTSHARE_REPOSITORIES"] = str(tmp_path / "repositories.yaml")
    started = time.monotonic()
    result = run_cli(["init", str(repo / "apps" / "a"), "--repo-root", str(repo), *row.get("args", [])], env=env)
    elapsed = time.monotonic() - started
    assert "Traceback" not in result.stderr
    assert (result.exit_code, result.stdout) == (1, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("chartshare: error: apps/a/chartshare.yaml"), result.stderr
    assert "internal error" not in lines[0] and PASSWORD not in lines[0]
    assert re.search(_fill(row["error"], {key: re.escape(value) for key, value in places.items()}), lines[0]), lines[0]
    assert not list((tmp_path / "cache").rglob("Chart.yaml")), "nothing was published in the chart store"
    if "max_seconds" in row:
        assert elapsed < row["max_seconds"], f"took {elapsed:.1f} s"


def test_the_remote_corpus_covers_every_hostile_archive_and_names_are_unique() -> None:
    names = [row["name"] for row in ROWS]
    assert len(names) == len(set(names))
    served = {row["chart"]["name"].removeprefix("evil-") for row in ROWS if row["chart"]["name"].startswith("evil-")}
    assert served == set(HOSTILE)
