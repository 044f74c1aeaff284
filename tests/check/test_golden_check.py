"""Golden cases for `check`: each `cases/check/<case>/case.yaml` runs the real CLI and pins stdout, stderr and
the exit status, on helm 3 and helm 4.

`case.yaml` gives `args` (after `check`), optionally `cwd` (relative to the repository root; default the case
folder, which is then a small repository of its own), `exit`, `stderr_contains` (for messages that quote
helm, whose wording differs between majors: those lines are checked by substring, the rest of stderr exactly),
and `published` (charts of Helm repositories already in the chart cache, as a run that fetched them leaves it:
`{repository, chart, version, folder}` with `folder` relative to tests/; the cases run `--offline`, with no
network).
`repository` (for `--base`) builds a Git repository in a temporary folder and runs the case there: `fleet`
(a folder relative to the case) with the files of `base` is its first commit, `change` its second (each a
mapping of path to text, or to null to remove the file), and `shallow: true` clones it with depth 1.
`expected.out` and `expected.err` hold the streams, with `{cwd}` standing for the working directory.
`UPDATE_GOLDEN=1 pytest tests/check/test_golden_check.py` rewrites them; review the diff before committing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from fleet_builders import path_with_kubectl

from cmp.model import RemoteChart
from cmp.remote.store import chart_store
from conftest import ROOT, TESTS, run_cli

CASES = sorted(path for path in (TESTS / "cases" / "check").iterdir() if (path / "case.yaml").is_file())


def _expected(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _warm(cache: Path, published: dict[str, str]) -> None:
    """Put a chart in the chart cache the way a fetch does (published whole, read-only)."""
    chart = RemoteChart(published["repository"], published["chart"], str(published["version"]), "")
    folder = TESTS / published["folder"]
    chart_store(cache).publish(chart, lambda scratch: shutil.copytree(folder, scratch / "chart"))


def _git(cwd: Path, *args: str) -> None:
    identity = ["-c", "user.name=chartshare", "-c", "user.email=chartshare@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True)


def _repository(case: Path, spec: dict[str, Any], scratch: Path) -> Path:
    """The case's two-commit repository (the base revision, then the change)."""
    repo = scratch / "repo"
    shutil.copytree((case / spec["fleet"]).resolve(), repo)
    _git(repo, "init", "-q", "-b", "main")
    for commit in ("base", "change"):
        for name, text in (spec.get(commit) or {}).items():
            target = repo / name
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "--allow-empty", "-m", commit)
    if not spec.get("shallow"):
        return repo
    _git(scratch, "clone", "-q", "--depth", "1", repo.as_uri(), "shallow")
    return scratch / "shallow"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_check_case(case: Path, helm: str, tmp_path: Path) -> None:
    spec = yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8")) or {}
    cwd = (ROOT / spec["cwd"]).resolve() if "cwd" in spec else case
    if "repository" in spec:
        cwd = _repository(case, spec["repository"], tmp_path)
    env = {"CHARTSHARE_HELM": helm, "PATH": path_with_kubectl(), "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    for published in spec.get("published") or []:
        _warm(tmp_path / "cache", published)
    result = run_cli(["check", *[str(arg) for arg in spec.get("args", [])]], env=env, cwd=cwd)
    stdout = result.stdout.replace(str(cwd), "{cwd}")
    stderr = result.stderr.replace(str(cwd), "{cwd}")
    quoted = spec.get("stderr_contains") or []
    own_lines = "".join(line for line in stderr.splitlines(keepends=True) if not any(q in line for q in quoted))
    if os.environ.get("UPDATE_GOLDEN"):
        (case / "expected.out").write_text(stdout, encoding="utf-8")
        (case / "expected.err").write_text(own_lines, encoding="utf-8")
    assert "Traceback" not in result.stderr
    assert result.exit_code == spec.get("exit", 0), result.stderr
    if result.exit_code == 2:
        assert result.stdout == "", "bad input must print nothing on stdout"
    for text in quoted:
        assert text in stderr
    assert own_lines == _expected(case / "expected.err")
    assert stdout == _expected(case / "expected.out")
