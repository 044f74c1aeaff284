"""check's bad input: each row a small repository that Argo CD would refuse or could never build, run
through the real CLI. Every row must end with exit 2, nothing on stdout, no traceback, and one
`chartshare: error:` line that names the file, the field and the fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fleet_builders import path_with_kubectl

from conftest import run_cli

APPSET = """apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {{name: s, namespace: argocd}}
spec:
  generators:
    - {generator}
  template:
    metadata: {{name: 'a-{{{{name}}}}'}}
    spec:
      source: {{repoURL: https://git.example.com/r.git, path: app}}
      destination: {{server: https://kubernetes.default.svc, namespace: x}}
"""
APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: k, namespace: argocd}
spec:
  source: {repoURL: https://git.example.com/r.git, path: app}
  destination: {server: https://kubernetes.default.svc, namespace: x}
"""
SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: cluster-a
  labels: {{argocd.argoproj.io/secret-type: cluster}}
data: {data}
"""
LIST = "{list: {elements: [{name: a}]}}"


def _cluster_row(name: str, data: str, error: str) -> dict[str, object]:
    """A clusters generator fed one malformed cluster Secret."""
    files = {"argocd/s.yaml": APPSET.format(generator="{clusters: {}}"), "clusters.yaml": SECRET.format(data=data)}
    return {"name": name, "files": files, "args": ["--clusters", "{repo}/clusters.yaml"], "error": error}


ROWS = [
    _cluster_row(
        "cluster-secret-without-server",
        "{name: YQ==}",
        r"clusters\.yaml: Secret cluster-a: data\.server is missing; an Argo CD cluster Secret needs name",
    ),
    _cluster_row(
        "cluster-secret-not-base64",
        "{name: '%%', server: eA==}",
        r"clusters\.yaml: Secret cluster-a: data\.name is not base64 of UTF-8 text",
    ),
    {
        "name": "git-path-escapes-the-repository",
        "files": {
            "argocd/s.yaml": APPSET.format(
                generator="{git: {repoURL: 'https://git.example.com/r.git', directories: [{path: '../../*'}]}}"
            )
        },
        "args": ["--repo", "https://git.example.com/r.git={repo}"],
        "error": r"argocd/s\.yaml: ApplicationSet s: spec\.generators\[0\]\.git\.directories\[0\]\.path '\.\./\.\./\*' "
        r"leaves the repository",
    },
    {
        "name": "kustomization-references-outside",
        "files": {"argocd/k.yaml": APP, "app/kustomization.yaml": "resources: [../../outside]\n"},
        "error": r"argocd/k\.yaml: Application k: spec\.source: app/kustomization\.yaml: "
        r"resources\[0\] '\.\./\.\./outside' resolves outside the repository root",
    },
    {
        "name": "generator-nested-three-levels",
        "files": {
            "argocd/s.yaml": APPSET.format(
                generator="{matrix: {generators: [{matrix: {generators: [{matrix: {generators: ["
                + LIST
                + ", "
                + LIST
                + "]}}, "
                + LIST
                + "]}}, "
                + LIST
                + "]}}"
            )
        },
        "error": r"spec\.generators\[0\]\.matrix\.generators\[0\]\.matrix\.generators\[0\]: a matrix generator nested "
        r"three levels deep",
    },
    {
        "name": "matrix-of-three",
        "files": {"argocd/s.yaml": APPSET.format(generator="{matrix: {generators: [" + ", ".join([LIST] * 3) + "]}}")},
        "error": r"spec\.generators\[0\]\.matrix\.generators holds 3 generators; a matrix combines exactly two",
    },
    {
        "name": "merge-without-keys",
        "files": {"argocd/s.yaml": APPSET.format(generator="{merge: {generators: [" + LIST + ", " + LIST + "]}}")},
        "error": r"spec\.generators\[0\]\.merge\.mergeKeys must name at least one parameter",
    },
    {
        "name": "selector-bad-operator",
        "files": {
            "argocd/s.yaml": APPSET.format(
                generator="{list: {elements: [{name: a}]}, selector: {matchExpressions: [{key: name, operator: Is}]}}"
            )
        },
        "error": r"spec\.generators\[0\]\.selector\.matchExpressions\[0\]\.operator 'Is' is not one of In, NotIn",
    },
    {
        "name": "directory-unknown-field",
        "files": {
            "argocd/k.yaml": APP.replace("path: app}", "path: app, directory: {recursive: true}}"),
            "app/a.yaml": "",
        },
        "error": r"spec\.source\.directory: unknown field 'recursive'; Argo CD knows recurse",
    },
    {
        "name": "kustomize-unknown-field",
        "files": {
            "argocd/k.yaml": APP.replace("path: app}", "path: app, kustomize: {prefix: a-}}"),
            "app/kustomization.yaml": "resources: []\n",
        },
        "error": r"spec\.source\.kustomize: unknown field 'prefix'; Argo CD knows namePrefix",
    },
    {
        "name": "argocd-cm-unknown-tracking-method",
        "files": {
            "argocd/k.yaml": APP,
            "app/a.yaml": "",
            "cm.yaml": (
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\n"
                "data: {application.resourceTrackingMethod: annotations}\n"
            ),
        },
        "args": ["--argocd-cm", "{repo}/cm.yaml"],
        "error": r"cm\.yaml: data\.application\.resourceTrackingMethod 'annotations' is not one of annotation",
    },
    {
        "name": "repo-mapping-without-equals",
        "files": {"argocd/k.yaml": APP},
        "args": ["--repo", "https://git.example.com/r.git"],
        "error": r"--repo 'https://git\.example\.com/r\.git' must be URL=DIR",
    },
]


@pytest.mark.parametrize("row", ROWS, ids=[row["name"] for row in ROWS])
def test_bad_input_is_one_error_line_and_no_report(row: dict[str, object], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    files = row["files"]
    assert isinstance(files, dict)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    extra = [str(arg).replace("{repo}", str(repo)) for arg in row.get("args", [])]  # type: ignore[attr-defined]
    result = run_cli(
        ["check", str(repo / "argocd"), "--repo-root", str(repo), *extra], env={"PATH": path_with_kubectl()}
    )
    assert "Traceback" not in result.stderr
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("chartshare: error: "), result.stderr
    assert re.search(str(row["error"]), lines[0]), lines[0]


def test_the_rows_cover_the_bad_inputs_issue_17_lists() -> None:
    names = {row["name"] for row in ROWS}
    assert {"cluster-secret-without-server", "git-path-escapes-the-repository"} <= names
    assert {"kustomization-references-outside", "generator-nested-three-levels"} <= names
