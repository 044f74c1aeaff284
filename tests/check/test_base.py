"""`check --base REV` reads the revision without writing the checkout, and fails closed when it cannot."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import xmlschema

from conftest import ROOT, TESTS, clean_env, run_cli

FLEET = TESTS / "cases" / "check" / "_lifecycle-fleet"


def _git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=chartshare", "-c", "user.email=chartshare@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FLEET, repo)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "argocd" / "gone.yaml").write_text((repo / "argocd" / "c.yaml").read_text().replace("name: c", "name: d"))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "argocd" / "gone.yaml").unlink()
    _git(repo, "commit", "-q", "-am", "change")
    return repo


def test_the_checkout_and_its_index_are_never_written(tmp_path: Path, helm: str) -> None:
    repo = _repository(tmp_path)
    (repo / "argocd" / "c.yaml").write_text((repo / "argocd" / "c.yaml").read_text() + "# edited, not committed\n")
    index = (repo / ".git" / "index").stat()
    status = _git(repo, "status", "--porcelain")
    result = run_cli(["check", "argocd", "--base", "HEAD~1"], env={"CHARTSHARE_HELM": helm}, cwd=repo)
    assert result.exit_code == 0, result.stderr
    assert "lifecycle entr" in result.stdout
    assert _git(repo, "status", "--porcelain") == status
    assert (repo / ".git" / "index").stat().st_mtime_ns == index.st_mtime_ns
    assert _git(repo, "worktree", "list").count("\n") == 1


def test_an_unreadable_revision_is_one_error_line(tmp_path: Path, helm: str) -> None:
    repo = _repository(tmp_path)
    blob = _git(repo, "rev-parse", "HEAD~1:argocd/gone.yaml").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # the revision's file is lost
    result = run_cli(["check", "argocd", "--base", "HEAD~1"], env={"CHARTSHARE_HELM": helm}, cwd=repo)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("chartshare: error: --base HEAD~1: cannot read the revision's files")


def test_a_folder_outside_git_is_one_error_line(tmp_path: Path, helm: str) -> None:
    shutil.copytree(FLEET, tmp_path / "plain")
    result = run_cli(["check", "argocd", "--base", "main"], env={"CHARTSHARE_HELM": helm}, cwd=tmp_path / "plain")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("chartshare: error: --base main: --repo-root ") and "not in a Git repository" in (
        result.stderr
    )
    assert result.stderr.count("\n") == 1


def test_the_lifecycle_junit_report_validates_against_the_junit_schema() -> None:
    """The golden case's report (an unsafe entry failing the cases of the apps it names, the deleted one's
    too) is what CI reporters read."""
    schema = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))
    schema.validate(TESTS / "cases" / "check" / "lifecycle-app-deleted-junit" / "expected.out")


def test_the_shoong_lifecycle_demo_prints_what_docs_lifecycle_md_shows(tmp_path: Path, helm: str) -> None:
    """examples/shoong-delivery/lifecycle-demo.sh, run for real: its output is the block in the docs."""
    chartshare = tmp_path / "chartshare"
    chartshare.write_text(f'#!/bin/sh\nexec {sys.executable} -m cmp "$@"\n')
    chartshare.chmod(0o755)
    env = clean_env({"CHARTSHARE": str(chartshare), "CHARTSHARE_HELM": helm, "PYTHONPATH": str(ROOT)})
    script = ROOT / "examples" / "shoong-delivery" / "lifecycle-demo.sh"
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    docs = (ROOT / "docs" / "lifecycle.md").read_text(encoding="utf-8")
    shown = docs.split("```text\n", 1)[1].split("```", 1)[0]
    assert done.stdout.rstrip("\n") == shown.rstrip("\n")
