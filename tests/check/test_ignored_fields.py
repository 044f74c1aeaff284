"""Warnings about a field follow Argo CD's diff, through the real CLI: the Application's ignoreDifferences and
argocd-cm's quiet them (an HPA's replicas stay flagged while a sync still resets them), and a chart whose
templates call time functions is flagged even when two renders agree."""

from __future__ import annotations

import json
from pathlib import Path

from cmp.check.analysis.ignored import application_rules, argocd_cm_rules, covered
from cmp.model import ClusterResourceId
from conftest import Result, run_cli

APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: https://git.example.com/fleet.git, path: charts/{chart}}}
  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}
{extra}"""
WEB = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {stamp: {{ now | date "2006" | quote }}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 3
"""
SECRET = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: {{ randAlphaNum 16 | quote }}}\n"
IGNORING = """  ignoreDifferences:
    - {group: apps, kind: Deployment, name: web, jsonPointers: [/spec/replicas]}
    - {group: apps, kind: Deployment, jqPathExpressions: [.metadata.annotations.stamp]}
"""
CM = """apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.ignoreDifferences.Secret: |
    jsonPointers: [/stringData/password]
"""


def _fleet(root: Path) -> Path:
    files = {
        "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
        "charts/web/templates/web.yaml": WEB,
        "charts/db/Chart.yaml": "apiVersion: v2\nname: db\nversion: 1.0.0\n",
        "charts/db/templates/secret.yaml": SECRET,
        "argocd/apps.yaml": "---\n".join(
            [
                APP.format(name="plain", chart="web", extra=""),
                APP.format(name="ignoring", chart="web", extra=IGNORING),
                APP.format(
                    name="respecting",
                    chart="web",
                    extra=IGNORING + "  syncPolicy: {syncOptions: [RespectIgnoreDifferences=true]}\n",
                ),
                APP.format(name="db", chart="db", extra=""),
            ]
        ),
        "argocd-cm.yaml": CM,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _warnings(result: Result) -> dict[tuple[str, str], str]:
    return {(w["app"], w["code"]): w["message"] for w in json.loads(result.stdout)["warnings"]}


def _check(root: Path, helm: str, *args: str) -> Result:
    return run_cli(
        ["check", str(root / "argocd"), "--repo-root", str(root), "--format", "json", *args],
        env={"CHARTSHARE_HELM": helm},
    )


def test_warnings_about_a_field_follow_ignore_differences(tmp_path: Path, helm: str) -> None:
    root = _fleet(tmp_path)
    result = _check(root, helm)
    assert result.exit_code == 0, result.stderr
    warnings = _warnings(result)
    assert sorted(warnings) == [
        ("db", "nondeterministic"),
        ("ignoring", "hpa-replicas"),
        ("plain", "hpa-replicas"),
        ("plain", "nondeterministic"),
    ]
    assert warnings["db", "nondeterministic"].startswith("renders differently on every run (stringData.password)")
    assert warnings["plain", "nondeterministic"].startswith(
        "its chart's templates call time or random functions"
    )  # `now | date "2006"` renders alike twice: flagged from the template
    assert "without RespectIgnoreDifferences=true" in warnings["ignoring", "hpa-replicas"]
    assert "ignoreDifferences:" in warnings["plain", "hpa-replicas"]
    with_cm = _check(root, helm, "--argocd-cm", str(root / "argocd-cm.yaml"))
    assert with_cm.exit_code == 0, with_cm.stderr
    assert ("db", "nondeterministic") not in _warnings(with_cm)  # argocd-cm ignores the Secret's password


def test_json_pointers_and_jq_paths_read_as_the_fields_warnings_name() -> None:
    deployment = ClusterResourceId("c", "apps", "Deployment", "ns", "web")
    rules = application_rules(
        [
            {"group": "apps", "kind": "Deployment", "jsonPointers": ["/metadata/annotations/helm.sh~1chart"]},
            {
                "group": "apps",
                "kind": "Deployment",
                "name": "web",
                "jqPathExpressions": ['.spec.template.spec.containers[0]["env"]'],
            },
            {"group": "apps", "kind": "Deployment", "jqPathExpressions": [".spec.containers[] | select(.name == 1)"]},
        ]
    )
    assert covered(rules, deployment, "metadata.annotations.helm.sh/chart")
    assert covered(rules, deployment, "spec.template.spec.containers[0].env[2].value")
    assert not covered(rules, deployment, "spec.template.spec.containers[1].env")
    assert not covered(rules, deployment, "spec.containers[0].name")  # a jq filter is never taken as a path
    assert not covered(rules, deployment._replace(name="other"), "spec.template.spec.containers[0].env")
    everything = argocd_cm_rules({"resource.customizations.ignoreDifferences.all": "jsonPointers: [/status]"})
    assert covered(everything, deployment, "status.replicas")
