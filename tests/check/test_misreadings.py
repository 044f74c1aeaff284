"""What a new user points check at by mistake, and what Argo CD would say of it, through the real CLI: a chart
folder given as PATH, a source path that does not exist, an App of Apps root that renders nothing; and no
reason is ever cut mid-word."""

from __future__ import annotations

import json
from pathlib import Path

from cmp.errors import shortened
from conftest import Result, run_cli

APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: https://git.example.com/fleet.git, path: {path}{extra}}}
  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}
"""
ROOT_CHART = """{{- if .Values.enabled }}
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: child}
spec:
  project: default
  source: {repoURL: https://git.example.com/fleet.git, path: apps/child}
  destination: {server: https://kubernetes.default.svc, namespace: child}
{{- end }}
"""


def _fleet(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _check(root: Path, helm: str, *paths: str) -> Result:
    args = ["check", *(str(root / path) for path in paths or ["argocd"]), "--repo-root", str(root)]
    return run_cli([*args, "--format", "json"], env={"CHARTSHARE_HELM": helm})


def _charts(root: Path) -> dict[str, str]:
    return {
        "charts/root/Chart.yaml": "apiVersion: v2\nname: root\nversion: 1.0.0\n",
        "charts/root/values.yaml": "enabled: false\n",
        "charts/root/templates/apps.yaml": ROOT_CHART,
        "apps/child/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: child}\n",
    }


def test_a_chart_folder_given_as_path_is_one_error_naming_it(tmp_path: Path, helm: str) -> None:
    root = _fleet(tmp_path, _charts(tmp_path))
    result = _check(root, helm, "charts/root")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"chartshare: error: {root}/charts/root: a Helm chart, not Applications: point check at the Applications "
        "that render it\n"
    )


def test_a_source_path_that_does_not_exist_is_a_failed_render(tmp_path: Path, helm: str) -> None:
    files = {
        "argocd/apps.yaml": APP.format(name="gone", path="apps/gone", extra="")
        + "---\n"
        + APP.format(name="child", path="apps/child", extra=""),
        **_charts(tmp_path),
    }
    result = _check(_fleet(tmp_path, files), helm)
    assert result.exit_code == 1, result.stderr  # as Argo CD's ComparisonError, never a quiet skip
    assert json.loads(result.stdout)["skipped"] == [
        {
            "app": "gone",
            "reason": "render failed: app path does not exist: source.path apps/gone "
            "(repoURL https://git.example.com/fleet.git)",
        }
    ]


def test_an_app_of_apps_root_that_renders_nothing_warns(tmp_path: Path, helm: str) -> None:
    files = {
        "argocd/root.yaml": APP.format(name="root", path="charts/root", extra=""),
        "argocd/other.yaml": APP.format(name="other", path="charts/root", extra=", helm: {values: 'enabled: true'}"),
        **_charts(tmp_path),
    }
    result = _check(_fleet(tmp_path, files), helm)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert [(w["app"], w["code"]) for w in report["warnings"]] == [("root", "empty-root")]
    assert report["warnings"][0]["message"].startswith("renders no resources, though its files name Argo CD objects")
    assert {app["name"]: app["resources"] for app in report["applications"]} == {
        "other": 1,
        "other_child": 1,
        "root": 0,
    }


def test_a_reason_is_shortened_at_a_word_or_not_at_all() -> None:
    text = "accumulating resources: must specify the chart version for helmCharts"
    assert shortened(text, 40) == "accumulating resources: must specify the ..."
    assert shortened(text, 30) == "accumulating resources: must ..."
    assert shortened(text, 200) == text
    assert shortened("x" * 50, 10) == "x" * 50  # no word boundary within the limit: kept whole
