"""The CI recipes, tested where they can be: docs/ci.md's GitHub Actions workflow and GitLab CI file are valid
for those systems (their schemas, as check-jsonschema ships them), and their chartshare steps, run with the
matrix's values on a real fleet, merge into the single run's report and fail the build on its conflict;
.pre-commit-hooks.yaml passes pre-commit's own manifest check and its hook fails a commit of that fleet."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import xmlschema
import yaml

from conftest import ROOT, TESTS, clean_env, run_cli

CI_DOC = ROOT / "docs" / "ci.md"
FLEET = TESTS / "cases" / "check" / "shared-copies"  # a repository whose two apps share one conflict
JUNIT = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))
_BLOCK = re.compile(r"```yaml\n# (?P<name>\S+)\n(?P<body>.*?)```", re.S)
_EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def _recipe(name: str) -> tuple[str, dict[str, Any]]:
    """A YAML block of docs/ci.md by the file name on its first line: (text, parsed)."""
    for found in _BLOCK.finditer(CI_DOC.read_text(encoding="utf-8")):
        if found["name"] == name:
            return found["body"], yaml.safe_load(found["body"])
    raise AssertionError(f"docs/ci.md has no yaml block for {name}")


def _valid_for(schema: str, text: str, folder: Path) -> subprocess.CompletedProcess[str]:
    path = folder / "recipe.yml"
    path.write_text(text, encoding="utf-8")
    argv = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", f"vendor.{schema}", str(path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("name", "schema"),
    [
        (".github/workflows/chartshare-check.yml", "github-workflows"),
        (".gitlab-ci.yml", "gitlab-ci"),
        (".github/workflows/chartshare-report.yml", "github-workflows"),
        ("chartshare-comment.gitlab-ci.yml", "gitlab-ci"),
    ],
)
def test_the_ci_recipes_are_valid_for_their_ci_system(tmp_path: Path, name: str, schema: str) -> None:
    text, _ = _recipe(name)
    checked = _valid_for(schema, text, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = _valid_for(schema, text.replace("runs-on:", "runs_on:").replace("stage:", "stages:"), tmp_path)
    assert broken.returncode != 0, "the schema must refuse a misspelt key"


def _repository(tmp_path: Path) -> Path:
    repository = tmp_path / "repo"
    shutil.copytree(FLEET, repository)
    return repository


def _run(script: str, cwd: Path, env: Mapping[str, str]) -> int:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, timeout=300).returncode


def _env(helm: str, **extra: str) -> dict[str, str]:
    """A CI job's environment: chartshare on PATH, the recipe's FLEET pointing at the test fleet."""
    scripts = Path(sys.executable).parent
    env = clean_env({"CHARTSHARE_HELM": helm, "FLEET": "argocd", **extra})
    env["PATH"] = f"{scripts}{os.pathsep}{env.get('PATH', '')}"
    return env


def _check_steps(steps: list[dict[str, Any]], values: Mapping[str, str]) -> Iterator[str]:
    """The `run:` scripts of a job that call chartshare check, with `${{ ... }}` set from `values`."""
    for step in steps:
        script = step.get("run", "")
        if "chartshare check" in script:
            yield _EXPRESSION.sub(lambda found: values[found[1]], script)


def _single_junit(repository: Path, helm: str) -> str:
    single = run_cli(["check", "argocd", "--format", "junit"], env={"CHARTSHARE_HELM": helm}, cwd=repository)
    assert single.exit_code == 1
    return single.stdout


def test_the_github_workflow_merges_its_matrix_into_the_single_runs_report(tmp_path: Path, helm: str) -> None:
    _, workflow = _recipe(".github/workflows/chartshare-check.yml")
    repository = _repository(tmp_path)
    shard_job, merge_job = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    shards = [str(shard) for shard in shard_job["strategy"]["matrix"]["shard"]]
    env = _env(helm)
    for shard in shards:
        for script in _check_steps(shard_job["steps"], {"matrix.shard": shard, "strategy.job-total": str(len(shards))}):
            assert _run(script, repository, env) == 0
    statuses = [_run(script, repository, env) for script in _check_steps(merge_job["steps"], {})]
    assert statuses == [0, 1], "the JUnit step never fails the job; the last step fails it on the conflict"
    report = (repository / "chartshare-check.xml").read_text(encoding="utf-8")
    JUNIT.validate(report)
    assert report == _single_junit(repository, helm)


def test_the_gitlab_pipeline_merges_its_parallel_jobs_into_the_single_runs_report(tmp_path: Path, helm: str) -> None:
    _, pipeline = _recipe(".gitlab-ci.yml")
    repository = _repository(tmp_path)
    shard_job, merge_job = pipeline["chartshare-shard"], pipeline["chartshare-merge"]
    total = int(shard_job["parallel"])
    for index in range(1, total + 1):
        env = _env(helm, CI_NODE_INDEX=str(index), CI_NODE_TOTAL=str(total))
        assert [_run(line, repository, env) for line in shard_job["script"]] == [0]
    statuses = [_run(line, repository, _env(helm)) for line in merge_job["script"]]
    assert statuses == [0, 1]
    report = (repository / merge_job["artifacts"]["reports"]["junit"]).read_text(encoding="utf-8")
    assert report == _single_junit(repository, helm)


def test_the_pre_commit_hook_passes_pre_commits_manifest_check() -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_pre_commit_hook_fails_a_commit_of_a_fleet_with_a_conflict(tmp_path: Path, helm: str) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "chartshare-check" and hook["pass_filenames"] is False
    files = re.compile(hook["files"])
    assert all(files.search(name) for name in ("argocd/apps.yaml", "chart/templates/_helpers.tpl", "c/chart.tgz"))
    repository = _repository(tmp_path)
    fixed = repository / "argocd-fixed"
    fixed.rename(tmp_path / "fixed")  # the hook reads the whole checkout: one fleet in it at a time
    argv = [*shlex.split(hook["entry"]), *hook["args"]]
    assert argv[0] == "chartshare"
    result = run_cli(argv[1:], env={"CHARTSHARE_HELM": helm}, cwd=repository)
    assert result.exit_code == 1 and "1 conflict" in result.stdout, result.stderr
    shutil.rmtree(repository / "argocd")
    (tmp_path / "fixed").rename(repository / "argocd")
    assert run_cli(argv[1:], env={"CHARTSHARE_HELM": helm}, cwd=repository).exit_code == 0
