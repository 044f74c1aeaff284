"""check over real public GitOps repositories (../shared/realfleets, copied, each a checkout with its own
remote): what it renders, what it skips and why, on both helm majors, offline (no network)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fleet_builders import path_with_kubectl

from conftest import ROOT, Result, run_cli

ROOT_APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: apps, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://github.com/argoproj/argocd-example-apps.git, path: apps, targetRevision: HEAD}
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
"""


def _realfleets() -> Path:
    given = os.environ.get("CHARTSHARE_REALFLEETS")
    for folder in (
        [Path(given)] if given else [place.parent / "shared" / "realfleets" for place in (ROOT, *ROOT.parents)]
    ):
        if (folder / "SOURCES.md").is_file():
            return folder
    if os.environ.get("CI") == "true":
        pytest.fail("the real-fleet suite must run in CI: ../shared/realfleets is absent")
    pytest.skip("../shared/realfleets is absent (set CHARTSHARE_REALFLEETS)")


def _checkout(source: Path, target: Path, remote: str) -> Path:
    shutil.copytree(source, target)
    subprocess.run(["git", "init", "-q", str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "remote", "add", "origin", remote], check=True)
    return target


def _check(paths: list[Path], root: Path, helm: str) -> Result:
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(root.parent / "cache"), "PATH": path_with_kubectl()}
    args = ["check", *map(str, paths), "--repo-root", str(root), "--offline", "--format", "json"]
    return run_cli(args, env=env)


def test_argocd_example_apps_from_its_app_of_apps_root(tmp_path: Path, helm: str) -> None:
    """The repository's `apps/` chart renders 14 Applications of every source type (its README's root)."""
    root = _checkout(
        _realfleets() / "argocd-example-apps", tmp_path / "repo", "git@github.com:argoproj/argocd-example-apps.git"
    )
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "apps.yaml").write_text(ROOT_APP)
    assert _check([root / "apps"], root, helm).stderr.endswith(
        "a Helm chart, not Applications: point check at the Applications that render it\n"
    )
    result = _check([tmp_path / "root"], root, helm)
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr  # the repoURLs are the checkout's remote
    report = json.loads(result.stdout)
    rendered = {app["name"]: app.get("parent") for app in report["applications"]}
    assert len(rendered) == 11 and rendered["apps"] is None
    assert {parent for name, parent in rendered.items() if name != "apps"} == {"apps"}
    reasons = {skip["app"].split(".")[-1]: skip["reason"] for skip in report["skipped"]}
    assert sorted(reasons) == ["helm-dependency", "plugin-kasane", "plugin-kustomized-helm", "plugin-nix"]
    assert (
        "dependency wordpress 9.0.3 from https://charts.helm.sh/stable is not in the chart cache"
        in (reasons["helm-dependency"])
    )
    assert report["conflicts"] == []


def test_the_application_set_examples(tmp_path: Path, helm: str) -> None:
    """argo-cd's ApplicationSet examples: one ApplicationSet Argo CD refuses (a template key no generator
    gives, with missingkey=error) is bad input; without it, the examples' variants of one fleet contest
    their names, and fasttemplate leaves `{{path}}` unrendered where a list generator gives no path."""
    root = _checkout(
        _realfleets() / "argo-cd-appset-examples", tmp_path / "repo", "https://github.com/argoproj/argo-cd.git"
    )
    as_is = _check([root], root, helm)
    assert (as_is.exit_code, as_is.stdout) == (2, "")
    (line,) = as_is.stderr.splitlines()
    assert "matrix/list-and-list.yaml: ApplicationSet list-and-list: " in line and 'no entry for key "path"' in line
    (root / "applicationset" / "examples" / "matrix" / "list-and-list.yaml").unlink()
    result = _check([root], root, helm)
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["conflicts"] and {(c["group"], c["kind"]) for c in report["conflicts"]} == {
        ("argoproj.io", "Application")
    }
    failed = [skip["reason"] for skip in report["skipped"] if skip["reason"].startswith("render failed")]
    assert failed and all(reason.startswith("render failed: app path does not exist: ") for reason in failed)
    unread = [skip["reason"] for skip in report["skipped"] if "infra-team/cluster-deployments" in skip["reason"]]
    assert unread and all("--repo https://github.com/infra-team/cluster-deployments.git=DIR" in r for r in unread)
