"""`check --shard I/N` and `check --merge`: the real CLI over real renders prints the single run's report from
the shards' documents; documents that are not every shard of one run are refused, naming the files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fleet_builders import app, claim, path_with_kubectl, rendered

from cmp.check import command
from cmp.check.fleet.applications import Fleet, Skip
from cmp.check.output.document import VERSION
from cmp.check.output.shards import Shard
from cmp.check.sources.plan import Plan
from cmp.check.sources.renders import Rendered
from conftest import ROOT, TESTS, run_cli

EXAMPLE = [
    "examples/shoong-delivery/argocd",
    "--repo",
    "https://git.example.com/platform/gitops.git=.",
    "--live",
    "examples/shoong-delivery/live/dev-cluster.yaml",
]
# examples/fleet with label tracking read from argocd-cm: generators, every source type, a note on stderr
FLEET = [
    "examples/fleet/argocd",
    "--repo-root",
    "examples/fleet",
    "--repo",
    "https://git.example.com/platform/fleet.git=examples/fleet",
    "--clusters",
    "examples/fleet/clusters/clusters.yaml",
    "--offline",
    "--live",
    "examples/fleet/live/prod-eu-labels.yaml",
    "--argocd-cm",
    "examples/fleet/live/argocd-cm-labels.yaml",
]
SHARED_COPIES = TESTS / "cases" / "check" / "shared-copies"


def _shards(
    tmp_path: Path, args: list[str], count: int, env: dict[str, str], cwd: Path, stderr: str = ""
) -> list[Path]:
    paths = []
    for index in range(1, count + 1):
        result = run_cli(["check", *args, "--shard", f"{index}/{count}"], env=env, cwd=cwd)
        assert (result.exit_code, result.stderr) == (0, stderr)
        path = tmp_path / f"shard-{index}.json"
        path.write_text(result.stdout, encoding="utf-8")
        paths.append(path)
    return paths


@pytest.mark.parametrize(
    ("cwd", "args", "count", "status"),
    [(ROOT, EXAMPLE, 3, 0), (SHARED_COPIES, ["argocd"], 2, 1), (ROOT, FLEET, 4, 1)],
    ids=["live", "conflicts", "fleet-labels"],
)
def test_the_merged_shards_print_the_single_runs_report_and_exit_status(
    tmp_path: Path, helm: str, cwd: Path, args: list[str], count: int, status: int
) -> None:
    env = {"CHARTSHARE_HELM": helm, "PATH": path_with_kubectl(), "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    single = run_cli(["check", *args], env=env, cwd=cwd)
    paths = [str(path) for path in _shards(tmp_path, args, count, env, cwd, single.stderr)]
    for output_format in ("text", "json", "junit"):
        single = run_cli(["check", *args, "--format", output_format], env=env, cwd=cwd)
        merged = run_cli(["check", "--merge", *reversed(paths), "--format", output_format], env=env, cwd=cwd)
        assert single.exit_code == status, single.stderr
        assert (merged.exit_code, merged.stderr, merged.stdout) == (status, single.stderr, single.stdout)


def test_a_shard_prints_a_versioned_claims_document_of_its_own_apps(tmp_path: Path, helm: str) -> None:
    env = {"CHARTSHARE_HELM": helm}
    documents = [json.loads(path.read_text()) for path in _shards(tmp_path, EXAMPLE, 2, env, ROOT)]
    assert [(d["format"], d["version"], d["shard"]) for d in documents] == [
        ("chartshare-check-claims", VERSION, {"index": 1, "count": 2}),
        ("chartshare-check-claims", VERSION, {"index": 2, "count": 2}),
    ]
    assert documents[0]["fleet"] == documents[1]["fleet"]
    names = [[entry["name"] for entry in d["applications"]] for d in documents]
    assert sorted(names[0] + names[1]) == [
        f"dev-shoong-{s}" for s in sorted(("order", "kitchen", "delivery", "notification", "batch"))
    ]
    tracked = [entry["object"]["metadata"]["name"] for d in documents for entry in d["live"]]
    assert tracked == ["shoong", "order"]  # the untracked ConfigMap of the dump matters to no shard


def test_every_shard_refuses_bad_input_of_any_app_alike() -> None:
    cases = TESTS / "cases" / "check" / "error-input"
    single = run_cli(["check", "argocd"], cwd=cases)
    for shard in ("1/2", "2/2"):
        result = run_cli(["check", "argocd", "--shard", shard], cwd=cases)
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", single.stderr)


# --- refusals, over documents written without helm ------------------------------------------------------------


def _fleet(*names: str) -> tuple[Fleet, Plan, list[Rendered]]:
    apps = [app(name) for name in names]
    renders = [rendered(application, claim("Namespace", "shared")) for application in apps]
    return Fleet(applications=apps, skipped=[Skip("x", "y")]), Plan([r.job for r in renders], [], []), renders


def _write(folder: Path, fleet: tuple[Fleet, Plan, list[Rendered]], shard: Shard, name: str = "") -> Path:
    loaded, planned, renders = fleet
    own = [r for r in renders if shard.holds(r.job.app.name)]
    path = folder / (name or f"s{shard.index}of{shard.count}.json")
    path.write_text(command.claims_document(shard, loaded, planned, own, None, raw=False), encoding="utf-8")
    return path


def _edited(path: Path, **fields: Any) -> Path:
    payload = json.loads(path.read_text())
    payload.update(fields)
    path.write_text(json.dumps(payload))
    return path


def test_shards_of_different_fleets_versions_or_counts_are_refused_naming_the_files(tmp_path: Path) -> None:
    one, other = _fleet("a", "b", "c"), _fleet("a", "b", "d")
    first = _write(tmp_path, one, Shard(1, 2))
    foreign = _write(tmp_path, other, Shard(2, 2), "other.json")
    assert command.merge_claims([first, foreign]).errors == [
        f"{foreign} and {first} are shards of different fleets (their Applications, plan, live objects, tracking or "
        "--raw differ): run every shard on one commit with the same arguments"
    ]
    three = _write(tmp_path, one, Shard(2, 3))
    assert command.merge_claims([first, three]).errors == [
        f"{three} is shard 2/3 and {first} is shard 1/2: every shard of a run splits the fleet into the same N"
    ]
    older = _edited(_write(tmp_path, one, Shard(2, 2)), chartshare="0.0.9")
    assert command.merge_claims([first, older]).errors == [
        f"{older}: written by chartshare 0.0.9, and this is chartshare 0.1.0: run every shard and the merge with "
        "one version"
    ]


def test_a_missing_or_repeated_shard_is_refused_naming_which(tmp_path: Path) -> None:
    fleet = _fleet("a", "b", "c", "d")
    first, third = _write(tmp_path, fleet, Shard(1, 4)), _write(tmp_path, fleet, Shard(3, 4))
    again = tmp_path / "again.json"
    again.write_bytes(first.read_bytes())
    assert command.merge_claims([first, third, again]).errors == [
        f"shard 1/4 is given more than once: {first}, {again}",
        "shards 2/4, 4/4 are missing: merge the documents of every shard 1 to 4",
    ]


def test_a_file_that_is_not_a_claims_document_is_refused_saying_what_it_is_not(tmp_path: Path) -> None:
    fleet = _fleet("a")
    good = _write(tmp_path, fleet, Shard(1, 1))
    text = tmp_path / "report.txt"
    text.write_text("chartshare check: 1 application, 0 conflicts, 0 warnings, 0 skipped\n")
    other = tmp_path / "other.json"
    other.write_text('{"applications": []}')
    newer = _edited(_write(tmp_path, fleet, Shard(1, 1), "newer.json"), version=VERSION + 1)
    broken = _edited(_write(tmp_path, fleet, Shard(1, 1), "broken.json"), applications=[{"name": "a"}])
    cut = tmp_path / "cut.json"
    cut.write_bytes(good.read_bytes()[:100])
    problems = command.merge_claims([text, other, newer, broken, cut, tmp_path / "absent.json"]).errors
    assert problems == [
        f"{text}: not JSON: a claims document is what `chartshare check --shard I/N` prints on stdout",
        f"{other}: not a claims document (what `chartshare check --shard I/N` prints on stdout)",
        f"{newer}: claims document version {VERSION + 1}; this chartshare (0.1.0) reads version {VERSION}",
        f"{broken}: applications[0].origin must be a string",
        f"{cut}: not JSON: a claims document is what `chartshare check --shard I/N` prints on stdout",
        f"{tmp_path / 'absent.json'}: cannot read: No such file or directory",
    ]


def test_refused_documents_exit_2_with_one_line_each_and_nothing_on_stdout(tmp_path: Path) -> None:
    fleet = _fleet("a", "b")
    first = _write(tmp_path, fleet, Shard(1, 2))
    result = run_cli(["check", "--merge", str(first)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("chartshare: error: shard 2/2 is missing: merge the documents of every shard 1 to 2\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--merge", "a.json", "--shard", "1/2"],
            "--merge takes --shard from the shards' claims documents: leave it out here",
        ),
        (["--merge", "a.json", "--raw"], "--merge takes --raw from the shards' claims documents: leave it out here"),
        (
            ["--merge", "a.json", "--live", "l.yaml"],
            "--merge takes --live from the shards' claims documents: leave it out here",
        ),
        (
            ["argocd", "--shard", "1/2", "--format", "json"],
            "--format is the report's: a shard prints its claims document; give --format to --merge",
        ),
        (["argocd", "--shard", "3"], "--shard '3' is not I/N (shard I of N, e.g. --shard 2/4)"),
    ],
)
def test_options_that_do_not_go_together_are_usage_errors(args: list[str], message: str) -> None:
    result = run_cli(["check", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"chartshare: error: {message}\n")


def test_an_app_in_two_shards_documents_is_refused_naming_both(tmp_path: Path) -> None:
    fleet = _fleet("a", "b", "c", "d")
    first, second = _write(tmp_path, fleet, Shard(1, 2)), _write(tmp_path, fleet, Shard(2, 2))
    theirs = json.loads(first.read_text())["applications"]
    ours = json.loads(second.read_text())["applications"]
    _edited(second, applications=ours + theirs[:1])
    assert command.merge_claims([first, second]).errors == [f"{second}: app {theirs[0]['name']} is in {first} too"]
