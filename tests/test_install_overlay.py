"""examples/install: built with kubectl's kustomize over a stand-in for Argo CD's install.yaml."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import fetch_kubectl
import pytest
import yaml
from sidecar_support import SIDECAR_UID

from cmp.remote import credentials
from conftest import ROOT

INSTALL = ROOT / "examples" / "install"
# The parts of Argo CD's argocd-repo-server Deployment the overlay relies on (written for this test).
UPSTREAM = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-repo-server
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: argocd-repo-server}
  template:
    metadata:
      labels: {app.kubernetes.io/name: argocd-repo-server}
    spec:
      containers:
        - name: argocd-repo-server
          image: quay.io/argoproj/argocd:latest
          volumeMounts:
            - {name: tmp, mountPath: /tmp}
            - {name: plugins, mountPath: /home/argocd/cmp-server/plugins}
      initContainers:
        - name: copyutil
          image: quay.io/argoproj/argocd:latest
          volumeMounts:
            - {name: var-files, mountPath: /var/run/argocd}
      volumes:
        - {name: tmp, emptyDir: {}}
        - {name: var-files, emptyDir: {}}
        - {name: plugins, emptyDir: {}}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    kubectl = fetch_kubectl.ensure()
    overlay = tmp_path_factory.mktemp("install") / "install"
    shutil.copytree(INSTALL, overlay)
    (overlay / "upstream.yaml").write_text(UPSTREAM)
    kustomization = overlay / "kustomization.yaml"
    text = kustomization.read_text()
    assert re.search(r"^  - https://\S+/manifests/install\.yaml$", text, re.M), (
        "the overlay's base is Argo CD's install"
    )
    kustomization.write_text(
        re.sub(r"^  - https://\S+/manifests/install\.yaml$", "  - upstream.yaml", text, flags=re.M)
    )
    out = subprocess.run([str(kubectl), "kustomize", str(overlay)], capture_output=True, text=True, check=True).stdout
    return {(doc["kind"], doc["metadata"]["name"]): doc for doc in yaml.safe_load_all(out) if doc}


def _sidecar(built: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    containers = built[("Deployment", "argocd-repo-server")]["spec"]["template"]["spec"]["containers"]
    by_name = {container["name"]: container for container in containers}
    assert sorted(by_name) == ["argocd-repo-server", "chartshare"]
    return dict(by_name["chartshare"])


def test_the_sidecar_runs_argocd_cmp_server_as_999_from_the_pinned_image(
    built: dict[tuple[str, str], dict[str, Any]],
) -> None:
    sidecar = _sidecar(built)
    assert sidecar["command"] == ["/usr/bin/tini", "--", "/var/run/argocd/argocd-cmp-server"]  # an init that reaps
    assert sidecar["image"] == "registry.example.com/platform/chartshare:0.1.0"
    assert sidecar["securityContext"]["runAsNonRoot"] is True
    assert sidecar["securityContext"]["runAsUser"] == SIDECAR_UID
    assert sidecar["securityContext"]["readOnlyRootFilesystem"] is True


def test_the_sidecar_mounts_var_files_plugins_and_its_own_tmp(built: dict[tuple[str, str], dict[str, Any]]) -> None:
    mounts = {mount["mountPath"]: mount["name"] for mount in _sidecar(built)["volumeMounts"]}
    assert mounts["/var/run/argocd"] == "var-files"
    assert mounts["/home/argocd/cmp-server/plugins"] == "plugins"
    assert mounts["/tmp"] != "tmp", "never the repo-server's /tmp"
    volumes = {v["name"]: v for v in built[("Deployment", "argocd-repo-server")]["spec"]["template"]["spec"]["volumes"]}
    assert volumes[mounts["/tmp"]] == {"name": mounts["/tmp"], "emptyDir": {}}
    assert set(mounts.values()) <= set(volumes)


def test_the_credentials_secret_is_mounted_where_chartshare_reads_it(
    built: dict[tuple[str, str], dict[str, Any]],
) -> None:
    sidecar = _sidecar(built)
    env = {item["name"]: item["value"] for item in sidecar["env"]}
    location = Path(env[credentials.ENV])
    mount = next(m for m in sidecar["volumeMounts"] if Path(m["mountPath"]) == location.parent)
    volumes = built[("Deployment", "argocd-repo-server")]["spec"]["template"]["spec"]["volumes"]
    secret_name = next(v["secret"]["secretName"] for v in volumes if v["name"] == mount["name"])
    secret = built[("Secret", secret_name)]
    assert secret["metadata"]["namespace"] == "argocd"
    assert credentials.parse(secret["stringData"][location.name], location.name).entries == ()


def test_the_overlay_and_the_dockerfile_pin_the_same_argo_cd() -> None:
    overlay = re.search(r"argo-cd/(v[0-9.]+)/manifests", (INSTALL / "kustomization.yaml").read_text())
    dockerfile = re.search(r"^ARG ARGOCD_VERSION=(\S+)$", (ROOT / "Dockerfile").read_text(), re.M)
    assert overlay and dockerfile
    assert overlay.group(1) == dockerfile.group(1)


def test_the_policy_configmap_is_mounted_where_the_sidecar_reads_it_and_parses(
    built: dict[tuple[str, str], dict[str, Any]],
) -> None:
    from cmp.inputs.policy_file import DEFAULT_PATH
    from cmp.ownership.policy import parse

    sidecar = _sidecar(built)
    mount = next(m for m in sidecar["volumeMounts"] if m["name"] == "chartshare-policy")
    assert Path(mount["mountPath"]) == DEFAULT_PATH and mount["readOnly"]
    assert mount["subPath"] == DEFAULT_PATH.name  # beside the image's plugin.yaml, which a folder mount would hide
    volumes = built[("Deployment", "argocd-repo-server")]["spec"]["template"]["spec"]["volumes"]
    volume = next(v for v in volumes if v["name"] == "chartshare-policy")
    config_map = built[("ConfigMap", volume["configMap"]["name"])]
    assert parse(config_map["data"][DEFAULT_PATH.name], DEFAULT_PATH.name).projects == ()
    assert not any(env["name"] == "CHARTSHARE_POLICY" for env in sidecar.get("env", []))
