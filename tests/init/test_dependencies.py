"""`chartshare init` against real servers on 127.0.0.1: HTTP(S) repositories, an OCI registry, the cache."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from emulator import Application, CmpServer
from servers import PASSWORD, USER, chart_repository, free_port, library_chart, oci_registry, package, push, self_signed
from sidecar_support import sidecar_bin, sidecar_env

from cmp.model import RemoteChart
from cmp.remote.dependencies import Dependency, present, read
from cmp.remote.store import Store
from conftest import ROOT, Result, run_cli


def _app_chart(target: Path, repository: str, version: str = "0.1.0", name: str = "greeting") -> Path:
    """An app folder holding a chart with one dependency, as Argo CD sends it (no charts/ yet)."""
    (target / "templates").mkdir(parents=True)
    dependency = {"name": name, "version": version, "repository": repository}
    meta = {"apiVersion": "v2", "name": "shop", "version": "1.0.0", "dependencies": [dependency]}
    (target / "Chart.yaml").write_text(yaml.safe_dump(meta))
    (target / "templates" / "service.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: shop\nspec:\n  ports: [{port: 80}]\n"
    )
    return target


def _init(app: Path, helm: str, home: Path, **env: str) -> Result:
    return run_cli(
        ["init"],
        env={"CHARTSHARE_HELM": helm, "HOME": str(home), "CHARTSHARE_CACHE": str(home / "cache"), **env},
        cwd=app,
    )


def _rendered_dependency(app: Path, helm: str) -> str:
    result = run_cli(["generate", "--app", "shop", "--helm", helm], cwd=app)
    assert result.exit_code == 0, result.stderr
    (configmap,) = [doc for doc in yaml.safe_load_all(result.stdout) if doc and doc["kind"] == "ConfigMap"]
    return str(configmap["data"]["version"])


def _credentials(target: Path, entries: list[dict[str, object]]) -> str:
    target.write_text(yaml.safe_dump(entries))
    return str(target)


def _fresh(app: Path, target: Path) -> Path:
    """A new copy of the app without charts/, as the next Argo CD request would bring."""
    shutil.copytree(app, target, ignore=shutil.ignore_patterns("charts"))
    return target


def test_password_protected_https_repository_builds_then_builds_offline_from_the_cache(
    helm: str, tmp_path: Path
) -> None:
    cert, key = self_signed(tmp_path)
    with chart_repository(
        helm, tmp_path / "web", [library_chart(tmp_path / "src")], auth=True, tls=(cert, key)
    ) as repo:
        secrets = _credentials(
            tmp_path / "repositories.yaml",
            [
                {"url": repo.url.rsplit("/", 1)[0], "username": "someone-else", "password": "other"},
                {"url": repo.url, "username": USER, "password": PASSWORD, "caFile": str(cert)},
            ],
        )
        app = _app_chart(tmp_path / "app", repo.url)
        first = _init(app, helm, tmp_path, CHARTSHARE_REPOSITORIES=secrets)
        assert first.exit_code == 0, first.stderr
        assert first.stdout == ""
        assert f"greeting 0.1.0 from {repo.url}: downloaded, cached" in first.stderr
        assert PASSWORD not in first.stderr
        assert _rendered_dependency(app, helm) == "0.1.0"
    offline = _fresh(app, tmp_path / "again")
    second = _init(offline, helm, tmp_path, CHARTSHARE_REPOSITORIES=secrets)
    assert second.exit_code == 0, second.stderr
    assert f"greeting 0.1.0 from {repo.url}: from the cache" in second.stderr
    assert _rendered_dependency(offline, helm) == "0.1.0"


def test_a_dependency_fetched_with_one_project_s_credentials_is_never_served_to_another(
    helm: str, tmp_path: Path
) -> None:
    """The dependency archives of the chart store are keyed by the entry that fetched them, like charts."""
    with chart_repository(helm, tmp_path / "web", [library_chart(tmp_path / "src")], auth=True) as repo:
        secrets = _credentials(
            tmp_path / "repositories.yaml",
            [{"url": repo.url, "username": USER, "password": PASSWORD, "projects": ["team-b"]}],
        )
        app = _app_chart(tmp_path / "app", repo.url)
        team_a = {"CHARTSHARE_REPOSITORIES": secrets, "ARGOCD_APP_PROJECT_NAME": "team-a"}
        team_b = {**team_a, "ARGOCD_APP_PROJECT_NAME": "team-b"}
        refused = _init(_fresh(app, tmp_path / "a1"), helm, tmp_path, **team_a)
        fetched = _init(app, helm, tmp_path, **team_b)
    down = _init(_fresh(app, tmp_path / "a2"), helm, tmp_path, **team_a)
    kept = _init(_fresh(app, tmp_path / "b2"), helm, tmp_path, **team_b)
    assert fetched.exit_code == 0 and "downloaded, cached" in fetched.stderr, fetched.stderr
    assert kept.exit_code == 0 and f"greeting 0.1.0 from {repo.url}: from the cache" in kept.stderr, kept.stderr
    withheld = f"entry [0] ({repo.url}) in {secrets} serves projects team-b, not team-a"
    for result in (refused, down):
        assert (result.exit_code, result.stdout) == (1, ""), result.stderr
        (line,) = result.stderr.splitlines()
        assert "from the cache" not in line and withheld in line and PASSWORD not in line, line
    assert not (tmp_path / "a2" / "charts").exists() or not list((tmp_path / "a2" / "charts").iterdir())


def test_plain_http_repository_needs_no_credentials_and_a_lock_pins_the_cached_version(
    helm: str, tmp_path: Path
) -> None:
    charts = [library_chart(tmp_path / "src", version=version) for version in ("0.1.0", "0.2.0")]
    with chart_repository(helm, tmp_path / "web", charts) as repo:
        app = _app_chart(tmp_path / "app", repo.url, version="~0.2.0")
        result = _init(app, helm, tmp_path)
        assert result.exit_code == 0, result.stderr
        assert (app / "Chart.lock").is_file(), "helm dependency build resolved the range into Chart.lock"
    result = _init(_fresh(app, tmp_path / "again"), helm, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert _rendered_dependency(tmp_path / "again", helm) == "0.2.0"


def test_wrong_password_names_the_dependency_and_repository_and_never_the_password(helm: str, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with chart_repository(
        helm, tmp_path / "web", [library_chart(tmp_path / "src")], auth=True, tls=(cert, key)
    ) as repo:
        wrong = "wr0ng-Pa55word"
        secrets = _credentials(
            tmp_path / "repositories.yaml",
            [{"url": repo.url, "username": USER, "password": wrong, "caFile": str(cert)}],
        )
        result = _init(_app_chart(tmp_path / "app", repo.url), helm, tmp_path, CHARTSHARE_REPOSITORIES=secrets)
    assert result.exit_code == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"chartshare: error: repository {repo.url} (dependency greeting)")
    assert "401" in line
    assert f"check entry [0] ({repo.url}) in {secrets}" in line
    assert wrong not in line


def test_missing_credentials_say_where_to_add_them(helm: str, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with chart_repository(
        helm, tmp_path / "web", [library_chart(tmp_path / "src")], auth=True, tls=(cert, key)
    ) as repo:
        secrets = _credentials(tmp_path / "repositories.yaml", [{"url": repo.url, "caFile": str(cert)}])
        result = _init(_app_chart(tmp_path / "app", repo.url), helm, tmp_path, CHARTSHARE_REPOSITORIES=secrets)
    assert result.exit_code == 1
    assert "dependency greeting" in result.stderr
    assert "401" in result.stderr


def test_oci_registry_with_htpasswd_builds_then_builds_offline_from_the_cache(helm: str, tmp_path: Path) -> None:
    archive = package(helm, library_chart(tmp_path / "src"), tmp_path)
    with oci_registry(tmp_path / "registry") as registry:
        push(helm, registry, archive, tmp_path / "pusher")
        url = f"oci://{registry.host}/charts"
        secrets = _credentials(
            tmp_path / "repositories.yaml",
            [{"url": f"oci://{registry.host}", "username": USER, "password": PASSWORD, "plainHttp": True}],
        )
        app = _app_chart(tmp_path / "app", url)
        first = _init(app, helm, tmp_path, CHARTSHARE_REPOSITORIES=secrets)
        assert first.exit_code == 0, first.stderr
        assert f"greeting 0.1.0 from {url}: downloaded, cached" in first.stderr
        assert PASSWORD not in first.stderr
        assert _rendered_dependency(app, helm) == "0.1.0"
    assert registry.process.poll() is not None, "the registry is stopped"
    offline = _fresh(app, tmp_path / "again")
    second = _init(offline, helm, tmp_path, CHARTSHARE_REPOSITORIES=secrets)
    assert second.exit_code == 0, second.stderr
    assert "from the cache" in second.stderr
    assert _rendered_dependency(offline, helm) == "0.1.0"


def test_oci_registry_refuses_a_build_without_credentials(helm: str, tmp_path: Path) -> None:
    archive = package(helm, library_chart(tmp_path / "src"), tmp_path)
    with oci_registry(tmp_path / "registry") as registry:
        push(helm, registry, archive, tmp_path / "pusher")
        url = f"oci://{registry.host}/charts"
        secrets = _credentials(tmp_path / "repositories.yaml", [{"url": url, "plainHttp": True}])
        result = _init(_app_chart(tmp_path / "app", url), helm, tmp_path, CHARTSHARE_REPOSITORIES=secrets)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"chartshare: error: helm dependency build for greeting 0.1.0 from {url} failed")


def test_file_dependencies_are_packaged_without_the_network(helm: str, tmp_path: Path) -> None:
    library_chart(tmp_path / "repo" / "libs")
    app = _app_chart(tmp_path / "repo" / "app", "file://../libs/greeting-0.1.0")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    # No download, so the credentials file is never read (it does not even exist here).
    result = _init(app, helm, tmp_path, CHARTSHARE_REPOSITORIES="/nonexistent")
    assert result.exit_code == 0, result.stderr
    assert "greeting 0.1.0 from file://../libs/greeting-0.1.0: packaged" in result.stderr
    assert _rendered_dependency(app, helm) == "0.1.0"


def test_a_file_dependency_outside_the_repository_is_refused(helm: str, tmp_path: Path) -> None:
    library_chart(tmp_path / "outside")
    app = _app_chart(tmp_path / "repo" / "app", "file://../../outside/greeting-0.1.0")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    result = _init(app, helm, tmp_path)
    assert result.exit_code == 1
    assert "resolved to outside repository root" in result.stderr


def test_vendored_dependencies_need_no_helm_at_all(tmp_path: Path) -> None:
    app = _app_chart(tmp_path / "app", "https://charts.invalid/x")
    shutil.copytree(library_chart(tmp_path / "src"), app / "charts" / "greeting")
    result = _init(app, "/nonexistent/helm", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "chartshare: init: present in charts/: greeting\n"


def test_a_chart_without_dependencies_is_a_silent_no_op(tmp_path: Path) -> None:
    result = _init(library_chart(tmp_path), "/nonexistent/helm", tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_a_dependency_named_by_a_helm_home_repository_is_refused(tmp_path: Path) -> None:
    result = _init(_app_chart(tmp_path / "app", "@stable"), "/nonexistent/helm", tmp_path)
    assert result.exit_code == 1
    assert "names a repository of a helm home" in result.stderr


def test_an_unreachable_repository_fails_with_the_repository_named(helm: str, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/charts"
    result = _init(_app_chart(tmp_path / "app", url), helm, tmp_path)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"chartshare: error: repository {url} (dependency greeting)")
    assert "add its URL to the file CHARTSHARE_REPOSITORIES names" in result.stderr


def test_dependencies_read_versions_from_the_lock(tmp_path: Path) -> None:
    app = _app_chart(tmp_path, "https://charts.example.com/x", version="^1.0.0")
    (app / "Chart.lock").write_text(
        yaml.safe_dump(
            {"dependencies": [{"name": "greeting", "repository": "https://charts.example.com/x", "version": "1.2.3"}]}
        )
    )
    (dependency,) = read(app)
    assert dependency == Dependency("greeting", "^1.0.0", "https://charts.example.com/x", "1.2.3")
    assert dependency.exact == "1.2.3"
    assert Dependency("a", "^1.0.0", "https://x").exact == ""
    assert Dependency("a", "1.0.0", "https://x").exact == "1.0.0"


def test_present_follows_helm_dependency_list(tmp_path: Path) -> None:
    dependency = Dependency("greeting", "0.1.0", "https://x")
    assert not present(tmp_path, dependency)
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "greeting-9.9.9.tgz").write_bytes(b"")
    assert present(tmp_path, dependency)


def test_the_cache_is_keyed_by_repository_chart_and_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "cache")
    archive = tmp_path / "greeting-1.0.0.tgz"
    archive.write_bytes(b"archive")
    one = RemoteChart("https://a.example.com/charts/", "greeting", "1.0.0")
    assert store.archive(one) is None
    assert store.keep_archive(archive, one)
    assert store.archive(RemoteChart("https://a.example.com/charts", "greeting", "1.0.0")) is not None
    assert store.archive(RemoteChart("https://b.example.com/charts", "greeting", "1.0.0")) is None
    assert store.archive(RemoteChart("https://a.example.com/charts", "greeting", "1.0.1")) is None
    assert store.archive(RemoteChart("https://a.example.com/charts", "greeting", "^1.0.0")) is None


@pytest.mark.parametrize("name", ["../evil", "a/b"])
def test_the_cache_refuses_names_that_are_not_file_names(tmp_path: Path, name: str) -> None:
    archive = tmp_path / "x.tgz"
    archive.write_bytes(b"x")
    assert not Store(tmp_path / "cache").keep_archive(archive, RemoteChart("https://x", name, "1.0.0"))
    assert not list((tmp_path / "cache").rglob("*.tgz"))


def test_the_sidecar_builds_a_private_dependency_through_plugin_yaml(helm: str, tmp_path: Path) -> None:
    """init then generate, run by the cmp-server emulator: the dependency's ConfigMap reaches Argo CD."""
    cert, key = self_signed(tmp_path)
    with chart_repository(
        helm, tmp_path / "web", [library_chart(tmp_path / "src")], auth=True, tls=(cert, key)
    ) as repo:
        app_dir = _app_chart(tmp_path / "repo" / "apps" / "shop", repo.url)
        (app_dir / "chartshare.yaml").write_text("apiVersion: chartshare/v1\nkind: ChartShare\n")
        secrets = _credentials(
            tmp_path / "repositories.yaml",
            [{"url": repo.url, "username": USER, "password": PASSWORD, "caFile": str(cert)}],
        )
        bin_dir = sidecar_bin(tmp_path / "bin", helm=Path(helm), chartshare=Path(sys.executable).parent / "chartshare")
        env = sidecar_env(bin_dir, tmp_path, CHARTSHARE_REPOSITORIES=secrets, CHARTSHARE_CACHE=str(tmp_path / "cache"))
        server = CmpServer(ROOT / "plugin.yaml", env, workdir=tmp_path / "sidecar-tmp")
        app = Application.from_manifest(
            {
                "metadata": {"name": "shop", "namespace": "argocd"},
                "spec": {
                    "source": {"path": "apps/shop", "plugin": {"name": "chartshare-v1"}},
                    "destination": {"namespace": "shop"},
                },
            }
        )
        kinds = sorted(obj["kind"] for obj in server.manifests(app, tmp_path / "repo"))
    assert kinds == ["ConfigMap", "Service"]
    assert not (app_dir / "charts").exists(), "the build happened in the request's own copy"
    offline = sorted(obj["kind"] for obj in server.manifests(app, tmp_path / "repo"))
    assert offline == ["ConfigMap", "Service"], "the second request builds from the cache, the server being gone"
