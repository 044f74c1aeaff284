"""One Application name, two definitions: a conflict on the Application object, the rest of the fleet
checked (exit 1), through the real CLI. The App of Apps chart rendered by two cluster roots is the case
chartshare exists for; one ApplicationSet generating a name twice makes the first and fails the others."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Result, run_cli

ROOT_APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  project: default
  source:
    repoURL: https://git.example.com/fleet.git
    path: charts/cluster-addons
    helm: {{valuesObject: {{cluster: "{cluster}"}}}}
  destination: {{server: https://kubernetes.default.svc, namespace: argocd}}
"""
ADDONS = """{{- range list "metrics" "ingress" }}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: {{ . }}}
spec:
  project: default
  source: {repoURL: https://git.example.com/fleet.git, path: addons/{{ . }}}
  destination: {server: {{ $.Values.cluster | quote }}, namespace: {{ . }}}
{{- end }}
"""
PLAIN = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: https://git.example.com/fleet.git, path: addons/{path}}}
  destination: {{server: https://kubernetes.default.svc, namespace: {path}}}
"""
APPSET = """apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: cluster-addons, namespace: argocd}
spec:
  generators:
    - list: {elements: [{cluster: https://east}, {cluster: https://west}]}
  template:
    metadata: {name: cluster-addons}
    spec:
      project: default
      source: {repoURL: https://git.example.com/fleet.git, path: addons/metrics}
      destination: {server: '{{cluster}}', namespace: metrics}
"""


def _fleet(root: Path, files: dict[str, str]) -> Path:
    base = {
        "charts/cluster-addons/Chart.yaml": "apiVersion: v2\nname: cluster-addons\nversion: 1.0.0\n",
        "charts/cluster-addons/templates/apps.yaml": ADDONS,
        "addons/metrics/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: metrics}\n",
        "addons/ingress/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ingress}\n",
        "addons/fine/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n",
        "argocd/fine.yaml": PLAIN.format(name="fine", path="fine"),
    }
    for name, text in {**base, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _check(root: Path, helm: str, *args: str) -> Result:
    return run_cli(
        ["check", str(root / "argocd"), "--repo-root", str(root), *args],
        env={"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(root.parent / "cache")},
    )


def _two_roots(tmp_path: Path, east: str, west: str) -> Path:
    return _fleet(
        tmp_path / "repo",
        {
            "argocd/root-east.yaml": ROOT_APP.format(name="root-east", cluster=east),
            "argocd/root-west.yaml": ROOT_APP.format(name="root-west", cluster=west),
        },
    )


def test_two_roots_of_one_app_of_apps_chart_conflict_on_every_child(tmp_path: Path, helm: str) -> None:
    root = _two_roots(tmp_path, "https://east", "https://west")
    result = _check(root, helm, "--format", "json")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(c["group"], c["kind"], c["namespace"], c["name"], c["apps"]) for c in report["conflicts"]] == [
        ("argoproj.io", "Application", "argocd", name, ["root-east", "root-west"]) for name in ("ingress", "metrics")
    ]
    assert sorted(app["name"] for app in report["applications"]) == ["fine", "root-east", "root-west"]
    assert {skip["app"]: skip["reason"] for skip in report["skipped"]} == {
        name: f"2 definitions of Application {name} (root-east, root-west): Argo CD keeps one Application per "
        "name, so neither is checked (see the conflict on the Application object)"
        for name in ("ingress", "metrics")
    }
    text = _check(root, helm)
    assert text.exit_code == 1 and text.stderr.startswith("chartshare: note: --repo-root")
    assert (
        "  Application.argoproj.io argocd/metrics  root-east, root-west\n"
        "      suggested rule, in the chartshare.yaml of each parent above:\n"
        "        - match: {group: argoproj.io, kind: Application, namespace: argocd, name: metrics}\n"
        "          others: rename\n"
        '          renameTo: "{app}-{name}"\n'
        "      (root-east, root-west render without chartshare: use the chartshare plugin" in text.stdout
    )


def test_two_roots_with_one_definition_check_it_once_and_still_conflict(tmp_path: Path, helm: str) -> None:
    root = _two_roots(tmp_path, "https://east", "https://east")
    result = _check(root, helm, "--format", "json")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(c["name"], c["apps"]) for c in report["conflicts"]] == [
        ("ingress", ["root-east", "root-west"]),
        ("metrics", ["root-east", "root-west"]),
    ]  # both parents track the object, and fight over it
    assert {app["name"]: app.get("parent") for app in report["applications"]} == {
        "fine": None,
        "ingress": "root-east",
        "metrics": "root-east",
        "root-east": None,
        "root-west": None,
    }
    assert report["skipped"] == []


def test_two_files_of_one_name_conflict_and_the_rest_is_checked(tmp_path: Path, helm: str) -> None:
    root = _fleet(
        tmp_path / "repo",
        {
            "argocd/a.yaml": PLAIN.format(name="metrics", path="metrics"),
            "argocd/b.yaml": PLAIN.format(name="metrics", path="ingress"),
        },
    )
    result = _check(root, helm)
    assert result.exit_code == 1, result.stderr
    files = f"file:{root}/argocd/a.yaml, file:{root}/argocd/b.yaml"
    assert f"  Application.argoproj.io argocd/metrics  {files}\n" in result.stdout
    assert f"      ({files}: rename the Application in those files)\n" in result.stdout
    assert f"  metrics: 2 definitions of Application metrics ({files})" in result.stdout
    assert result.stdout.endswith("chartshare check: 1 application, 1 conflict, 0 warnings, 1 skipped\n")


def test_an_application_set_generating_one_name_twice_makes_the_first(tmp_path: Path, helm: str) -> None:
    root = _fleet(tmp_path / "repo", {"argocd/set.yaml": APPSET})
    result = _check(root, helm, "--format", "json")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert sorted(app["name"] for app in report["applications"]) == ["cluster-addons", "fine"]
    assert [app["cluster"] for app in report["applications"]] == ["https://east", "https://kubernetes.default.svc"]
    (skip,) = report["skipped"]
    assert skip["app"] == "cluster-addons"
    assert skip["reason"].startswith(
        "render failed: ApplicationSet cluster-addons generates the name cluster-addons again ("
    )
    assert "Argo CD creates the first (" in skip["reason"] and skip["reason"].endswith("make the name template unique")
    assert report["conflicts"] == []


def test_shards_merge_to_the_single_run_with_a_name_defined_twice(tmp_path: Path, helm: str) -> None:
    root = _fleet(
        tmp_path / "repo",
        {
            "argocd/a.yaml": PLAIN.format(name="metrics", path="metrics"),
            "argocd/b.yaml": PLAIN.format(name="metrics", path="ingress"),
            "argocd/root-east.yaml": ROOT_APP.format(name="root-east", cluster="https://east"),
            "argocd/root-west.yaml": ROOT_APP.format(name="root-west", cluster="https://west"),
        },
    )
    single = _check(root, helm)
    assert single.exit_code == 1, single.stderr
    documents = []
    for index in (1, 2):
        shard = _check(root, helm, "--shard", f"{index}/2")
        assert shard.exit_code == 0, shard.stderr
        documents.append(tmp_path / f"shard-{index}.json")
        documents[-1].write_text(shard.stdout)
    merged = run_cli(["check", "--merge", *map(str, documents)])
    assert (merged.exit_code, merged.stdout) == (1, single.stdout)
