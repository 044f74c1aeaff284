"""Golden case folders: each `cases/generate/<case>/` holds the inputs and the exact expected result.

`case.yaml` gives `args` (after `generate`), `env`, optionally `app_dir` (relative to tests/, default the case
folder) and `exit`; `expected.out` and `expected.err` hold stdout and stderr, with `{tests}` standing for the
tests folder. Every case runs on each helm of conftest's HELMS. From 4.2 helm keeps the newlines that end a
template's document (helm#31952), where helm 3 and 4.1 trim them: on those helms a case compares with
`expected.helm4.2.out` where there is one, which may differ from `expected.out` only in blank lines.
`UPDATE_GOLDEN=1 pytest tests/cli/test_golden.py` rewrites the expected files; review the diff before
committing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from conftest import TESTS, helm_keeps_document_ends, run_cli

CASES = sorted(path for path in (TESTS / "cases" / "generate").iterdir() if (path / "case.yaml").is_file())


def _expected(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_generate_case(case: Path, helm: str) -> None:
    spec = yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8")) or {}
    app_dir = TESTS / spec["app_dir"] if "app_dir" in spec else case
    env = {key: str(value) for key, value in (spec.get("env") or {}).items()}
    env.setdefault("CHARTSHARE_HELM", helm)
    args = ["generate", str(app_dir), "--repo-root", str(TESTS), *[str(arg) for arg in spec.get("args", [])]]
    result = run_cli(args, env=env)
    stderr = result.stderr.replace(str(TESTS), "{tests}")
    expected_out = case / "expected.out"
    if helm_keeps_document_ends(helm) and (case / "expected.helm4.2.out").exists():
        expected_out = case / "expected.helm4.2.out"
    if os.environ.get("UPDATE_GOLDEN"):
        if helm_keeps_document_ends(helm):
            expected_out = case / "expected.helm4.2.out"
            expected_out.unlink(missing_ok=True)
            if result.stdout != _expected(case / "expected.out"):
                expected_out.write_text(result.stdout, encoding="utf-8")
        else:
            expected_out.write_text(result.stdout, encoding="utf-8")
        (case / "expected.err").write_text(stderr, encoding="utf-8")
    assert "Traceback" not in result.stderr
    assert result.exit_code == spec.get("exit", 0), result.stderr
    if result.exit_code != 0:
        assert result.stdout == "", "a failed run must print nothing on stdout"
    assert stderr == _expected(case / "expected.err")
    assert result.stdout == _expected(expected_out)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_helm42_expectations_differ_only_in_blank_lines(case: Path) -> None:
    newer = _expected(case / "expected.helm4.2.out")
    if newer is None:
        pytest.skip("the same output on every helm")
    assert _blank_lines_dropped(newer) == _blank_lines_dropped(_expected(case / "expected.out") or "")


def _blank_lines_dropped(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]
