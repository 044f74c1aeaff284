"""The post-render fields on real charts (../shared/realcharts), on every helm of REALCHART_HELMS: a patch
set on each chart (labels into pod templates, annotations, every image renamed and retagged, a JSON 6902 and
a strategic merge patch on every Deployment) gives the objects `kustomize build` (the kustomize Argo CD
ships) gives over the same helm output. One difference is not post-rendering's: kustomize reads helm's text
with go-yaml v3, which folds some `>-` scalars with more-indented lines differently from go-yaml v2 (how
Kubernetes, and chartshare, read them); a string the fields did not touch is compared to helm's own reading
of it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from cmp import goyaml, manifests
from cmp.model import App
from cmp.ownership import rules
from cmp.ownership.process import process
from conftest import (
    REALCHART_HELMS,
    REALCHARTS_MISSING,
    kustomize_build,
    realchart,
    realchart_helm,
    realchart_index,
    realcharts,
    untarred,
)

helm = pytest.fixture(scope="session", params=REALCHART_HELMS, ids=lambda version: f"helm{version}")(realchart_helm)
FOLDER = realcharts()
INDEX = realchart_index(FOLDER)
_BUILT: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}  # kustomize's objects per helm output


@pytest.fixture(params=sorted(INDEX) or [REALCHARTS_MISSING])
def chart(request: pytest.FixtureRequest) -> dict[str, Any]:
    return realchart(request, INDEX)


def _render(chart: dict[str, Any], helm: str, root: Path) -> str:
    assert FOLDER is not None
    folder = untarred(FOLDER, chart, root / "charts")
    args = ["template", ".", f"--name-template={chart['release']}", f"--namespace={chart['namespace']}"]
    if chart["values"]:
        args.append(f"--values={FOLDER / chart['values']}" if FOLDER else "")
    done = subprocess.run(
        [helm, *args, "--include-crds"], cwd=folder, capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout


def _images(objects: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("containers", "initContainers") and isinstance(value, list):
                    found.extend(c["image"] for c in value if isinstance(c, dict) and isinstance(c.get("image"), str))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for obj in objects:
        if obj.get("kind") != "CustomResourceDefinition":
            walk(obj)
    names = {
        image.split("@")[0].rsplit(":", 1)[0]
        if "/" not in image.split("@")[0].rsplit(":", 1)[-1]
        else image.split("@")[0]
        for image in found
    }
    return sorted(names)


def patch_set(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The fields every chart gets: what teams patch third-party charts for."""
    return {
        "labels": [{"pairs": {"team": "platform"}, "includeTemplates": True}],
        "commonAnnotations": {"owner": "platform"},
        "images": [
            {"name": name, "newName": f"mirror.example.com/{name.rsplit('/', 1)[-1]}", "newTag": "patched"}
            for name in _images(objects)
        ][:3],
        "patches": [
            {
                "target": {"group": "apps", "kind": "Deployment"},
                "patch": json.dumps([{"op": "add", "path": "/spec/revisionHistoryLimit", "value": 3}]),
            },
            {
                "target": {"kind": "Deployment"},
                "patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: any}\nspec:\n  template:\n"
                "    spec:\n      tolerations: [{key: dedicated, operator: Exists}]\n",
            },
        ],
    }


def _by_identity(objects: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {
        (
            o.get("apiVersion"),
            o.get("kind"),
            (o.get("metadata") or {}).get("namespace", ""),
            (o.get("metadata") or {}).get("name"),
        ): o
        for o in objects
        if o
    }


def test_a_patch_set_gives_kustomize_s_objects(chart: dict[str, Any], helm: str, tmp_path: Path) -> None:
    stream = _render(chart, helm, tmp_path)
    helm_objects = [obj for obj in goyaml.load_all(stream) if obj]
    fields = patch_set(helm_objects)
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "helm.yaml").write_text(stream, encoding="utf-8")
    (tmp_path / "k" / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": ["helm.yaml"], **fields}), encoding="utf-8"
    )
    if stream not in _BUILT:  # the helms mostly render the same bytes: kustomize runs once for them
        done = subprocess.run([*kustomize_build(), str(tmp_path / "k")], capture_output=True, text=True, check=True)
        _BUILT[stream] = done.stdout
    expected = _by_identity([obj for obj in goyaml.load_all(_BUILT[stream]) if obj])

    text = yaml.safe_dump({"apiVersion": "chartshare/v1", "kind": "ChartShare", "unowned": "keep", **fields})
    ownership = rules.parse(text, tmp_path / "chartshare.yaml", "chartshare.yaml", tmp_path)
    outcome = process(manifests.parse(stream), ownership, App("app", chart["release"], chart["namespace"]))
    got = _by_identity([json.loads(manifests.emit_json([r])) for r in outcome.resources])
    original = _by_identity(helm_objects)
    assert got.keys() == expected.keys()
    differing = [
        f"{key}: {where}" for key in got for where in _differences(got[key], expected[key], original.get(key), "")
    ]
    assert not differing, differing[:3]


def _differences(got: Any, expected: Any, original: Any, where: str) -> list[str]:
    """Where `got` and kustomize's `expected` differ, but for strings helm's reading gives as `got` has them."""
    if isinstance(got, dict) and isinstance(expected, dict):
        if got.keys() != expected.keys():
            return [f"{where}: keys {sorted(set(got) ^ set(expected))}"]
        inner = original if isinstance(original, dict) else {}
        return [d for key in got for d in _differences(got[key], expected[key], inner.get(key), f"{where}/{key}")]
    if isinstance(got, list) and isinstance(expected, list):
        if len(got) != len(expected):
            return [f"{where}: {len(got)} items against {len(expected)}"]
        inner = original if isinstance(original, list) and len(original) == len(got) else [None] * len(got)
        return [
            d
            for i, pair in enumerate(zip(got, expected, inner, strict=True))
            for d in _differences(*pair, f"{where}/{i}")
        ]
    if got == expected or (isinstance(got, str) and got == original):
        return []
    return [f"{where}: {got!r} against {expected!r}"]
