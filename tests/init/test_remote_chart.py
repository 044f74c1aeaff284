"""A remote chart end to end: `chartshare init` fetches it from a real repository or registry on 127.0.0.1,
`chartshare generate` renders it from the chart store without the network, on both helm majors."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import yaml
from archives import member, tgz
from servers import (
    PASSWORD,
    USER,
    chart_repository,
    library_chart,
    oci_registry,
    package,
    push,
    self_signed,
)

from cmp.model import RemoteChart
from cmp.remote.fetch import digest_of
from cmp.remote.store import chart_store
from conftest import Result, run_cli

DIGEST = r"sha256:[0-9a-f]{64}"


def _repo(root: Path, chart: dict[str, str], values: str = "message: from-git\n") -> Path:
    """A Git repository whose app `apps/a` names the remote chart, with a values file beside it."""
    app = root / "apps" / "a"
    app.mkdir(parents=True)
    config = {"apiVersion": "chartshare/v1", "kind": "ChartShare", "chart": chart}
    (app / "chartshare.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (app / "values.yaml").write_text(values)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _env(tmp: Path, helm: str, **extra: str) -> dict[str, str]:
    (tmp / "scratch").mkdir(exist_ok=True)
    return {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp / "cache"), "TMPDIR": str(tmp / "scratch"), **extra}


def _init(repo: Path, env: dict[str, str]) -> Result:
    return run_cli(["init", str(repo / "apps" / "a"), "--repo-root", str(repo)], env=env)


def _generate(repo: Path, env: dict[str, str]) -> Result:
    args = ["generate", str(repo / "apps" / "a"), "--repo-root", str(repo), "--app", "a", "-f", "values.yaml"]
    return run_cli(args, env=env)


def _configmap(result: Result) -> dict[str, str]:
    assert result.exit_code == 0, result.stderr
    (configmap,) = [doc for doc in yaml.safe_load_all(result.stdout) if doc and doc["kind"] == "ConfigMap"]
    return dict(configmap["data"])


def _credentials(target: Path, entries: list[dict[str, object]]) -> str:
    target.write_text(yaml.safe_dump(entries))
    return str(target)


def test_init_fetches_a_private_chart_that_generate_renders_without_the_network(helm: str, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with chart_repository(helm, tmp_path / "web", [library_chart(tmp_path / "src")], auth=True, tls=(cert, key)) as web:
        secrets = _credentials(
            tmp_path / "repositories.yaml",
            [{"url": web.url, "username": USER, "password": PASSWORD, "caFile": str(cert)}],
        )
        repo = _repo(tmp_path / "repo", {"repository": web.url, "name": "greeting", "version": "0.1.0"})
        env = _env(tmp_path, helm, CHARTSHARE_REPOSITORIES=secrets)
        first = _init(repo, env)
    assert first.exit_code == 0 and first.stdout == "", first.stderr
    assert first.stderr.startswith(f"chartshare: init: greeting 0.1.0 from {web.url}: downloaded, sha256:")
    assert "(pin it as chart.digest)" in first.stderr and PASSWORD not in first.stderr
    assert os.listdir(tmp_path / "scratch") == [], "the private helm home and every scratch folder are gone"
    assert _configmap(_generate(repo, env)) == {"message": "from-git", "version": "0.1.0"}, "the server is gone"
    again = _init(repo, env)
    assert again.stderr == f"chartshare: init: greeting 0.1.0 from {web.url}: from the cache\n", "the server is gone"


def test_a_project_is_never_served_a_chart_another_project_s_credentials_fetched(helm: str, tmp_path: Path) -> None:
    """The repositories file is sidecar-wide: its entry for team-b's private repository names team-b, and
    team-a, writing the same chart, gets neither the credentials nor team-b's copy "from the cache"."""
    with chart_repository(helm, tmp_path / "web", [library_chart(tmp_path / "src")], auth=True) as web:
        secrets = _credentials(
            tmp_path / "repositories.yaml",
            [{"url": web.url, "username": USER, "password": PASSWORD, "projects": ["team-b", "platform-*"]}],
        )
        repo = _repo(tmp_path / "repo", {"repository": web.url, "name": "greeting", "version": "0.1.0"})
        env = _env(tmp_path, helm, CHARTSHARE_REPOSITORIES=secrets)
        team_a = {**env, "ARGOCD_APP_PROJECT_NAME": "team-a"}
        team_b = {**env, "ARGOCD_APP_PROJECT_NAME": "team-b"}
        refused = _init(repo, team_a)
        fetched = _init(repo, team_b)
        web.stop()
        down = _init(repo, team_a)
        defaulted = _init(repo, env)  # no ARGOCD_APP_PROJECT_NAME: project "default"
        kept = _init(repo, team_b)
    assert fetched.exit_code == 0 and "downloaded" in fetched.stderr, fetched.stderr
    assert kept.stderr == f"chartshare: init: greeting 0.1.0 from {web.url}: from the cache\n"
    withheld = f"entry [0] ({web.url}) in {secrets} serves projects team-b, platform-*, not team-a"
    for result, project in ((refused, "team-a"), (down, "team-a"), (defaulted, "default")):
        assert (result.exit_code, result.stdout) == (1, ""), result.stderr
        (line,) = result.stderr.splitlines()
        assert "from the cache" not in line and PASSWORD not in line
        assert withheld.replace("team-a", project) in line, line
        assert f"add {project} to its projects: if this project may use it" in line
    assert "HTTP 401" in refused.stderr and "connection refused" in down.stderr
    assert _configmap(_generate(repo, team_b))["message"] == "from-git"
    denied = _generate(repo, team_a)
    assert (denied.exit_code, denied.stdout) == (1, "")
    assert "is not in the chart cache" in denied.stderr and "project team-a is served only" in denied.stderr


def test_the_cached_chart_is_read_only(helm: str, tmp_path: Path) -> None:
    with chart_repository(helm, tmp_path / "web", [library_chart(tmp_path / "src")]) as web:
        repo = _repo(tmp_path / "repo", {"repository": web.url, "name": "greeting", "version": "0.1.0"})
        assert _init(repo, _env(tmp_path, helm)).exit_code == 0
    folder = chart_store(tmp_path / "cache").lookup(RemoteChart(web.url, "greeting", "0.1.0"))
    assert folder is not None
    assert all(stat.S_IMODE(path.stat().st_mode) & 0o222 == 0 for path in [folder, *folder.rglob("*")])


def test_a_remote_chart_s_render_is_kept_in_the_render_cache_like_a_git_chart_s(helm: str, tmp_path: Path) -> None:
    with chart_repository(helm, tmp_path / "web", [library_chart(tmp_path / "src")]) as web:
        repo = _repo(tmp_path / "repo", {"repository": web.url, "name": "greeting", "version": "0.1.0"})
        env = _env(tmp_path, helm, CHARTSHARE_RENDER_CACHE="on")
        assert _init(repo, env).exit_code == 0
    cold, warm = _generate(repo, env), _generate(repo, env)
    assert (warm.exit_code, warm.stdout) == (0, cold.stdout), warm.stderr
    assert "(cached)" in warm.stderr.splitlines()[0] and "(cached)" not in cold.stderr


def test_generate_without_init_says_so_and_prints_nothing(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path / "repo", {"repository": "https://charts.example.com", "name": "greeting", "version": "0.1.0"}
    )
    result = _generate(repo, _env(tmp_path, "/nonexistent/helm"))
    assert (result.exit_code, result.stdout) == (1, "")
    (line,) = result.stderr.splitlines()
    assert line.startswith("chartshare: error: apps/a/chartshare.yaml: chart: greeting 0.1.0 from https://charts.exa")
    assert "is not in the chart cache" in line and "`chartshare init` did not run or failed" in line


def test_a_pinned_digest_is_checked_and_keys_its_own_entry(helm: str, tmp_path: Path) -> None:
    with chart_repository(helm, tmp_path / "web", [library_chart(tmp_path / "src")]) as web:
        served = digest_of(web.root / "charts" / "greeting-0.1.0.tgz")
        wrong = "sha256:" + "0" * 64
        chart = {"repository": web.url, "name": "greeting", "version": "0.1.0"}
        bad = _init(_repo(tmp_path / "bad", {**chart, "digest": wrong}), _env(tmp_path, helm))
        good_repo = _repo(tmp_path / "good", {**chart, "digest": served})
        good = _init(good_repo, _env(tmp_path, helm))
    assert bad.exit_code == 1 and bad.stdout == ""
    (line,) = bad.stderr.splitlines()
    assert f"the downloaded .tgz has digest {served}, but chart.digest pins {wrong}" in line
    assert chart_store(tmp_path / "cache").lookup(RemoteChart(web.url, "greeting", "0.1.0", wrong)) is None
    assert good.exit_code == 0, good.stderr
    assert good.stderr == f"chartshare: init: greeting 0.1.0 from {web.url}: downloaded, {served}\n"
    assert _configmap(_generate(good_repo, _env(tmp_path, helm)))["version"] == "0.1.0"


def test_an_oci_chart_is_pulled_with_a_private_login_and_rendered(helm: str, tmp_path: Path) -> None:
    archive = package(helm, library_chart(tmp_path / "src"), tmp_path)
    with oci_registry(tmp_path / "registry") as registry:
        push(helm, registry, archive, tmp_path / "pusher")
        secrets = _credentials(
            tmp_path / "repositories.yaml",
            [{"url": f"oci://{registry.host}", "username": USER, "password": PASSWORD, "plainHttp": True}],
        )
        repository = f"oci://{registry.host}/charts"
        repo = _repo(tmp_path / "repo", {"repository": repository, "name": "greeting", "version": "0.1.0"})
        env = _env(tmp_path, helm, CHARTSHARE_REPOSITORIES=secrets)
        result = _init(repo, env)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith(f"chartshare: init: {repository}/greeting:0.1.0: downloaded, sha256:")
    assert PASSWORD not in result.stderr
    assert os.listdir(tmp_path / "scratch") == [], "the private registry config is deleted"
    assert _configmap(_generate(repo, env)) == {"message": "from-git", "version": "0.1.0"}


def test_a_remote_chart_missing_its_dependency_gets_it_before_it_is_published(helm: str, tmp_path: Path) -> None:
    shop = tmp_path / "src" / "shop"
    (shop / "templates").mkdir(parents=True)
    with chart_repository(helm, tmp_path / "web", [library_chart(tmp_path / "src")]) as web:
        dependency = {"name": "greeting", "version": "0.1.0", "repository": web.url}
        meta = {"apiVersion": "v2", "name": "shop", "version": "2.0.0", "dependencies": [dependency]}
        (shop / "Chart.yaml").write_text(yaml.safe_dump(meta))
        (shop / "templates" / "service.yaml").write_text(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: shop\nspec:\n  ports: [{port: 80}]\n"
        )
        files = [member(f"shop/{path.relative_to(shop)}", path.read_bytes()) for path in shop.rglob("*.yaml")]
        web.add("shop", "2.0.0", tgz(files))  # published without its dependency (helm package would refuse)
        repo = _repo(tmp_path / "repo", {"repository": web.url, "name": "shop", "version": "2.0.0"}, "")
        result = _init(repo, _env(tmp_path, helm))
    assert result.exit_code == 0, result.stderr
    assert f"greeting 0.1.0 from {web.url}: downloaded" in result.stderr
    kinds = sorted(doc["kind"] for doc in yaml.safe_load_all(_generate(repo, _env(tmp_path, helm)).stdout) if doc)
    assert kinds == ["ConfigMap", "Service"]
