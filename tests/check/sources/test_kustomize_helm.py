"""kustomize `helmCharts:` built as Argo CD builds them, through the real CLI: the build options of argocd-cm
(or --kustomize-build-options), the chart (a real one, ../shared/realcharts' metallb) served from a Helm
repository on 127.0.0.1 and kept in check's chart cache, rendered by check's helm with the kustomize Argo CD
ships (5.8.1, built by tools/argocd_tools.py); offline, from the cache or skipped naming the chart."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import fetch_kubectl
import pytest
from fleet_builders import path_with_kubectl
from servers import chart_repository

import argocd_tools
from conftest import REALCHARTS_MISSING, Result, realcharts, run_cli

CHART, VERSION = "metallb", "0.16.1"
APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: lb, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://git.example.com/fleet.git, path: apps/lb}
  destination: {server: https://kubernetes.default.svc, namespace: metallb-system}
"""
ARGOCD_CM = """apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  kustomize.buildOptions: --enable-helm --load-restrictor LoadRestrictionsNone
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The fleet and the URL of the Helm repository that serves the chart (it stops after the module)."""
    folder = realcharts()
    if folder is None:
        pytest.skip(REALCHARTS_MISSING)
    base = tmp_path_factory.mktemp("kustomize-helm")
    return base, str(folder / f"{CHART}-{VERSION}.tgz")


def _fleet(root: Path, url: str) -> Path:
    kustomization = (
        f"helmCharts:\n- {{name: {CHART}, repo: {url}, version: {VERSION}, releaseName: lb, "
        "namespace: metallb-system}\ncommonLabels: {team: network}\n"
    )
    for name, text in {
        "argocd/lb.yaml": APP,
        "apps/lb/kustomization.yaml": kustomization,
        "argocd-cm.yaml": ARGOCD_CM,
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _check(root: Path, helm: str, *args: str, kustomize: bool = True, cache: str = "cache") -> Result:
    if kustomize:  # the kustomize Argo CD ships, first on PATH
        path = os.pathsep.join([str(argocd_tools.ensure("kustomize").parent), path_with_kubectl()])
    else:  # kubectl's built-in kustomize only
        path = os.pathsep.join([str(fetch_kubectl.ensure().parent), os.environ.get("PATH", "")])
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(root.parent / cache), "PATH": path}
    return run_cli(["check", str(root / "argocd"), "--repo-root", str(root), "--format", "json", *args], env=env)


def _rendered(result: Result) -> dict[str, int]:
    return {app["name"]: app["resources"] for app in json.loads(result.stdout)["applications"]}


def _skipped(result: Result) -> dict[str, str]:
    return {skip["app"]: skip["reason"] for skip in json.loads(result.stdout)["skipped"]}


def test_helm_charts_render_with_the_build_options_argo_cd_uses(served: tuple[Path, str], helm: str) -> None:
    base, archive = served
    root = base / f"repo-{Path(helm).parent.name}"
    with chart_repository(helm, base / f"web-{Path(helm).parent.name}", []) as repository:
        repository.add(CHART, VERSION, Path(archive).read_bytes())
        _fleet(root, repository.url)
        plain = _check(root, helm)
        assert plain.exit_code == 1, plain.stderr  # Argo CD's default: no --enable-helm, the build fails
        reason = _skipped(plain)["lb"]
        assert reason.startswith("render failed: ") and "--argocd-cm FILE, or --kustomize-build-options" in reason
        online = _check(root, helm, "--argocd-cm", str(root / "argocd-cm.yaml"))
        assert online.exit_code == 0, online.stderr
        resources = _rendered(online)["lb"]
        assert resources > 10  # metallb's CRDs, RBAC, DaemonSet, Deployment...
        flag = _check(root, helm, "--kustomize-build-options", "--enable-helm")
        assert (flag.exit_code, _rendered(flag)) == (0, {"lb": resources}), flag.stderr
        replaced = _check(root, helm, "--argocd-cm", str(root / "argocd-cm.yaml"), "--kustomize-build-options", "")
        assert replaced.exit_code == 1  # the flag replaces argocd-cm's options
    assert not (root / "apps" / "lb" / "charts").exists(), "the checkout is never written"
    offline = _check(root, helm, "--argocd-cm", str(root / "argocd-cm.yaml"), "--offline")  # the server is gone
    assert (offline.exit_code, offline.stdout) == (0, online.stdout), offline.stderr
    cold = _check(root, helm, "--argocd-cm", str(root / "argocd-cm.yaml"), "--offline", cache="cold")
    assert cold.exit_code == 0, cold.stderr
    assert _skipped(cold) == {
        "lb": f"source: helmCharts chart {CHART} {VERSION} from {repository.url} is not in the chart cache "
        "(--offline); fill it by running check without --offline"
    }


def test_a_kustomize_before_5_8_with_helm_4_is_skipped_naming_both(served: tuple[Path, str], helm: str) -> None:
    base, _ = served
    root = _fleet(base / f"old-{Path(helm).parent.name}", "http://127.0.0.1:9/charts")
    result = _check(root, helm, "--kustomize-build-options", "--enable-helm", "--offline", kustomize=False)
    assert result.exit_code == 0, result.stderr
    reason = _skipped(result)["lb"]
    major = subprocess.run([helm, "version", "--short"], capture_output=True, text=True, check=True).stdout
    if major.startswith("v4"):  # kubectl's built-in kustomize is 5.7.x
        assert reason.startswith("source: kustomize 5.7.") and "(before 5.8.0) refuses helm v4." in reason
    else:
        assert reason.startswith(f"source: helmCharts chart {CHART} {VERSION} from http://127.0.0.1:9/charts")
