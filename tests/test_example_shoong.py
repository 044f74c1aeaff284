"""The bundled example: five apps render one chart, and only the owner emits Namespace/shoong."""

from __future__ import annotations

import json

import pytest

from cmp import manifests
from conftest import ROOT, helm_template, run_cli

EXAMPLE = ROOT / "examples" / "shoong-delivery"
SERVICES = ("order", "kitchen", "delivery", "notification", "batch")
OWNER = "dev-shoong-notification"


def _parameters(service: str) -> str:
    files = [f"/examples/shoong-delivery/values/{name}.yaml" for name in ("common", service)]
    return json.dumps([{"name": "values-files", "array": files}])


def _generate(service: str, helm: str) -> tuple[str, str]:
    env = {
        "ARGOCD_APP_NAME": f"dev-shoong-{service}",
        "ARGOCD_APP_NAMESPACE": "shoong",
        "ARGOCD_APP_SOURCE_PATH": f"examples/shoong-delivery/apps/dev/{service}",
        "ARGOCD_APP_PARAMETERS": _parameters(service),
        "CHARTSHARE_HELM": helm,
    }
    result = run_cli(["generate"], env=env, cwd=EXAMPLE / "apps" / "dev" / service)
    assert result.exit_code == 0, result.stderr
    return result.stdout, result.stderr


@pytest.mark.parametrize("service", SERVICES)
def test_only_the_owner_emits_the_namespace_and_it_is_protected(service: str, helm: str) -> None:
    stdout, stderr = _generate(service, helm)
    namespaces = [r for r in manifests.parse(stdout) if r.kind == "Namespace"]
    if f"dev-shoong-{service}" == OWNER:
        (namespace,) = namespaces
        assert namespace.metadata["annotations"]["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"
        assert namespace.labels["istio-injection"] == "enabled"
        assert "protected Namespace shoong (rules[0]: owner)" in stderr
    else:
        assert namespaces == []
        assert f"stripped Namespace shoong (rules[0]: owned by {OWNER})" in stderr


@pytest.mark.parametrize("service", SERVICES)
def test_everything_else_is_byte_identical_to_helm(service: str, helm: str) -> None:
    stdout, _ = _generate(service, helm)
    raw = helm_template(
        helm,
        EXAMPLE / "charts" / "shoong-app",
        f"--name-template=dev-shoong-{service}",
        "--namespace=shoong",
        f"--values={EXAMPLE}/values/common.yaml",
        f"--values={EXAMPLE}/values/{service}.yaml",
        "--include-crds",
    )
    helm_documents = [doc for doc in manifests.split(raw) if "kind: Namespace" not in doc.text]
    ours = [r for r in manifests.parse(stdout) if r.kind != "Namespace"]
    assert [r.text for r in ours] == [doc.text for doc in helm_documents]
