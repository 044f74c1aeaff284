"""`--base` with `--shard`/`--merge`: each shard's claims document carries its apps at both revisions, and
the merge prints what a single run prints, byte for byte, with the same exit status (JSON: every field of
every entry; the text and JUnit reports are printed from the same report)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from conftest import TESTS, run_cli

FLEET = TESTS / "cases" / "check" / "_lifecycle-fleet"
# One change with every event: the Namespace handed from a to b, the ClusterRole left to no app, and c
# (no resources finalizer) deleted, leaving its ConfigMap behind.
RULES = """apiVersion: chartshare/v1
kind: ChartShare
chart: ../../charts/shared
rules:
  - match: {kind: Namespace, name: team}
    owner: b
  - match: {kind: ClusterRole, name: reader}
    owner: platform
"""


def _git(cwd: Path, *args: str) -> None:
    identity = ["-c", "user.name=chartshare", "-c", "user.email=chartshare@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True)


def test_the_merge_of_shards_with_base_prints_what_a_single_run_prints(tmp_path: Path, helm: str) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FLEET, repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "apps" / "shared" / "chartshare.yaml").write_text(RULES)
    (repo / "argocd" / "c.yaml").unlink()
    _git(repo, "commit", "-q", "-am", "change")
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    common = ["argocd", "--base", "HEAD~1", "--live", "live/annotation.yaml"]
    documents = []
    for index in (1, 2):
        shard = run_cli(["check", *common, "--shard", f"{index}/2"], env=env, cwd=repo)
        assert shard.exit_code == 0, shard.stderr
        documents.append(tmp_path / f"claims-{index}.json")
        documents[-1].write_text(shard.stdout)
    single = run_cli(["check", *common, "--format", "json"], env=env, cwd=repo)
    merged = run_cli(["check", "--merge", *map(str, documents), "--format", "json"], env=env, cwd=repo)
    assert single.exit_code == 1, single.stderr
    assert (merged.exit_code, merged.stdout) == (single.exit_code, single.stdout), merged.stderr
    events = [entry["event"] for entry in json.loads(single.stdout)["lifecycle"]]
    assert sorted(events) == ["app-deleted", "hand-over", "orphaned"]


def test_merge_refuses_base_of_its_own(tmp_path: Path) -> None:
    result = run_cli(["check", "--merge", str(tmp_path / "claims.json"), "--base", "HEAD~1"], cwd=tmp_path)
    assert result.exit_code == 2 and result.stdout == ""
    assert "--merge takes --base from the shards' claims documents" in result.stderr
