"""Golden cases for `check`: each `cases/check/<case>/case.yaml` runs the real CLI and pins stdout, stderr and
the exit status, on helm 3 and helm 4.

`case.yaml` gives `args` (after `check`), optionally `cwd` (relative to the repository root; default the case
folder, which is then a small repository of its own), `exit`, `stderr_contains` (for messages that quote
helm, whose wording differs between majors: those lines are checked by substring, the rest of stderr exactly),
and `published` (charts of Helm repositories already in the chart cache, as a run that fetched them leaves it:
`{repository, chart, version, folder}` with `folder` relative to tests/; the cases run `--offline`, with no
network).
`expected.out` and `expected.err` hold the streams, with `{cwd}` standing for the working directory.
`UPDATE_GOLDEN=1 pytest tests/check/test_golden_check.py` rewrites them; review the diff before committing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_check_case(case: Path, helm: str, tmp_path: Path) -> None:
    spec = yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8")) or {}
    cwd = (ROOT / spec["cwd"]).resolve() if "cwd" in spec else case
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
