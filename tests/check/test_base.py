"""`check --base REV` reads the revision without writing the checkout, and fails closed when it cannot."""

from __future__ import annotations

import json
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


SHOONG = ROOT / "examples" / "shoong-delivery"
GITOPS_URL = "https://git.example.com/platform/gitops.git"
READER = """apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: shoong-reader
rules:
  - {apiGroups: [""], resources: [configmaps], verbs: [get, list]}
"""
READER_RULE = """  - match: {group: rbac.authorization.k8s.io, kind: ClusterRole, name: shoong-reader}
    owner: %s
"""


def _shoong(tmp_path: Path) -> Path:
    """The shoong fleet with ClusterRole shoong-reader (unprotected) owned by dev-shoong-batch, which has no
    resources finalizer; then one commit that removes dev-shoong-batch's Application and hands the
    ClusterRole to dev-shoong-kitchen."""
    repo = tmp_path / "gitops"
    example = repo / "examples" / "shoong-delivery"
    shutil.copytree(SHOONG, example, ignore=shutil.ignore_patterns("lifecycle-demo.sh"))
    (example / "charts" / "shoong-app" / "templates" / "clusterrole.yaml").write_text(READER)
    rules = sorted(example.glob("apps/dev/*/chartshare.yaml"))
    for path in rules:
        path.write_text(path.read_text() + READER_RULE % "dev-shoong-batch")
    batch = example / "argocd" / "dev-shoong-batch.yaml"
    batch.write_text(batch.read_text().replace("  finalizers:\n    - resources-finalizer.argocd.argoproj.io\n", ""))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "shoong-reader belongs to dev-shoong-batch")
    for path in rules:
        path.write_text(path.read_text().replace("owner: dev-shoong-batch", "owner: dev-shoong-kitchen"))
    _git(repo, "rm", "-q", "examples/shoong-delivery/argocd/dev-shoong-batch.yaml")
    _git(repo, "commit", "-q", "-am", "retire dev-shoong-batch; dev-shoong-kitchen owns shoong-reader")
    return repo


def test_a_removed_root_app_that_prunes_what_it_hands_over_is_unsafe_with_the_order_that_breaks(
    tmp_path: Path, helm: str
) -> None:
    """The issue's case: removing dev-shoong-batch's file deletes nothing by itself, but its Application keeps
    syncing its last spec, now at the new revision, where it strips shoong-reader: its sync prunes it
    unless dev-shoong-kitchen's came first."""
    repo = _shoong(tmp_path)
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    args = ["check", "examples/shoong-delivery/argocd", "--base", "HEAD~1"]
    mapped = run_cli([*args, "--repo", f"{GITOPS_URL}=.", "--format", "json"], env=env, cwd=repo)
    assert mapped.exit_code == 1, mapped.stderr
    entries = json.loads(mapped.stdout)["lifecycle"]
    assert [entry["name"] for entry in entries if not entry["safe"]] == ["shoong-reader"]
    [entry] = [entry for entry in entries if entry["name"] == "shoong-reader"]
    assert (entry["kind"], entry["name"], entry["event"], entry["safe"]) == (
        "ClusterRole",
        "shoong-reader",
        "app-deleted",
        False,
    )
    assert (entry["before"], entry["after"]) == (["dev-shoong-batch"], ["dev-shoong-kitchen"])
    assert [(step["app"], step["action"]) for step in entry["trace"]] == [
        ("dev-shoong-batch", "prune"),
        ("dev-shoong-kitchen", "sync"),
    ]
    assert "at the new revision and prunes it" in entry["trace"][0]["effect"]
    assert "creates it anew" in entry["trace"][1]["effect"]
    assert "argocd app delete dev-shoong-batch --cascade=false" in entry["fix"]
    text = run_cli([*args, "--repo", f"{GITOPS_URL}=."], env=env, cwd=repo)
    assert text.exit_code == 1
    assert "    1. dev-shoong-batch keeps syncing its last spec at the new revision and prunes it" in text.stdout
    assert "    2. dev-shoong-kitchen syncs at the new revision and creates it anew" in text.stdout
    _git(repo, "remote", "add", "origin", GITOPS_URL)  # the checkout's own remote: the same entries
    remote = run_cli([*args, "--format", "json"], env=env, cwd=repo)
    assert (remote.exit_code, remote.stdout) == (mapped.exit_code, mapped.stdout), remote.stderr


def test_a_mapped_repository_outside_the_root_is_read_as_it_is_and_said_once(tmp_path: Path, helm: str) -> None:
    repo = _repository(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    args = ["check", "argocd", "--base", "HEAD~1", "--repo", f"https://git.example.com/other.git={elsewhere}"]
    result = run_cli(args, env=env, cwd=repo)
    assert result.exit_code == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if "outside --repo-root" in line]
    assert len(said) == 1 and "read as they are now at both revisions" in said[0]


def test_a_deleted_app_check_did_not_render_at_the_base_is_listed_unjudged(tmp_path: Path, helm: str) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FLEET, repo)
    source = "    repoURL: https://git.example.com/fleet.git\n    path: apps/shared\n"
    chart = "    repoURL: https://charts.example.com\n    chart: shared\n    targetRevision: 0.1.0\n"
    text = (repo / "argocd" / "c.yaml").read_text()
    published = text.replace(source, chart).replace("    plugin: {name: chartshare-v1}\n", "")
    (repo / "argocd" / "c.yaml").write_text(published)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "argocd" / "c.yaml").unlink()
    _git(repo, "commit", "-q", "-am", "change")
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    args = ["check", "argocd", "--base", "HEAD~1", "--offline"]
    text = run_cli(args, env=env, cwd=repo)
    assert text.exit_code == 0, text.stderr
    lines = text.stdout.splitlines()
    at = lines.index("UNJUDGED (apps the change deletes that check did not render at the base revision)")
    assert lines[at + 1].startswith("  c: deleted by the change, and not rendered at the base revision (")
    assert lines[at + 2] == ""
    data = json.loads(run_cli([*args, "--format", "json"], env=env, cwd=repo).stdout)
    assert [entry["app"] for entry in data["unjudged"]] == ["c"]
    assert run_cli([*args, "--strict"], env=env, cwd=repo).exit_code == 1
