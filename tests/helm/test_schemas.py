"""values.schema.json references: helm never reads or fetches what a schema names outside itself.

A chart whose schema (its own, a subchart folder's, a packed subchart's) names a file or a URL is refused
before helm starts, in generate and in check, with one error naming the schema and the reference; the
server it names is never contacted. With skip-schema-validation helm reads no schema, and the chart
renders. Real charts' schemas all pass.
"""

from __future__ import annotations

import json
import shutil
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from archives import bomb, good_members, member, tgz
from servers import ChartRepository, chart_repository

from cmp.errors import PathError
from cmp.helm import schemas
from conftest import REALCHARTS_MISSING, TESTS, realchart, realchart_index, realcharts, run_cli, untarred

CHART = TESTS / "charts" / "shared"
CONFIG = "apiVersion: chartshare/v1\nkind: ChartShare\nchart: ../chart\nowner: dev-a\n"
APPLICATIONS = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: dev-a, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: ns}
  source: {repoURL: "https://git.example.com/r.git", path: app, plugin: {name: chartshare-v1}}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: dev-helm, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: ns}
  source: {repoURL: "https://git.example.com/r.git", path: chart}
"""


@pytest.fixture
def server(helm: str, tmp_path: Path) -> Iterator[ChartRepository]:
    """A real HTTP server on 127.0.0.1 that answers a schema and records every request it gets."""
    with chart_repository(helm, tmp_path / "server", []) as serving:
        body = json.dumps({"type": "object"}).encode()

        def answer(handler: Any) -> None:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)

        serving.routes["/schema.json"] = answer
        yield serving


def _url(server: ChartRepository) -> str:
    return server.url.removesuffix("/charts") + "/schema.json"


def _repo(base: Path, schema: object, where: str = "") -> Path:
    """A repository whose chart (or the subchart folder `where`) has `schema` as its values.schema.json."""
    repo = base / "repo"
    shutil.copytree(CHART, repo / "chart")
    (repo / "app").mkdir()
    (repo / "app" / "chartshare.yaml").write_text(CONFIG)
    folder = repo / "chart" / where
    if where:
        (folder / "templates").mkdir(parents=True)
        (folder / "Chart.yaml").write_text("apiVersion: v2\nname: sub\nversion: 1.0.0\n")
    (folder / "values.schema.json").write_text(json.dumps(schema))
    return repo


def _generate(repo: Path, helm: str, *extra: str) -> Any:
    args = ["generate", str(repo / "app"), "--repo-root", str(repo), "--app", "dev-a", *extra]
    return run_cli(args, env={"CHARTSHARE_HELM": helm})


def _reference(url: str) -> dict[str, object]:
    return {"type": "object", "properties": {"replicas": {"$ref": url}}}


@pytest.mark.parametrize("where", ["", "charts/sub"], ids=["chart", "subchart"])
def test_a_schema_naming_a_file_outside_is_refused_before_helm_reads_it(helm: str, tmp_path: Path, where: str) -> None:
    repo = _repo(tmp_path, _reference("file:///etc/passwd"), where)
    result = _generate(repo, helm)
    assert result.exit_code == 1 and result.stdout == ""
    shown = f"{where}/values.schema.json" if where else "values.schema.json"
    assert result.stderr == (
        f"chartshare: error: chart chart: {shown}: $ref 'file:///etc/passwd' at /properties/replicas/$ref "
        "leaves the schema: helm would read or fetch it during the render; only references within the same "
        "file ('#/...') are allowed, or set skip-schema-validation\n"
    )


def test_a_schema_naming_a_url_is_refused_and_the_server_never_contacted(
    helm: str, tmp_path: Path, server: ChartRepository
) -> None:
    repo = _repo(tmp_path, _reference(_url(server)))
    result = _generate(repo, helm)
    assert result.exit_code == 1 and result.stdout == ""
    assert f"$ref '{_url(server)}'" in result.stderr and "values.schema.json" in result.stderr
    assert server.seen == []


def test_a_packed_subchart_s_schema_is_checked_too(helm: str, tmp_path: Path, server: ChartRepository) -> None:
    repo = _repo(tmp_path, {"type": "object"})
    schema = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", **_reference(_url(server))})
    members = [*good_members("sub"), member("sub/values.schema.json", schema.encode())]
    (repo / "chart" / "charts").mkdir(exist_ok=True)
    (repo / "chart" / "charts" / "sub-1.0.0.tgz").write_bytes(tgz(members))
    result = _generate(repo, helm)
    assert result.exit_code == 1
    assert "chart chart: charts/sub-1.0.0.tgz/values.schema.json: $ref 'http" in result.stderr
    assert server.seen == []


def test_with_skip_schema_validation_helm_reads_no_schema_and_the_chart_renders(
    helm: str, tmp_path: Path, server: ChartRepository
) -> None:
    """What an Argo CD user who sets skipSchemaValidation expects: the schema is not used at all."""
    repo = _repo(tmp_path, _reference(_url(server)))
    result = _generate(repo, helm, "--skip-schema-validation")
    assert result.exit_code == 0, result.stderr
    assert "kind: ConfigMap" in result.stdout
    assert server.seen == []


def test_a_schema_with_local_references_and_a_held_meta_schema_renders(helm: str, tmp_path: Path) -> None:
    schema = {
        "$schema": "https://json-schema.org/draft-07/schema#",
        "$id": "http://example.com/values",
        "definitions": {"count": {"type": "integer"}},
        "properties": {"replicas": {"$ref": "#/definitions/count"}},
    }
    result = _generate(_repo(tmp_path, schema), helm)
    assert result.exit_code == 0, result.stderr


def test_check_refuses_it_for_chartshare_and_helm_sources_and_contacts_nothing(
    helm: str, tmp_path: Path, server: ChartRepository
) -> None:
    repo = _repo(tmp_path, _reference(_url(server)))
    (repo / "argocd").mkdir()
    (repo / "argocd" / "apps.yaml").write_text(APPLICATIONS)
    result = run_cli(["check", str(repo / "argocd"), "--repo-root", str(repo), "--helm", helm, "--format", "json"])
    assert result.exit_code == 1, result.stderr
    skipped = {entry["app"]: entry["reason"] for entry in json.loads(result.stdout)["skipped"]}
    assert set(skipped) == {"dev-a", "dev-helm"}
    for reason in skipped.values():
        assert reason.startswith("render failed:") and f"$ref '{_url(server)}'" in reason
    assert server.seen == []


# --- the reading itself, without helm ----------------------------------------------------------------------


def _chart(tmp_path: Path, schema: bytes | str) -> Path:
    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "values.schema.json").write_bytes(schema.encode() if isinstance(schema, str) else schema)
    return chart


def _refused(chart: Path) -> str:
    with pytest.raises(PathError) as refused:
        schemas.refuse_remote_references(chart, 10)
    return str(refused.value)


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ('{"properties": {"a": {"\\u0024ref": "file:///etc/passwd"}}}', "$ref 'file:///etc/passwd'"),
        ('{"$ref": "#/a", "$ref": "other.json"}', "$ref 'other.json'"),
        ('{"items": [{"$dynamicRef": "http://x/"}]}', "$dynamicRef 'http://x/' at /items/0/$dynamicRef"),
        ('{"$recursiveRef": "https://x/"}', "$recursiveRef 'https://x/'"),
        ('{"$schema": "http://json-schema.org/draft-03/schema#"}', "$schema 'http://json-schema.org/draft-03"),
        ('{"$schema": "https://JSON-schema.org/draft-07/schema#"}', "$schema 'https://JSON-schema.org/"),
        ('{"$id": "http://x/", "$ref": "relative.json"}', "$ref 'relative.json'"),
        ('{"enum": [{"$ref": "etc/passwd"}]}', "$ref 'etc/passwd' at /enum/0/$ref"),
    ],
    ids=["escaped", "twice", "dynamic", "recursive", "draft-03", "upper-case-host", "under-an-id", "in-data"],
)
def test_every_way_to_name_something_outside_is_refused(tmp_path: Path, schema: str, named: str) -> None:
    assert named in _refused(_chart(tmp_path, schema))


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ("", "is not JSON (Expecting value at line 1 column 1)"),
        ("[" * 100_000, "nests too deeply for its references to be checked"),
        (json.dumps({"description": "x" * (5 << 20)}), "is over the 5 MiB helm loads"),
    ],
    ids=["empty", "deep", "large"],
)
def test_a_schema_that_cannot_be_read_to_tell_is_refused_by_name(tmp_path: Path, schema: str, reason: str) -> None:
    assert f"chart chart: values.schema.json {reason}" in _refused(_chart(tmp_path, schema))


def test_a_packed_subchart_past_helm_s_bounds_is_refused_within_its_bounds(tmp_path: Path) -> None:
    chart = _chart(tmp_path, "{}")
    (chart / "charts").mkdir()
    (chart / "charts" / "sub.tgz").write_bytes(bomb())
    started = time.monotonic()
    assert "charts/sub.tgz cannot be checked for schema references: member 'sub/templates/z0.yaml' is 16.0 MiB" in (
        _refused(chart)
    )
    assert time.monotonic() - started < 10  # generous: it stops at the first member's header


def test_subchart_folders_are_checked_once_each_and_hidden_ones_as_helm_skips_them(tmp_path: Path) -> None:
    chart = _chart(tmp_path, "{}")
    (chart / "charts" / "_helpers").mkdir(parents=True)
    (chart / "charts" / "_helpers" / "values.schema.json").write_text('{"$ref": "http://x/"}')
    (chart / "charts" / "loop").symlink_to(Path(".."))  # a loop: its folder is read once
    schemas.refuse_remote_references(chart, 10)
    nested = chart / "charts" / "a" / "charts" / "b"
    nested.mkdir(parents=True)
    (nested / "values.schema.json").write_text('{"$ref": "http://x/"}')
    assert _refused(chart).startswith("chart chart: charts/a/charts/b/values.schema.json: $ref 'http://x/'")


def test_a_nested_packed_subchart_s_schema_is_found(tmp_path: Path) -> None:
    inner = tgz([*good_members("inner"), member("inner/values.schema.json", b'{"$ref": "file:///x"}')])
    outer = tgz([*good_members("outer"), member("outer/charts/inner.tgz", inner, tarfile.REGTYPE)])
    chart = _chart(tmp_path, "{}")
    (chart / "charts").mkdir()
    (chart / "charts" / "outer.tgz").write_bytes(outer)
    assert "charts/outer.tgz/charts/inner.tgz/values.schema.json: $ref 'file:///x'" in _refused(chart)


_INDEX = realchart_index(realcharts())


@pytest.fixture(params=sorted(_INDEX) or [REALCHARTS_MISSING])
def real_chart(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    chart = realchart(request, _INDEX)  # skips (fails in CI) without the folder
    folder = realcharts()
    assert folder is not None
    return untarred(folder, chart, tmp_path_factory.mktemp("charts"))


def test_real_charts_schemas_refer_only_within_themselves(real_chart: Path) -> None:
    schemas.refuse_remote_references(real_chart, 30)
    assert sys.getrecursionlimit() > 0  # nothing raised


def test_check_passes_a_helm_source_s_skip_schema_validation_to_helm_as_argo_cd_does(
    helm: str, tmp_path: Path, server: ChartRepository
) -> None:
    repo = _repo(tmp_path, _reference(_url(server)))
    (repo / "argocd").mkdir()
    helm_source = APPLICATIONS.split("---\n")[1]
    skipping = helm_source.replace("path: chart}", "path: chart, helm: {skipSchemaValidation: true}}")
    (repo / "argocd" / "apps.yaml").write_text(skipping)
    result = run_cli(["check", str(repo / "argocd"), "--repo-root", str(repo), "--helm", helm, "--format", "json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["skipped"] == [] and server.seen == []
