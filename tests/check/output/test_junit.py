"""`check --format junit`: valid against the JUnit schema CI test reporters read (tests/check/junit.xsd), one
test case per Application failing once per conflict it is part of, and safe for any text a chart brings."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import pytest
import xmlschema
from fleet_builders import analyse, app, claim, path_with_kubectl, rendered

from cmp.check.analysis.findings import NONDETERMINISTIC, Finding
from cmp.check.fleet.applications import Skip
from cmp.check.output import junit
from conftest import ROOT, TESTS, run_cli

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent.parent / "junit.xsd")
CASES = TESTS / "cases" / "check"


def _cases(xml: str) -> dict[str, ElementTree.Element]:
    root = ElementTree.fromstring(xml)
    return {case.get("name", ""): case for case in root.iter("testcase")}


@pytest.mark.parametrize(
    ("cwd", "args"),
    [
        (CASES / "shared-copies", ["argocd"]),
        (CASES / "sources", ["argocd", "--offline"]),
        (
            ROOT,
            [
                "examples/shoong-delivery/argocd",
                *("--repo", "https://git.example.com/platform/gitops.git=."),
                *("--live", "examples/shoong-delivery/live/dev-cluster.yaml"),
            ],
        ),
    ],
    ids=["conflicts", "skipped", "prune-risks"],
)
def test_the_junit_report_of_a_real_fleet_validates_against_the_junit_schema(
    tmp_path: Path, helm: str, cwd: Path, args: list[str]
) -> None:
    env = {"CHARTSHARE_HELM": helm, "PATH": path_with_kubectl(), "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    as_json = run_cli(["check", *args, "--format", "json"], env=env, cwd=cwd)
    junit = run_cli(["check", *args, "--format", "junit"], env=env, cwd=cwd)
    assert (junit.exit_code, junit.stderr) == (as_json.exit_code, as_json.stderr)  # a note at most
    SCHEMA.validate(junit.stdout)
    payload = json.loads(as_json.stdout)
    cases = _cases(junit.stdout)
    rendered_apps = {entry["name"] for entry in payload["applications"]}
    skipped_only = {entry["app"] for entry in payload["skipped"]} - rendered_apps
    assert set(cases) == rendered_apps | skipped_only
    failed_renders = {entry["app"] for entry in payload["skipped"] if entry["reason"].startswith("render failed")}
    for name in rendered_apps:
        part_of = sum(name in conflict["apps"] for conflict in payload["conflicts"])
        assert len(cases[name].findall("failure")) == part_of + (name in failed_renders)
    assert all(cases[name].find("skipped") is not None for name in skipped_only - failed_renders)
    assert all(cases[name].find("failure") is not None for name in failed_renders)
    suite = ElementTree.fromstring(junit.stdout).find("testsuite")
    assert suite is not None
    failed = sum(1 for case in cases.values() if case.find("failure") is not None)
    assert (suite.get("tests"), suite.get("failures")) == (str(len(cases)), str(failed))


def test_text_xml_cannot_hold_is_replaced_and_markup_is_escaped() -> None:
    a, b = app('team<&">'), app("b")
    fleet = [rendered(a, claim("Namespace", "x")), rendered(b, claim("Namespace", "x"))]
    base = analyse(fleet, [Skip("set\x1b[31m", "plugin \x00 is not chartshare")])
    warning = Finding(a.name, NONDETERMINISTIC, base.conflicts[0].id, "renders \x07 differently")
    xml = junit.to_junit(replace(base, warnings=(warning,)))
    SCHEMA.validate(xml)
    cases = _cases(xml)
    assert set(cases) == {'team<&">', "b", "set\ufffd[31m"}
    out = cases['team<&">'].find("system-out")
    assert out is not None and "renders \ufffd differently" in (out.text or "")
    skipped = cases["set\ufffd[31m"].find("skipped")
    assert skipped is not None and skipped.get("message") == "plugin \ufffd is not chartshare"


def test_the_schema_refuses_a_suite_without_its_counts() -> None:
    """The schema is not vacuous: a suite that does not say how many tests failed is not JUnit readers' XML."""
    assert not SCHEMA.is_valid(
        '<testsuites><testsuite name="s" tests="1"><testcase name="a"/></testsuite></testsuites>'
    )


def test_each_failed_render_is_a_failure_and_only_an_unrenderable_source_is_skipped(tmp_path: Path, helm: str) -> None:
    app_yaml = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\n"
        "spec:\n  project: default\n  source: {{repoURL: https://git.example.com/r.git, path: {path}{extra}}}\n"
        "  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}\n"
    )
    files = {
        "argocd/apps.yaml": "---\n".join(
            app_yaml.format(name=name, path=path, extra=extra)
            for name, path, extra in [
                ("broken", "charts/broken", ""),
                ("missing", "charts/nowhere", ""),
                ("fine", "charts/fine", ""),
                ("vault", "charts/fine", ", plugin: {name: vault-v1}"),
            ]
        ),
        "charts/broken/Chart.yaml": "apiVersion: v2\nname: broken\nversion: 1.0.0\n",
        "charts/broken/templates/cm.yaml": '{{ fail "the chart refuses these values" }}\n',
        "charts/fine/Chart.yaml": "apiVersion: v2\nname: fine\nversion: 1.0.0\n",
        "charts/fine/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = run_cli(["check", "argocd", "--format", "junit"], env={"CHARTSHARE_HELM": helm}, cwd=tmp_path)
    assert result.exit_code == 1, result.stderr
    SCHEMA.validate(result.stdout)
    cases = _cases(result.stdout)
    failures = {name: [f.get("type") for f in case.iter("failure")] for name, case in cases.items()}
    assert failures == {"broken": ["render"], "fine": [], "missing": ["render"], "vault": []}
    broken = cases["broken"].find("failure")
    assert broken is not None and (broken.get("message") or "").startswith("render failed: ")
    assert "the chart refuses these values" in (broken.text or "")
    assert [name for name, case in cases.items() if case.find("skipped") is not None] == ["vault"]
    suite = ElementTree.fromstring(result.stdout).find("testsuite")
    assert suite is not None and (suite.get("failures"), suite.get("skipped")) == ("2", "1")
