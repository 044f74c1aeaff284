"""Without chartshare.yaml, chartshare is Argo CD's native Helm source: the same stream helm prints."""

from __future__ import annotations

from pathlib import Path

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


def test_comment_only_documents_stay_where_helm_put_them(helm: str, tmp_path: Path) -> None:
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    (chart / "templates" / "b.yaml").write_text(
        "---\n# its own comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"
    )
    (chart / "templates" / "z.yaml").write_text("# only a comment\n")
    expected = helm_template(helm, chart, "--name-template=x", "--namespace=d", "--include-crds")
    assert expected.rstrip().endswith("# only a comment")
    result = run_cli(["generate", str(chart), "--app", "x", "-n", "d", "--helm", helm, "--repo-root", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected
