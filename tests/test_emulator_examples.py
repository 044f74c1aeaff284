"""Every example Application renders through the cmp-server emulator exactly as Argo CD would run it."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from emulator import Application, CmpServer
from sidecar_support import checkout, git_revision, plugin_applications, shared_tmp, sidecar_bin, sidecar_env

from cmp.ownership.scope import Scope, ScopeTable, crd_scopes
from conftest import ROOT

APPLICATIONS = plugin_applications()  # Helm or directory sources never reach the sidecar
CHARTSHARE = Path(sys.executable).parent / "chartshare"
POLICY = ROOT / "examples" / "fleet-policy" / "chartshare-policy.yaml"  # decides for the fleet-policy example's
# projects; every other example's apps are in project `default`, which it names in no entry


@pytest.fixture(scope="module")
def repository() -> Iterator[Path]:
    base = shared_tmp("chartshare-repo-")
    yield checkout(base / "repo")
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def server(helm: str) -> Iterator[CmpServer]:
    base = shared_tmp("chartshare-sidecar-")
    bin_dir = sidecar_bin(base / "bin", helm=Path(helm), chartshare=CHARTSHARE)
    env = sidecar_env(bin_dir, base / "home", CHARTSHARE_POLICY=str(POLICY))  # one sidecar, one fleet policy
    yield CmpServer(ROOT / "plugin.yaml", env, workdir=base / "tmp")
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def renders(server: CmpServer, repository: Path) -> dict[str, list[dict[str, Any]]]:
    """Each example Application's manifests, generated once per helm major."""
    revision = git_revision()
    return {
        name: server.manifests(Application.from_manifest(manifest), repository, revision=revision)
        for name, manifest in APPLICATIONS
    }


def test_the_examples_hold_plugin_applications() -> None:
    assert len(APPLICATIONS) >= 5


@pytest.mark.parametrize(("name", "manifest"), APPLICATIONS, ids=[name for name, _ in APPLICATIONS])
def test_example_application_renders_through_the_emulator(
    name: str, manifest: dict[str, Any], renders: dict[str, list[dict[str, Any]]]
) -> None:
    objects = renders[name]
    assert objects, f"{name} rendered nothing"
    assert all(obj.get("apiVersion") and obj["metadata"].get("name") for obj in objects)


@pytest.mark.parametrize(("name", "manifest"), APPLICATIONS, ids=[name for name, _ in APPLICATIONS])
def test_example_application_announces_its_parameters(
    name: str, manifest: dict[str, Any], server: CmpServer, repository: Path
) -> None:
    announcement = server.parameters(Application.from_manifest(manifest), repository)
    announced = {entry["name"]: entry for entry in reversed(announcement)}  # the UI shows the first of a name
    assert announced["set"]["map"], "the chart's values are announced in the set map"
    assert "Cannot show" not in announced["config"]["tooltip"], announced["config"]["tooltip"]


def _claims(renders: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, ...], list[str]]:
    claims: dict[tuple[str, ...], list[str]] = {}
    for name, manifest in APPLICATIONS:
        app = Application.from_manifest(manifest)
        objects = renders[name]
        scopes = ScopeTable.build(crd_scopes(objects), (), ())
        for obj in objects:
            group = str(obj["apiVersion"]).rpartition("/")[0]
            if (group, obj["kind"]) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
                continue  # Argo CD never tracks CRDs
            cluster_scoped = scopes.of(group, obj["kind"]) is Scope.CLUSTER
            namespace = "" if cluster_scoped else obj["metadata"].get("namespace") or app.destination_namespace
            key = (app.destination_server, group, obj["kind"], namespace, obj["metadata"]["name"])
            claims.setdefault(key, []).append(app.instance_name())
    return claims


def test_no_two_example_applications_emit_the_same_object(renders: dict[str, list[dict[str, Any]]]) -> None:
    shared = {key: apps for key, apps in _claims(renders).items() if len(apps) > 1}
    assert not shared, f"objects emitted by several Applications (Argo CD would flip their tracking-id): {shared}"
