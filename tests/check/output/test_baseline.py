"""`--baseline` / `--write-baseline`: today's findings recorded, known ones pass, new ones fail; a finding's
identity is its code, object and apps, never a line or a message, so it holds across runs and shards."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fleet_builders import analyse, app, claim, rendered

from cmp.check import command
from cmp.check.analysis import identity
from cmp.check.analysis.findings import Finding
from cmp.check.output import baseline
from conftest import ROOT, run_cli

RAW = ["check", "examples/shoong-delivery/argocd", "--repo", "https://git.example.com/platform/gitops.git=.", "--raw"]


def _report_with_two_conflicts() -> command.Report:
    a, b, c = app("a"), app("b"), app("c")
    return analyse(
        [
            rendered(a, claim("Namespace", "shoong"), claim("ClusterRole", "x", group="rbac.authorization.k8s.io")),
            rendered(b, claim("Namespace", "shoong"), claim("ClusterRole", "x", group="rbac.authorization.k8s.io")),
            rendered(c, claim("Namespace", "shoong")),
        ],
        [],
    )


def test_a_written_baseline_reads_back_as_every_finding_of_the_run() -> None:
    report = _report_with_two_conflicts()
    known = baseline.read(baseline.write(report), "b.json")
    assert known == set(identity.baselined(report))
    assert command.failures(replace(report, known=known)) == 0
    assert command.failures(report) == 2


def test_a_conflict_the_baseline_lacks_fails_and_one_it_holds_passes() -> None:
    report = _report_with_two_conflicts()
    known = frozenset({identity.of_conflict(report.conflicts[0])})
    assert command.failures(replace(report, known=known)) == 1


def test_another_app_joining_a_known_conflict_is_a_new_finding() -> None:
    report = _report_with_two_conflicts()
    first = report.conflicts[0]
    grown = replace(first, apps=(*first.apps, "d"))
    assert identity.of_conflict(grown) != identity.of_conflict(first)


def test_a_warnings_identity_ignores_its_message() -> None:
    key = _report_with_two_conflicts().conflicts[0].id
    one, other = Finding("a", "nobody-emits", key, "one text"), Finding("a", "nobody-emits", key, "another")
    assert identity.of_warning(one) == identity.of_warning(other)
    assert identity.of_warning(one).fingerprint == identity.of_warning(other).fingerprint


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[", "b.json: not JSON"),
        ("{}", 'b.json: not a chartshare baseline (no "format": "chartshare-check-baseline")'),
        ('{"format": "chartshare-check-baseline", "version": 9}', "b.json: baseline version 9"),
        ('{"format": "chartshare-check-baseline", "version": 1, "findings": [{"code": 1}]}', "b.json: findings[0]"),
    ],
)
def test_a_file_that_is_not_a_baseline_is_refused_naming_it(text: str, problem: str) -> None:
    with pytest.raises(baseline.NotBaseline) as refused:
        baseline.read(text, "b.json")
    assert str(refused.value).startswith(problem)


def test_a_baseline_written_today_passes_the_same_run_and_a_new_conflict_fails(tmp_path: Path, helm: str) -> None:
    env = {"CHARTSHARE_HELM": helm}
    recorded = tmp_path / "baseline.json"
    written = run_cli([*RAW, "--write-baseline", str(recorded)], env=env)
    assert written.exit_code == 0, written.stderr
    findings = json.loads(recorded.read_text())["findings"]
    assert [(f["code"], f["kind"], f["name"]) for f in findings] == [("conflict", "Namespace", "shoong")]
    again = run_cli([*RAW, "--baseline", str(recorded), "--format", "json"], env=env)
    assert again.exit_code == 0, again.stderr
    assert [c.get("known") for c in json.loads(again.stdout)["conflicts"]] == [True]
    text = run_cli([*RAW, "--baseline", str(recorded)], env=env)
    assert "(known: in the baseline)" in text.stdout
    assert text.stdout.rstrip().endswith("1 known (in the baseline)")
    findings[0]["apps"] = findings[0]["apps"][1:]  # the baseline knew one app fewer: today's conflict is new
    recorded.write_text(json.dumps({"format": baseline.FORMAT, "version": 1, "findings": findings}))
    new = run_cli([*RAW, "--baseline", str(recorded), "--format", "json"], env=env)
    assert new.exit_code == 1
    assert [c.get("known") for c in json.loads(new.stdout)["conflicts"]] == [None]


def test_a_broken_baseline_is_one_line_on_stderr_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text("{}")
    result = run_cli([*RAW, "--baseline", str(tmp_path / "b.json")])
    assert (result.exit_code, result.stdout) == (2, "")
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        f'chartshare: error: --baseline {tmp_path / "b.json"}: not a chartshare baseline (no "format": '
        '"chartshare-check-baseline"): write it with check --write-baseline'
    ]


def test_report_files_come_from_the_run_that_prints_stdout(tmp_path: Path, helm: str) -> None:
    out = tmp_path / "report.json"
    result = run_cli([*RAW, "--report", f"json={out}"], env={"CHARTSHARE_HELM": helm})
    assert result.exit_code == 1
    alone = run_cli([*RAW, "--format", "json"], env={"CHARTSHARE_HELM": helm})
    assert out.read_text() == alone.stdout
    assert result.stdout == run_cli(RAW, env={"CHARTSHARE_HELM": helm}).stdout


@pytest.mark.parametrize(
    ("flag", "problem"),
    [
        ("json", "--report 'json' is not FORMAT=FILE"),
        ("yaml=x", "--report yaml=x: the format must be one of text, json, junit"),
    ],
)
def test_a_report_flag_that_is_not_format_equals_file_is_refused(flag: str, problem: str) -> None:
    result = run_cli([*RAW, "--report", flag])
    assert (result.exit_code, result.stdout) == (2, "")
    assert problem in result.stderr


def test_the_merge_writes_the_reports_and_reads_the_baseline_as_a_single_run(tmp_path: Path, helm: str) -> None:
    env = {"CHARTSHARE_HELM": helm}
    shards = []
    for index in (1, 2):
        shard = run_cli([*RAW, "--shard", f"{index}/2"], env=env)
        assert shard.exit_code == 0, shard.stderr
        shards.append(tmp_path / f"shard-{index}.json")
        shards[-1].write_text(shard.stdout)
    recorded = tmp_path / "baseline.json"
    assert run_cli([*RAW, "--write-baseline", str(recorded)], env=env).exit_code == 0
    merged = tmp_path / "merged.json"
    args = ["check", "--merge", *map(str, shards), "--baseline", str(recorded), "--report", f"json={merged}"]
    result = run_cli(args, cwd=ROOT)
    assert result.exit_code == 0, result.stderr
    assert json.loads(merged.read_text())["conflicts"][0]["known"] is True
    refused = run_cli([*RAW, "--shard", "1/2", "--report", f"json={merged}"], env=env)
    assert refused.exit_code == 2 and "--report is the report's" in refused.stderr


def test_a_report_that_cannot_be_written_is_one_line_and_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "report.md"
    result = run_cli([*RAW, "--report", f"markdown={target}"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        f"chartshare: error: {target}: cannot write the report: No such file or directory; give a file in a "
        "folder that exists"
    ]
