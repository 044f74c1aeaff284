"""`chartshare check` end to end: bad input is refused whole, with the bounds generate keeps, and the
command costs generate nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cmp.check.command import check_fleet
from conftest import ROOT, TESTS, run_cli


def test_generate_never_imports_the_check_modules() -> None:
    """check must not slow down generate, Argo CD's hot path (the pipeline included, which a miss loads)."""
    code = (
        "import sys, cmp.cli.launch, cmp.cli.app, cmp.generate.command, cmp.render.pipeline; "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('cmp'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert {"cmp.cli.app", "cmp.render.pipeline", "cmp.ownership.process"} <= set(loaded)
    assert [module for module in loaded if module.startswith("cmp.check")] == []


def test_bad_input_comes_back_as_error_lines_and_no_report() -> None:
    cases = TESTS / "cases" / "check" / "error-input"
    outcome = check_fleet(
        [cases / "argocd"],
        ROOT,
        raw=False,
        live=[cases / "absent.yaml"],
        control_plane_namespace="argocd",
        helm="helm",
        timeout=9,
        workers=1,
        progress=None,
        environ={},
    )
    assert (outcome.text, outcome.conflicts) == ("", 0)
    assert len(outcome.errors) == 7  # the name defined twice is a conflict, not bad input
    assert outcome.errors[-1] == f"--live {cases / 'absent.yaml'}: no such file"


def test_an_alias_bomb_in_an_application_manifest_is_refused_not_expanded(tmp_path: Path, helm: str) -> None:
    """A billion-laughs `valuesObject` loaded instantly (PyYAML shares aliases) and then hung `check` while
    it wrote the values out for helm; it is refused the way Kubernetes' reader refuses it."""
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
    (tmp_path / "chart" / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    laughs = ['  a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    laughs += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "app.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\n"
        "x-laughs:\n" + "\n".join(laughs) + "\nspec:\n"
        "  destination: {server: https://kubernetes.default.svc, namespace: x}\n"
        "  source: {repoURL: https://example.com/r.git, path: chart, helm: {valuesObject: {big: *a8}}}\n"
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = run_cli(["check", str(tmp_path / "apps"), "--repo-root", str(tmp_path), "--helm", helm])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"chartshare: error: {tmp_path}/apps/app.yaml: line 7: not valid YAML: "
        "document contains excessive aliasing (as Kubernetes' YAML reader says)\n"
    )


def test_an_applicationset_template_too_deep_to_render_is_bad_input_not_a_crash(tmp_path: Path) -> None:
    deep = "[" * 900 + "]" * 900  # libyaml reads it; rendering the template recursed past Python's limit
    (tmp_path / "appset.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s, namespace: argocd}\nspec:\n"
        "  generators: [{list: {elements: [{name: a}]}}]\n  template:\n    metadata: {name: '{{name}}'}\n"
        "    spec:\n      destination: {server: https://kubernetes.default.svc, namespace: x}\n"
        f"      source: {{repoURL: https://example.com/r.git, path: chart}}\n      x: {deep}\n"
    )
    result = run_cli(["check", str(tmp_path / "appset.yaml"), "--repo-root", str(tmp_path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"chartshare: error: {tmp_path}/appset.yaml: ApplicationSet s: spec.generators[0] (name=a): "
        "the template is nested too deeply to render\n"
    )


def _helm_app(tmp_path: Path, path: str) -> Path:
    (tmp_path / "apps").mkdir(exist_ok=True)
    (tmp_path / "apps" / "app.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\nspec:\n"
        "  destination: {server: https://kubernetes.default.svc, namespace: x}\n"
        f"  source: {{repoURL: https://example.com/r.git, path: {path}, helm: {{releaseName: a}}}}\n"
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path / "apps"


def test_a_helm_source_whose_chart_links_out_of_the_repository_is_refused(tmp_path: Path, helm: str) -> None:
    (tmp_path / "outside.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n")
    chart = tmp_path / "repo" / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
    (chart / "templates" / "leak.yaml").symlink_to(tmp_path / "outside.yaml")
    apps = _helm_app(tmp_path / "repo", "chart")
    result = run_cli(["check", str(apps), "--repo-root", str(tmp_path / "repo"), "--helm", helm])
    assert result.exit_code == 1 and "stolen" not in result.stdout  # the app's render failed; nothing rendered
    assert (
        "a: render failed: spec.source: chart: symlink chart/templates/leak.yaml resolved to outside" in result.stdout
    )


def test_a_source_path_that_is_a_symlink_loop_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    apps = _helm_app(tmp_path, "loop")
    result = run_cli(["check", str(apps), "--repo-root", str(tmp_path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert "path 'loop' is a symlink loop" in result.stderr and "internal error" not in result.stderr
