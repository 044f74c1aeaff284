"""Without chartshare.yaml, chartshare is Argo CD's native Helm source: the same stream helm prints."""

from __future__ import annotations

from conftest import TESTS, helm_template, run_cli

CHART = TESTS / "charts" / "shared"


def test_output_is_exactly_helm_template(helm: str) -> None:
    result = run_cli(
        [
            "generate",
            str(CHART),
            "--app",
            "team_web",
            "-n",
            "shoong",
            "--helm",
            helm,
            "--kube-version",
            "1.31.0",
            "--api-versions",
            "example.io/v1",
            "--api-versions",
            "example.io/v1/Widget",
        ],
    )
    assert result.exit_code == 0, result.stderr
    expected = helm_template(
        helm,
        CHART,
        "--name-template=web",
        "--namespace=shoong",
        "--kube-version=1.31.0",
        "--api-versions=example.io/v1",
        "--api-versions=example.io/v1/Widget",
        "--include-crds",
    )
    assert result.stdout == expected


def test_json_output_has_the_same_objects(helm: str) -> None:
    import json

    result = run_cli(["generate", str(CHART), "--app", "web", "-n", "shoong", "--helm", helm, "--output", "json"])
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["kind"] for o in objects][:2] == ["CustomResourceDefinition", "Namespace"]
