"""chartshare's post-render fields held to a real kustomize (`kustomize build`, v5.8.1 as Argo CD 3.6 ships it):
over the same helm output, generated patches (strategic merge on containers, env, volumes, ports and
tolerations; JSON 6902 add/replace/remove/move/copy/test; deletes; images by name, tag and digest; labels
with and without selectors) give the same objects, compared as a set by identity, or both fail."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmp import manifests
from cmp.errors import ChartShareError
from cmp.model import App
from cmp.ownership import rules
from cmp.ownership.process import process
from conftest import TESTS, kustomize_build

OBJECTS = {
    "objects": [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "web",
                                "image": "nginx:1.25",
                                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                                "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 9090}],
                                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                            },
                            {"name": "proxy", "image": "docker.io/envoy:v1@sha256:abc"},
                        ],
                        "volumes": [{"name": "data", "emptyDir": {}}],
                        "tolerations": [{"key": "spot", "operator": "Exists"}],
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 80}]},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "labels": {"tier": "x"}},
            "data": {"a": "b"},
        },
        {
            "apiVersion": "example.io/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "spec": {"items": [{"name": "one", "size": 1}, {"name": "two"}]},
        },
    ]
}


@pytest.fixture(scope="module")
def kustomize() -> list[str]:
    return kustomize_build()


@pytest.fixture(scope="module")
def helm_output(helm: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    values = tmp_path_factory.mktemp("values") / "values.yaml"
    values.write_text(json.dumps(OBJECTS), encoding="utf-8")
    chart = TESTS / "charts" / "objects"
    return subprocess.run(
        [helm, "template", "rel", str(chart), "-f", str(values)], capture_output=True, text=True, check=True
    ).stdout


names = st.sampled_from(["A", "B", "C"])
container_patch = st.fixed_dictionaries(
    {"name": st.sampled_from(["web", "proxy", "extra"])},
    optional={
        "image": st.sampled_from(["busybox:1", "nginx"]),
        "env": st.lists(
            st.one_of(
                st.fixed_dictionaries({"name": names, "value": st.sampled_from(["x", "y"])}),
                st.fixed_dictionaries({"name": names, "$patch": st.just("delete")}),
            ),
            max_size=3,
            unique_by=lambda e: e["name"],
        ),
        "ports": st.lists(
            st.fixed_dictionaries(
                {"containerPort": st.sampled_from([80, 8080, 9090])},
                optional={"name": st.sampled_from(["http", "metrics"]), "protocol": st.just("TCP")},
            ),
            max_size=2,
            unique_by=lambda p: p["containerPort"],
        ),
        "volumeMounts": st.lists(
            st.fixed_dictionaries({"name": st.just("data"), "mountPath": st.sampled_from(["/data", "/cache"])}),
            max_size=2,
            unique_by=lambda m: m["mountPath"],
        ),
        "args": st.lists(st.sampled_from(["-v", "--x"]), max_size=2),
    },
)
pod_patch = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.lists(container_patch, max_size=2, unique_by=lambda c: c["name"]),
        "volumes": st.lists(
            st.one_of(
                st.fixed_dictionaries({"name": st.sampled_from(["data", "cache"]), "emptyDir": st.just({})}),
                st.fixed_dictionaries({"name": st.just("data"), "$patch": st.just("delete")}),
            ),
            max_size=2,
            unique_by=lambda v: v["name"],
        ),
        "tolerations": st.lists(
            st.fixed_dictionaries({"key": st.sampled_from(["spot", "gpu"]), "operator": st.just("Exists")}),
            max_size=2,
        ),
    },
)
deployment_patch = pod_patch.map(
    lambda pod: {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"template": {"spec": pod}},
    }
)
delete_patch = st.sampled_from(
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "$patch": "delete"},
        {
            "apiVersion": "example.io/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "spec": {"items": [{"name": "three"}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443}]},
        },
    ]
)
operation = st.sampled_from(
    [
        {"op": "add", "path": "/spec/replicas", "value": 3},
        {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:2"},
        {"op": "remove", "path": "/spec/template/spec/tolerations"},
        {"op": "move", "from": "/metadata/labels/app", "path": "/metadata/labels/moved"},
        {"op": "copy", "from": "/spec/selector", "path": "/spec/copied"},
        {"op": "test", "path": "/kind", "value": "Deployment"},
        {"op": "test", "path": "/kind", "value": "Service"},
        {"op": "remove", "path": "/spec/missing"},
        {"op": "add", "path": "/spec/template/spec/containers/-", "value": {"name": "added", "image": "nginx"}},
    ]
)
json_patch = st.lists(operation, min_size=1, max_size=3).map(
    lambda ops: {"target": {"kind": "Deployment"}, "patch": json.dumps(ops)}
)
patch_entry = st.one_of(
    deployment_patch.map(lambda p: {"patch": yaml.safe_dump(p)}),
    deployment_patch.map(lambda p: {"target": {"kind": "Deployment", "name": "w.b"}, "patch": yaml.safe_dump(p)}),
    delete_patch.map(lambda p: {"patch": yaml.safe_dump(p)}),
    json_patch,
)
image_entry = st.fixed_dictionaries(
    {"name": st.sampled_from(["nginx", "docker.io/envoy", "busybox"])},
    optional={
        "newName": st.sampled_from(["registry.example.com/nginx", "mirror/envoy"]),
        "newTag": st.sampled_from(["1.27", "v2"]),
        "digest": st.just("sha256:" + "1" * 64),
    },
)
label_entry = st.fixed_dictionaries(
    {"pairs": st.dictionaries(st.sampled_from(["team", "tier"]), st.sampled_from(["a", "b"]), min_size=1)},
    optional={"includeSelectors": st.booleans(), "includeTemplates": st.booleans()},
)
fields = st.fixed_dictionaries(
    {},
    optional={
        "patches": st.lists(patch_entry, min_size=1, max_size=3),
        "images": st.lists(image_entry, min_size=1, max_size=2),
        "labels": st.lists(label_entry, min_size=1, max_size=3),
        "commonAnnotations": st.dictionaries(st.sampled_from(["owner", "note"]), st.just("x"), min_size=1),
    },
)


def _by_identity(objects: list[dict[str, Any]]) -> dict[tuple[str, ...], dict[str, Any]]:
    found = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        found[(obj.get("apiVersion"), obj.get("kind"), meta.get("namespace", ""), meta.get("name"))] = obj
    return found


def _chartshare(helm_output: str, body: dict[str, Any], folder: Path) -> dict[tuple[str, ...], dict[str, Any]] | None:
    text = yaml.safe_dump({"apiVersion": "chartshare/v1", "kind": "ChartShare", "unowned": "keep", **body})
    try:
        ownership = rules.parse(text, folder / "chartshare.yaml", "chartshare.yaml", folder)
        outcome = process(manifests.parse(helm_output), ownership, App("app", "rel", "default"))
    except ChartShareError:
        return None
    return _by_identity([yaml.safe_load(manifests.emit_json([r]) or "null") for r in outcome.resources])


def _kustomize(kustomize: list[str], helm_output: str, body: dict[str, Any], folder: Path) -> dict[Any, Any] | None:
    (folder / "helm.yaml").write_text(helm_output, encoding="utf-8")
    (folder / "kustomization.yaml").write_text(yaml.safe_dump({"resources": ["helm.yaml"], **body}), encoding="utf-8")
    done = subprocess.run([*kustomize, str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return _by_identity(list(yaml.safe_load_all(done.stdout)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=fields)
def test_the_objects_equal_kustomize_build(
    body: dict[str, Any], kustomize: list[str], helm_output: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("k")
    expected = _kustomize(kustomize, helm_output, body, folder)
    got = _chartshare(helm_output, body, folder)
    if expected is None:
        assert got is None, "kustomize refuses these fields; chartshare must too"
        return
    assert got is not None, "kustomize accepts these fields; chartshare must too"
    assert got == expected
