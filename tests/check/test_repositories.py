"""Which checkout an Application's repoURL is read from, through the real CLI: a multi-repo fleet where
every repository has a `chart/` folder, so reading the wrong one is a wrong render (or a false conflict)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cmp.check.fleet.repos import normalize
from conftest import Result, run_cli

APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: "{url}", path: chart, targetRevision: main}}
  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}
"""
CHART = "apiVersion: v2\nname: {repo}\nversion: 1.0.0\n"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {repo}-{{{{ .Release.Name }}}}\n"
# one repository, in each of the forms Argo CD users write it
PLATFORM_FORMS = {
    "https": "https://github.com/acme/platform",
    "https-git": "https://user@GitHub.com/Acme/Platform.git/",
    "ssh": "ssh://git@github.com:22/acme/platform.git",
    "scp": "git@github.com:acme/platform.git",
}
SERVICE = "https://github.com/acme/service.git"


def _repository(root: Path, repo: str, remote: str | None, apps: dict[str, str] | None = None) -> Path:
    (root / "chart" / "templates").mkdir(parents=True)
    (root / "chart" / "Chart.yaml").write_text(CHART.format(repo=repo))
    (root / "chart" / "templates" / "cm.yaml").write_text(CONFIGMAP.format(repo=repo))
    if repo == "service":  # two objects: a render of the service's own chart is told from the platform's
        (root / "chart" / "templates" / "sa.yaml").write_text(
            "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: x}\n"
        )
    if apps:
        (root / "argocd").mkdir()
        (root / "argocd" / "apps.yaml").write_text(
            "---\n".join(APP.format(name=name, url=url) for name, url in apps.items())
        )
    if remote is not None:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "remote", "add", "origin", remote], check=True)
    return root


def _fleet(tmp_path: Path, remote: str | None) -> tuple[Path, Path]:
    apps = {**PLATFORM_FORMS, "service": SERVICE}
    platform = _repository(tmp_path / "platform", "platform", remote, apps)
    service = _repository(tmp_path / "service", "service", "git@github.com:acme/service.git")
    return platform, service


def _check(root: Path, helm: str, *args: str) -> Result:
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(root.parent / "cache")}
    return run_cli(["check", str(root / "argocd"), "--repo-root", str(root), "--format", "json", *args], env=env)


def _names(result: Result) -> dict[str, int]:
    return {app["name"]: app["resources"] for app in json.loads(result.stdout)["applications"]}


def test_every_git_url_form_of_a_remote_names_the_same_checkout() -> None:
    assert len({normalize(url) for url in PLATFORM_FORMS.values()}) == 1
    assert normalize("ssh://git@gitlab.example.com:2222/group/sub/repo.git") == "gitlab.example.com/group/sub/repo"
    assert normalize("https://gitlab.example.com/group/other") != normalize("https://gitlab.example.com/group/sub")


def test_a_repo_url_of_another_repository_is_skipped_naming_the_repo_mapping(tmp_path: Path, helm: str) -> None:
    platform, _ = _fleet(tmp_path, "https://github.com/acme/platform.git")
    result = _check(platform, helm)
    assert result.exit_code == 0, result.stderr
    assert _names(result) == dict.fromkeys(PLATFORM_FORMS, 1)  # every form read from the checkout
    (skip,) = json.loads(result.stdout)["skipped"]
    assert skip["app"] == "service"
    assert skip["reason"].startswith(f"source: repoURL {SERVICE} is not a remote of --repo-root {platform}")
    assert f"pass --repo {SERVICE}=DIR to read it" in skip["reason"]
    assert result.stderr == ""


def test_a_mapped_repository_is_read_from_its_own_checkout_in_any_url_form(tmp_path: Path, helm: str) -> None:
    platform, service = _fleet(tmp_path, "git@github.com:acme/platform.git")
    result = _check(platform, helm, "--repo", f"git@github.com:Acme/Service={service}")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["skipped"] == []
    assert _names(result) == {**dict.fromkeys(PLATFORM_FORMS, 1), "service": 2}  # the service's own chart/
    assert result.stderr == ""


@pytest.mark.parametrize("where", ["no-git", "no-remote"])
def test_a_scratch_repository_stands_for_every_url_and_says_so_once(tmp_path: Path, helm: str, where: str) -> None:
    platform, _ = _fleet(tmp_path, None)
    if where == "no-remote":
        subprocess.run(["git", "init", "-q", str(platform)], check=True)
    result = _check(platform, helm)
    assert result.exit_code == 0, result.stderr
    assert _names(result) == {**dict.fromkeys(PLATFORM_FORMS, 1), "service": 1}  # the checkout stands in
    (note,) = result.stderr.splitlines()
    assert note == (
        f"chartshare: note: --repo-root {platform} is no checkout with a Git remote, so it stands for every "
        "repoURL no --repo maps; at the top of a checkout with remotes, a repoURL is read only from the "
        "checkout it names"
    )


def test_a_folder_inside_a_checkout_is_no_checkout_of_its_remotes(tmp_path: Path, helm: str) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    subprocess.run(["git", "-C", str(outer), "remote", "add", "origin", "https://github.com/acme/outer"], check=True)
    platform = _repository(outer / "platform", "platform", None, {"service": SERVICE})
    result = _check(platform, helm)
    assert result.exit_code == 0, result.stderr
    assert _names(result) == {"service": 1} and "is no checkout with a Git remote" in result.stderr
