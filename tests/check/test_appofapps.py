"""App of Apps, dependencies built as the repo-server builds them, and failing renders, through the real CLI.

The fleets are written here; the dependencies come from a chart repository on 127.0.0.1 and, offline,
from the chart cache it filled.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml
from servers import chart_repository, library_chart

from conftest import TESTS, Result, run_cli

APP_OF_APPS = TESTS / "cases" / "check" / "app-of-apps"
APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: https://git.example.com/fleet.git, path: {path}, targetRevision: main}}
  destination: {{server: https://kubernetes.default.svc, namespace: {namespace}}}
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _check(root: Path, *args: str, helm: str | None = None, cache: Path | None = None) -> Result:
    env = {"CHARTSHARE_CACHE": str(cache or root.parent / "cache")}
    if helm is not None:
        env["CHARTSHARE_HELM"] = helm
    return run_cli(["check", str(root / "argocd"), "--repo-root", str(root), *args], env=env)


def test_an_app_that_renders_its_own_ancestor_is_a_cycle_naming_both(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "repo",
        {
            "argocd/a.yaml": APP.format(name="a", path="apps/a", namespace="argocd"),
            "apps/a/b.yaml": APP.format(name="b", path="apps/b", namespace="argocd"),
            "apps/b/a.yaml": APP.format(name="a", path="apps/a", namespace="argocd"),
        },
    )
    result = _check(root)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "Application a is rendered by b, which a itself creates" in line and "argocd/a.yaml" in line


def test_two_definitions_under_one_name_are_a_conflict_naming_both_places(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "repo",
        {
            "argocd/root.yaml": APP.format(name="root", path="apps/root", namespace="argocd"),
            "argocd/web.yaml": APP.format(name="web", path="apps/web", namespace="web"),
            "apps/root/web.yaml": APP.format(name="web", path="apps/web", namespace="elsewhere"),
            "apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
        },
    )
    result = _check(root, "--format", "json")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    places = ["file:" + str(root / "argocd" / "web.yaml"), "root"]
    assert [(c["kind"], c["name"], c["apps"]) for c in report["conflicts"]] == [("Application", "web", places)]
    assert [skip["app"] for skip in report["skipped"]] == ["web"]
    assert [app["name"] for app in report["applications"]] == ["root"]


def test_shards_render_the_parents_and_merge_to_the_single_run(tmp_path: Path, helm: str) -> None:
    root = tmp_path / "repo"
    shutil.copytree(APP_OF_APPS, root)
    single = _check(root, helm=helm)
    assert single.exit_code == 0, single.stderr
    documents = []
    for index in (1, 2, 3):
        shard = _check(root, "--shard", f"{index}/3", helm=helm)
        assert shard.exit_code == 0, shard.stderr
        documents.append(tmp_path / f"shard-{index}.json")
        documents[-1].write_text(shard.stdout)
    owned = [[entry["name"] for entry in json.loads(path.read_text())["applications"]] for path in documents]
    assert sorted(name for names in owned for name in names) == sorted(
        ["jsonnet", "leaf", "middle", "plain", "root", "team-blue", "team-green", "web"]
    )  # each app in exactly one shard's document
    merged = run_cli(["check", "--merge", *map(str, documents)])
    assert (merged.exit_code, merged.stdout) == (0, single.stdout)


def _dependent_fleet(root: Path, repository: str) -> Path:
    """A Helm source and a chartshare source whose charts declare a dependency not vendored in charts/."""
    meta = {
        "apiVersion": "v2",
        "name": "shop",
        "version": "1.0.0",
        "dependencies": [{"name": "greeting", "version": "0.1.0", "repository": repository}],
    }
    files = {
        "argocd/apps.yaml": APP.format(name="shop", path="charts/shop", namespace="shop")
        + "---\n"
        + APP.format(name="plugin-shop", path="apps/plugin-shop", namespace="plugin")
        + "---\n"
        + APP.format(name="fine", path="apps/fine", namespace="fine"),
        "charts/shop/Chart.yaml": yaml.safe_dump(meta),
        "charts/shop/templates/service.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: shop}\n"
        "spec: {ports: [{port: 80}]}\n",
        "apps/plugin-shop/chartshare.yaml": "apiVersion: chartshare/v1\nkind: ChartShare\nchart: ../../charts/shop\n",
        "apps/fine/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n",
    }
    _write(root, files)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _configmaps(result: Result) -> dict[str, int]:
    return {row["name"]: row["resources"] for row in json.loads(result.stdout)["applications"]}


def test_dependencies_are_built_in_a_scratch_copy_then_taken_offline_from_the_cache(tmp_path: Path, helm: str) -> None:
    greeting = library_chart(tmp_path / "src")
    with chart_repository(helm, tmp_path / "web", [greeting]) as repository:
        root = _dependent_fleet(tmp_path / "repo", repository.url)
        online = _check(root, "--format", "json", helm=helm)
        assert online.exit_code == 0, online.stderr
    assert _configmaps(online) == {"fine": 1, "plugin-shop": 2, "shop": 2}  # the Service and greeting's ConfigMap
    assert not (root / "charts" / "shop" / "charts").exists()  # the checkout is never written
    assert subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True).stdout == (
        "?? apps/\n?? argocd/\n?? charts/\n"
    )
    offline = _check(root, "--format", "json", "--offline", helm=helm)  # the server is gone: the cache serves
    assert (offline.exit_code, offline.stdout) == (0, online.stdout), offline.stderr


def test_offline_a_dependency_the_cache_lacks_skips_the_app_naming_it(tmp_path: Path, helm: str) -> None:
    root = _dependent_fleet(tmp_path / "repo", "http://127.0.0.1:9/charts")
    result = _check(root, "--offline", helm=helm)
    assert result.exit_code == 0, result.stderr
    assert (
        "  shop: source: dependency greeting 0.1.0 from http://127.0.0.1:9/charts is not in the chart cache "
        "(--offline); fill it by running check without --offline" in result.stdout
    )
    assert "  plugin-shop: source: dependency greeting 0.1.0" in result.stdout
    assert "fill it with `chartshare init apps/plugin-shop`" in result.stdout
    assert result.stdout.endswith("chartshare check: 1 application, 0 conflicts, 0 warnings, 2 skipped\n")
    assert _check(root, "--offline", "--strict", helm=helm).exit_code == 1


def test_a_dependency_that_cannot_be_fetched_fails_that_app_only(tmp_path: Path, helm: str) -> None:
    root = _dependent_fleet(tmp_path / "repo", "http://127.0.0.1:9/charts")  # nothing listens on port 9
    result = _check(root, helm=helm)
    assert result.exit_code == 1, result.stderr
    assert "  shop: render failed: spec.source: dependencies of shop: " in result.stdout
    assert "chartshare check: 1 application, 0 conflicts, 0 warnings, 2 skipped" in result.stdout
