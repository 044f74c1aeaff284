"""`check` on a fleet mixing Git charts and published ones: Argo CD's Helm-repository and OCI sources and a
chartshare.yaml naming a remote chart, fetched from real servers on 127.0.0.1 into check's chart cache
(never the checkout), then `--offline` from the cache; a chart missing offline is skipped with its fix."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from servers import PASSWORD, USER, chart_repository, free_port, library_chart, oci_registry, package, push

from conftest import Result, run_cli

PLATFORM_ROLE = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: platform-reader\n"


def _platform_chart(target: Path) -> Path:
    """A published chart whose one cluster-scoped object every installation claims."""
    chart = library_chart(target, name="platform", version="1.0.0")
    (chart / "templates" / "clusterrole.yaml").write_text(PLATFORM_ROLE + "rules: []\n")
    return chart


def _application(name: str, namespace: str, source: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"source": source, "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace}},
    }


@pytest.fixture(scope="module")
def fleet(helm: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A checkout with four Applications, the servers their charts come from, and check's environment."""
    base = tmp_path_factory.mktemp("fleet")
    platform, greeting = _platform_chart(base / "src"), library_chart(base / "src")
    with chart_repository(helm, base / "web", [platform]) as web, oci_registry(base / "registry") as registry:
        push(helm, registry, package(helm, greeting, base), base / "pusher")
        repo = base / "repo"
        (repo / "apps" / "shared").mkdir(parents=True)
        config = {
            "apiVersion": "chartshare/v1",
            "kind": "ChartShare",
            "chart": {"repository": web.url, "name": "platform", "version": "1.0.0"},
            "rules": [{"match": {"kind": "ClusterRole", "name": "platform-reader"}, "owner": "helm-repo"}],
        }
        (repo / "apps" / "shared" / "chartshare.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        library_chart(repo / "charts", name="local")
        git = "https://git.example.com/fleet.git"
        apps = [
            _application("helm-repo", "a", {"repoURL": web.url, "chart": "platform", "targetRevision": "1.0.0"}),
            _application("shared", "b", {"repoURL": git, "path": "apps/shared", "targetRevision": "main"}),
            _application("git-chart", "c", {"repoURL": git, "path": "charts/local-0.1.0", "targetRevision": "main"}),
            _application(
                "oci", "d", {"repoURL": registry.host + "/charts", "chart": "greeting", "targetRevision": "0.1.0"}
            ),
            # as Argo CD writes public.ecr.aws's: no scheme, the registry path in the chart name
            _application(
                "oci-path", "e", {"repoURL": registry.host, "chart": "charts/greeting", "targetRevision": "0.1.0"}
            ),
        ]
        (repo / "argocd").mkdir()
        (repo / "argocd" / "apps.yaml").write_text(yaml.safe_dump_all(apps, sort_keys=False))
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
        who = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
        subprocess.run(["git", "-C", str(repo), *who, "commit", "-qm", "fleet"], check=True)
        secrets = base / "repositories.yaml"
        secrets.write_text(
            yaml.safe_dump(
                [{"url": f"oci://{registry.host}", "username": USER, "password": PASSWORD, "plainHttp": True}]
            )
        )
        env = {
            "CHARTSHARE_HELM": helm,
            "CHARTSHARE_CACHE": str(base / "cache"),
            "CHARTSHARE_REPOSITORIES": str(secrets),
        }
        first = _check(repo, env)
    # the servers are gone from here on
    return repo, {**env, "first": first.stdout, "first_exit": str(first.exit_code), "first_err": first.stderr}


def _check(repo: Path, env: dict[str, str], *args: str) -> Result:
    return run_cli(["check", "argocd", "--format", "json", *args], env=env, cwd=repo)


def test_check_renders_published_charts_beside_git_ones(fleet: tuple[Path, dict[str, str]]) -> None:
    repo, env = fleet
    assert env["first_exit"] == "0", env["first_err"]
    report = json.loads(env["first"])
    rendered = {row["name"]: (row["renderer"], row["resources"]) for row in report["applications"]}
    assert rendered == {
        "helm-repo": ("helm", 2),
        "shared": ("chartshare", 1),
        "git-chart": ("helm", 1),
        "oci": ("helm", 1),
        "oci-path": ("helm", 1),
    }
    assert report["skipped"] == [] and report["conflicts"] == []
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--ignored"], capture_output=True, text=True
    )
    assert status.stdout == "", "check wrote nothing into the checkout"
    assert PASSWORD not in env["first_err"]


def test_raw_shows_the_object_the_rules_give_one_app(fleet: tuple[Path, dict[str, str]]) -> None:
    repo, env = fleet
    result = _check(repo, env, "--raw")
    assert result.exit_code == 1, result.stderr
    (conflict,) = json.loads(result.stdout)["conflicts"]
    assert (conflict["kind"], conflict["name"], conflict["apps"]) == (
        "ClusterRole",
        "platform-reader",
        ["helm-repo", "shared"],
    )


def test_offline_renders_the_same_from_a_warm_cache(fleet: tuple[Path, dict[str, str]]) -> None:
    repo, env = fleet
    result = _check(repo, env, "--offline")
    assert (result.exit_code, result.stdout) == (0, env["first"]), result.stderr


@pytest.mark.parametrize("projects", [None, ["team-b"], ["default"]])
def test_a_chart_fetched_with_credentials_is_served_only_to_a_project_that_may_use_them(
    fleet: tuple[Path, dict[str, str]], tmp_path: Path, projects: list[str] | None
) -> None:
    """The OCI chart was fetched with the registry's entry; the Applications' spec.project is "default"."""
    repo, env = fleet
    checked = {**env}
    if projects is None:
        del checked["CHARTSHARE_REPOSITORIES"]
    else:
        entries = yaml.safe_load(Path(env["CHARTSHARE_REPOSITORIES"]).read_text())
        scoped = tmp_path / "repositories.yaml"
        scoped.write_text(yaml.safe_dump([{**entry, "projects": projects} for entry in entries]))
        checked["CHARTSHARE_REPOSITORIES"] = str(scoped)
    result = _check(repo, checked, "--offline")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    if projects == ["default"]:
        assert result.stdout == env["first"], "the same entry, and the project may use it"
        return
    assert [row["name"] for row in report["applications"]] == ["git-chart", "helm-repo", "shared"]
    assert [skipped["app"] for skipped in report["skipped"]] == ["oci", "oci-path"]  # one registry, two forms
    assert all("is not in the chart cache (--offline)" in skipped["reason"] for skipped in report["skipped"])


def test_check_scopes_each_application_by_its_spec_project(fleet: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """The registry's entry serves team-* only: the OCI apps are served their chart (fetched with it) once
    their spec.project says they may use it; with project default they are not (the test above)."""
    repo, env = fleet
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy, symlinks=True)
    apps = list(yaml.safe_load_all((copy / "argocd" / "apps.yaml").read_text()))
    for app in apps:
        if app["metadata"]["name"].startswith("oci"):
            app["spec"]["project"] = "team-b"
    (copy / "argocd" / "apps.yaml").write_text(yaml.safe_dump_all(apps, sort_keys=False))
    entries = yaml.safe_load(Path(env["CHARTSHARE_REPOSITORIES"]).read_text())
    scoped = tmp_path / "repositories.yaml"
    scoped.write_text(yaml.safe_dump([{**entry, "projects": ["team-*"]} for entry in entries]))
    result = _check(copy, {**env, "CHARTSHARE_REPOSITORIES": str(scoped)}, "--offline")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["skipped"] == [] and len(report["applications"]) == len(apps)


def test_offline_with_a_cold_cache_skips_each_published_chart_with_its_fix(
    fleet: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = fleet
    result = _check(repo, {**env, "CHARTSHARE_CACHE": str(tmp_path / "empty")}, "--offline")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert [row["name"] for row in report["applications"]] == ["git-chart"]
    reasons = {skip["app"]: skip["reason"] for skip in report["skipped"]}
    assert reasons["helm-repo"].endswith(
        "is not in the chart cache (--offline); fill it by running check without --offline"
    )
    assert reasons["shared"].endswith("fill it with `chartshare init apps/shared`, or run check without --offline")
    assert reasons["oci"].startswith("source: chart oci://127.0.0.1:")
    assert reasons["oci-path"] == reasons["oci"]  # `chart: charts/greeting` of a registry host is the same chart


def test_a_published_chart_that_cannot_be_fetched_is_the_render_failure_of_its_app(
    fleet: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = fleet
    closed = f"http://127.0.0.1:{free_port()}/charts"
    (tmp_path / "apps.yaml").write_text(
        yaml.safe_dump(_application("gone", "e", {"repoURL": closed, "chart": "platform", "targetRevision": "1.0.0"}))
    )
    result = run_cli(
        ["check", str(tmp_path / "apps.yaml"), "--repo-root", str(repo)],
        env={**env, "CHARTSHARE_CACHE": str(tmp_path / "c")},
    )
    assert (result.exit_code, result.stderr) == (1, "")
    assert (
        f"  gone: render failed: spec.source: platform 1.0.0 from {closed}: GET {closed}/index.yaml: connection "
        f"refused by {closed.split('/')[2]}\n" in result.stdout
    )
