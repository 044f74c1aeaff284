"""The remote-chart example: three teams' Applications share the vendor's log-agent chart, fetched from a
Helm repository by plugin.yaml's init and rendered by generate, through the cmp-server emulator.

The vendor's chart (examples/remote-chart/vendor/log-agent) is packaged here and served from a repository
on 127.0.0.1; a checkout of this repository gets chartshare.yaml's `chart.repository` pointed at it.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from emulator import Application, CmpServer
from servers import ChartRepository, chart_repository
from sidecar_support import checkout, example_applications, shared_tmp, sidecar_bin, sidecar_env

from conftest import ROOT, run_cli

EXAMPLE = "examples/remote-chart"
TEAMS = ("platform", "payments", "search")
APPLICATIONS = {
    manifest["metadata"]["name"]: Application.from_manifest(manifest)
    for name, manifest in example_applications()
    if name.startswith(EXAMPLE)
}


@pytest.fixture(scope="module")
def world(helm: str) -> Iterator[tuple[CmpServer, Path, ChartRepository]]:
    """The emulated sidecar (its own chart cache), a checkout pointed at the local repository, the server."""
    base = shared_tmp("chartshare-remote-example-")
    with chart_repository(helm, base / "web", [ROOT / EXAMPLE / "vendor" / "log-agent"]) as web:
        repo = checkout(base / "repo")
        config = repo / EXAMPLE / "apps" / "agents" / "chartshare.yaml"
        config.write_text(config.read_text().replace("https://charts.example.com/telemetry", web.url))
        chartshare = Path(sys.executable).parent / "chartshare"
        bin_dir = sidecar_bin(base / "bin", helm=Path(helm), chartshare=chartshare)
        env = sidecar_env(bin_dir, base / "home", CHARTSHARE_CACHE=str(base / "cache"))
        yield CmpServer(ROOT / "plugin.yaml", env, workdir=base / "tmp"), repo, web
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def renders(world: tuple[CmpServer, Path, ChartRepository]) -> dict[str, list[dict[str, Any]]]:
    server, repo, _ = world
    return {team: server.manifests(APPLICATIONS[team], repo) for team in TEAMS}


def _named(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {obj["metadata"]["name"]: obj for obj in objects if obj["kind"] == kind}


def test_the_example_has_three_applications_of_one_remote_chart() -> None:
    assert sorted(APPLICATIONS) == sorted(TEAMS)
    config = yaml.safe_load((ROOT / EXAMPLE / "apps" / "agents" / "chartshare.yaml").read_text())
    assert set(config["chart"]) == {"repository", "name", "version"}
    assert not list((ROOT / EXAMPLE).rglob("*.tgz")), "the example commits no chart archive"


def test_only_the_platform_team_emits_the_crd_and_the_priority_class(renders: dict[str, list[dict[str, Any]]]) -> None:
    for team in TEAMS:
        crds = _named(renders[team], "CustomResourceDefinition")
        classes = _named(renders[team], "PriorityClass")
        owner = team == "platform"
        assert sorted(crds) == (["logpipelines.telemetry.example.io"] if owner else [])
        assert sorted(classes) == (["log-agent-node-critical"] if owner else [])
    crd = _named(renders["platform"], "CustomResourceDefinition")["logpipelines.telemetry.example.io"]
    priority = _named(renders["platform"], "PriorityClass")["log-agent-node-critical"]
    for protected in (crd, priority):
        assert "Prune=false" in protected["metadata"]["annotations"]["argocd.argoproj.io/sync-options"]


def test_every_team_binds_its_own_agent_to_its_own_renamed_cluster_role(
    renders: dict[str, list[dict[str, Any]]],
) -> None:
    for team in TEAMS:
        objects = renders[team]
        assert sorted(_named(objects, "ClusterRole")) == [f"{team}-log-agent"]
        binding = _named(objects, "ClusterRoleBinding")[f"{team}-log-agent"]
        assert binding["roleRef"]["name"] == f"{team}-log-agent"
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": team, "namespace": f"logs-{team}"}]
        daemonset = _named(objects, "DaemonSet")[team]
        assert daemonset["spec"]["template"]["spec"]["priorityClassName"] == "log-agent-node-critical"


def test_each_team_s_values_come_from_git(renders: dict[str, list[dict[str, Any]]]) -> None:
    for team in TEAMS:
        agent = yaml.safe_load(_named(renders[team], "ConfigMap")[f"{team}-config"]["data"]["agent.yaml"])
        assert agent["output"] == {"endpoint": "https://logs.example.com/ingest", "tenant": team}


def test_the_parameters_tab_shows_the_remote_chart_s_values_and_decisions(
    world: tuple[CmpServer, Path, ChartRepository], renders: dict[str, list[dict[str, Any]]]
) -> None:
    server, repo, _ = world
    announced = {entry["name"]: entry for entry in reversed(server.parameters(APPLICATIONS["payments"], repo))}
    assert announced["set"]["map"]["output.endpoint"] == "https://logs.example.com/ingest"
    assert "Cannot show" not in announced["config"]["tooltip"], announced["config"]["tooltip"]
    assert "renamed" in announced["config"]["tooltip"]


def test_no_two_teams_emit_the_same_object(renders: dict[str, list[dict[str, Any]]]) -> None:
    seen: dict[tuple[str, str, str], str] = {}
    for team in TEAMS:
        for obj in renders[team]:
            key = (obj["kind"], obj["metadata"].get("namespace", f"logs-{team}"), obj["metadata"]["name"])
            assert key not in seen, f"{key} emitted by {seen.get(key)} and {team}"
            seen[key] = team


@pytest.mark.parametrize(
    ("raw", "conflicts"), [(False, []), (True, ["ClusterRole", "ClusterRoleBinding", "PriorityClass"])]
)
def test_check_finds_no_conflict_but_the_raw_chart_s_three(
    world: tuple[CmpServer, Path, ChartRepository],
    renders: dict[str, list[dict[str, Any]]],
    raw: bool,
    conflicts: list[str],
) -> None:
    """Offline, from the cache the sidecar's init filled (`renders`)."""
    server, repo, _ = world
    env = {
        "CHARTSHARE_CACHE": server.sidecar_env["CHARTSHARE_CACHE"],
        "CHARTSHARE_HELM": str(Path(server.sidecar_env["PATH"].split(":")[0]) / "helm"),
    }
    args = ["check", f"{EXAMPLE}/argocd", "--format", "json", "--offline", *(["--raw"] if raw else [])]
    result = run_cli(args, env=env, cwd=repo)
    assert result.exit_code == (1 if conflicts else 0), result.stderr
    report = json.loads(result.stdout)
    assert sorted(row["name"] for row in report["applications"]) == sorted(TEAMS)
    assert sorted(conflict["kind"] for conflict in report["conflicts"]) == conflicts
    assert all(conflict["apps"] == sorted(TEAMS) for conflict in report["conflicts"])
    assert raw or report["warnings"] == []


def test_the_next_request_renders_from_the_cache_with_the_repository_gone(
    world: tuple[CmpServer, Path, ChartRepository], renders: dict[str, list[dict[str, Any]]]
) -> None:
    server, repo, web = world
    web.stop()
    assert server.manifests(APPLICATIONS["search"], repo) == renders["search"]
