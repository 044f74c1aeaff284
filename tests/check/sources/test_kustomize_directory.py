"""Kustomize and directory sources, rendered as Argo CD's repo-server renders them (kustomize through the
fetched kubectl's `kubectl kustomize`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleet_builders import app, path_with_kubectl

from cmp.check.fleet import globs
from cmp.check.sources import directory, kustomize
from cmp.errors import ChartShareError, PathError
from conftest import make_source


@pytest.fixture(autouse=True)
def _kubectl(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", path_with_kubectl())


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


BASE = {
    "base/kustomization.yaml": "resources: [deploy.yaml]\n",
    "base/deploy.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: web, image: nginx:1.0}]}\n"
    ),
    "overlay/kustomization.yaml": "resources: [../base]\n",
}


def test_source_kustomize_fields_are_applied_as_argo_cds_edits_in_a_scratch_copy(tmp_path: Path) -> None:
    _write(tmp_path, BASE)
    fields = {
        "namePrefix": "p-",
        "nameSuffix": "-s",
        "namespace": "team",
        "images": ["nginx=registry/nginx:$ARGOCD_APP_NAME"],
        "replicas": [{"name": "web", "count": "3"}],
        "commonLabels": {"tier": "front"},
        "commonAnnotations": {"who": "$ARGOCD_APP_NAME"},
        "patches": [
            {
                "target": {"kind": "Deployment"},
                "patch": "- {op: add, path: /spec/template/metadata/labels/patched, value: 'yes'}",
            }
        ],
    }
    source = make_source(path="overlay", types=("kustomize",), kustomize=fields)
    before = (tmp_path / "overlay/kustomization.yaml").read_text()
    out = kustomize.render(app("shop"), source, tmp_path / "overlay", tmp_path, 30)
    assert (tmp_path / "overlay/kustomization.yaml").read_text() == before, "the checkout is never written"
    assert "name: p-web-s" in out and "namespace: team" in out and "replicas: 3" in out
    assert "image: registry/nginx:shop" in out and "tier: front" in out and 'patched: "yes"' in out
    assert "who: $ARGOCD_APP_NAME" in out  # commonAnnotationsEnvsubst is off


def test_a_kustomization_reaching_outside_the_repository_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "repo", {"app/kustomization.yaml": "resources: [../../outside]\n"})
    with pytest.raises(PathError, match=r"app/kustomization.yaml: resources\[0\] '../../outside' resolves outside"):
        kustomize.references(tmp_path / "repo" / "app", tmp_path / "repo")


def test_a_remote_base_is_reported_for_skipping(tmp_path: Path) -> None:
    _write(tmp_path, {"app/kustomization.yaml": "resources: ['https://github.com/org/repo//base?ref=v1']\n"})
    _, remote = kustomize.references(tmp_path / "app", tmp_path)
    assert remote == ["app/kustomization.yaml: resources[0] 'https://github.com/org/repo//base?ref=v1'"]


def test_helm_charts_without_enable_helm_fail_as_in_argo_cd(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {"app/kustomization.yaml": "helmCharts:\n  - {name: x, repo: https://charts.example.com, version: 1.0.0}\n"},
    )
    with pytest.raises(ChartShareError, match="--enable-helm"):
        kustomize.render(app("a"), make_source(path="app"), tmp_path / "app", tmp_path, 30)


def test_a_label_already_in_the_kustomization_needs_force_as_kustomize_edit_does(tmp_path: Path) -> None:
    _write(tmp_path, {**BASE, "overlay/kustomization.yaml": "resources: [../base]\ncommonLabels: {tier: back}\n"})
    source = make_source(path="overlay", kustomize={"commonLabels": {"tier": "front"}})
    with pytest.raises(ChartShareError, match="forceCommonLabels"):
        kustomize.render(app("a"), source, tmp_path / "overlay", tmp_path, 30)
    forced = make_source(path="overlay", kustomize={"commonLabels": {"tier": "front"}, "forceCommonLabels": True})
    assert "tier: front" in kustomize.render(app("a"), forced, tmp_path / "overlay", tmp_path, 30)


@pytest.mark.parametrize(
    ("pattern", "text", "matched"),
    [
        ("*.yaml", "sub/x.yaml", True),  # gobwas without separators: `*` crosses `/`
        ("{crds,rbac}/*.yaml", "rbac/a.yaml", True),
        ("{crds,rbac}/*.yaml", "other/a.yaml", False),
        ("[!a]*.json", "b.json", True),
        ("x-?.yaml", "x-1.yaml", True),
    ],
)
def test_directory_globs_follow_gobwas(pattern: str, text: str, matched: bool) -> None:
    assert globs.gobwas_match(pattern, text) is matched


def test_go_path_match_stops_at_slashes_and_pathspecs_do_not() -> None:
    assert not globs.path_match("apps/*", "apps/a/b") and globs.path_match("apps/*", "apps/a")
    assert globs.pathspec_match("apps/*.json", "apps/a/b.json") and globs.pathspec_match("apps", "apps/a/b.json")
    with pytest.raises(globs.BadPattern):
        globs.gobwas_match("{a,b", "a")


def test_a_directory_source_reads_manifests_the_way_argo_cd_does(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "app/a.yaml": (
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems:\n"
                "  - {apiVersion: v1, kind: Secret, metadata: {name: b}}\n"
            ),
            "app/c.json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}',
            "app/values.yaml": "replicas: 3\n",  # someone's unrelated YAML: left out
            "app/skip.yaml": "# +argocd:skip-file-rendering\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n",
            "app/sub/d.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n",
            "app/sub/e.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: e}\n",
            "app/notes.txt": "apiVersion: v1\n",
        },
    )
    flat = directory.manifest_files(tmp_path / "app", tmp_path, {}, "d")
    assert [r.name for r in directory.resources(flat, tmp_path / "app")] == ["a", "b", "c"]
    deep = directory.manifest_files(tmp_path / "app", tmp_path, {"recurse": True, "exclude": "sub/e.*"}, "d")
    assert [r.name for r in directory.resources(deep, tmp_path / "app")] == ["a", "b", "c", "d"]
    only = directory.manifest_files(tmp_path / "app", tmp_path, {"recurse": True, "include": "{sub/*,c.json}"}, "d")
    assert [path.name for path in only] == ["c.json", "d.yaml", "e.yaml"]


def test_a_broken_file_that_looks_like_a_manifest_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, {"app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n"})
    with pytest.raises(ChartShareError, match=r"bad\.yaml: failed to read the manifest"):
        directory.resources(directory.manifest_files(tmp_path / "app", tmp_path, {}, "d"), tmp_path / "app")


def test_a_link_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "outside.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (tmp_path / "repo/app").mkdir(parents=True)
    (tmp_path / "repo/app/x.yaml").symlink_to(tmp_path / "outside.yaml")
    with pytest.raises(PathError, match=r"x\.yaml is a link that leads out of the repository"):
        directory.manifest_files(tmp_path / "repo/app", tmp_path / "repo", {}, "d")
