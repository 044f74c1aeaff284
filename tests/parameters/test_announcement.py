"""`chartshare parameters`: the chart's values as Argo CD's Helm source flattens them, and a usable tab even
when the app's parameters are wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cmp.parameters.announcement import flatten
from conftest import ROOT, run_cli

EXAMPLE = ROOT / "examples" / "shoong-delivery"


def _announce(cwd: Path, helm: str, **env: str) -> dict[str, dict[str, Any]]:
    base = {"ARGOCD_APP_NAME": "dev-shoong-order", "CHARTSHARE_HELM": helm, **env}
    result = run_cli(["parameters"], env=base, cwd=cwd)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith("\n")
    return {entry["name"]: entry for entry in json.loads(result.stdout)}


def test_values_flatten_like_argo_cds_helm_parameters() -> None:
    out: dict[str, str] = {}
    flatten({"a": {"b": [1, {"c": True}], "d": None, "e": {}, "f": 2.0, "g": "x"}, "h": []}, out)
    assert out == {"a.b[0]": "1", "a.b[1].c": "true", "a.d": "null", "a.f": "2", "a.g": "x"}


def test_the_announcement_shows_chart_values_and_the_apps_decisions(helm: str) -> None:
    parameters = json.dumps(
        [{"name": "values-files", "array": [f"/examples/shoong-delivery/values/{n}.yaml" for n in ("common", "order")]}]
    )
    announced = _announce(
        EXAMPLE / "apps" / "dev" / "order",
        helm,
        ARGOCD_APP_SOURCE_PATH="examples/shoong-delivery/apps/dev/order",
        ARGOCD_APP_PARAMETERS=parameters,
    )
    assert list(announced) == ["values-files", "set", "config"]
    assert announced["set"]["collectionType"] == "map"
    assert announced["set"]["map"]["image.repository"] == "registry.example.com/shoong/app"
    assert announced["set"]["map"]["ports[0].containerPort"] == "8080"
    assert announced["config"]["string"] == "chartshare.yaml"
    assert "stripped Namespace shoong (rules[0]: owned by dev-shoong-notification)" in announced["config"]["tooltip"]


def test_a_bad_parameter_is_shown_in_the_tab_instead_of_hiding_it(helm: str) -> None:
    announced = _announce(
        EXAMPLE / "apps" / "dev" / "order", helm, ARGOCD_APP_PARAMETERS='[{"name":"value-files","array":["x"]}]'
    )
    assert list(announced) == ["config"]
    assert "unknown parameter 'value-files'" in announced["config"]["tooltip"]


def _chart(root: Path, template: str, values: str = "boom: false\n") -> Path:
    chart = root / "charts" / "web"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 1.0.0\n")
    (chart / "values.yaml").write_text(values)
    (chart / "templates" / "cm.yaml").write_text(template)
    app = root / "apps" / "web"
    app.mkdir(parents=True)
    (app / "chartshare.yaml").write_text("apiVersion: chartshare/v1\nkind: ChartShare\nchart: ../../charts/web\n")
    (root / ".git").mkdir()
    return app


def test_a_failing_render_is_shown_in_the_config_tooltip(helm: str, tmp_path: Path) -> None:
    template = '{{ if .Values.boom }}{{ fail "boom went the chart" }}{{ end }}\nkind: ConfigMap\n'
    app = _chart(tmp_path, template)
    announced = _announce(
        app, helm, ARGOCD_APP_NAME="web", ARGOCD_APP_PARAMETERS='[{"name":"set","map":{"boom":"true"}}]'
    )
    assert announced["set"]["map"] == {"boom": "false"}, "the chart's default, not the app's override"
    tooltip = announced["config"]["tooltip"]
    assert "Cannot show this app's decisions: helm template failed" in tooltip
    assert "boom went the chart" in tooltip


def test_value_files_beside_the_chart_are_named_for_the_values_files_parameter(helm: str, tmp_path: Path) -> None:
    app = _chart(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n", "replicas: 1\n")
    (tmp_path / "charts" / "web" / "values-prod.yaml").write_text("replicas: 3\n")
    (app / "my-values.yaml").write_text("replicas: 2\n")
    announced = _announce(app, helm, ARGOCD_APP_NAME="web")
    assert announced["values-files"]["tooltip"].endswith(
        "Found beside the chart and the app: /charts/web/values-prod.yaml, my-values.yaml"
    )
    assert announced["set"]["map"] == {"replicas": "1"}
    assert "web: 1 rendered, 1 emitted" in announced["config"]["tooltip"]


def test_the_reduced_environment_is_enough(helm: str) -> None:
    """No KUBE_*, no ARGOCD_APP_NAMESPACE, no revision: what Argo CD sends to the announcement."""
    announced = _announce(EXAMPLE / "apps" / "dev" / "batch", helm, ARGOCD_APP_NAME="dev-shoong-batch")
    assert "dev-shoong-batch: " in announced["config"]["tooltip"]
    assert "Cannot show" not in announced["config"]["tooltip"]


def test_the_config_tooltip_names_the_post_render_fields(helm: str, tmp_path: Path) -> None:
    app = tmp_path / "app"
    (app / "templates").mkdir(parents=True)
    (app / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 1.0.0\n")
    (app / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n")
    (app / "chartshare.yaml").write_text(
        "apiVersion: chartshare/v1\nkind: ChartShare\ncommonAnnotations: {owner: platform}\n"
        'patches:\n  - target: {kind: ConfigMap}\n    patch: \'[{"op": "add", "path": "/data", "value": {}}]\'\n'
    )
    tooltip = _announce(app, helm, ARGOCD_APP_NAME="web")["config"]["tooltip"]
    assert "Post-render, before the rules (kustomize's fields and order): patches (1), commonAnnotations (1)" in tooltip
