"""Renders: claims from real helm renders, the worker pool, and renders that differ between runs."""

from __future__ import annotations

from pathlib import Path

from fleet_builders import app, claim

from cmp.check.fleet import inventory
from cmp.check.fleet.repos import Repositories
from cmp.check.sources import renders
from cmp.check.sources.plan import Job, plan
from cmp.model import ClusterResourceId
from conftest import TESTS, make_source

SOURCES = (TESTS / "cases" / "check" / "sources").resolve()


def test_renders_honour_ref_value_files_release_names_and_values_objects(helm: str) -> None:
    fleet = inventory.load([SOURCES / "argocd" / "rendered.yaml"], "argocd", Repositories(SOURCES))
    planned = plan(fleet.applications, Repositories(SOURCES), raw=False, helm=helm, timeout=30)
    done = renders.render_all(planned.jobs, workers=2)
    names = {r.job.app.name: sorted(c.id.name for c in r.emitted if c.id.kind == "ConfigMap") for r in done}
    assert names == {
        "configured": ["configured-bronze"],
        "team_simple": ["simple-silver"],  # valuesObject wins over values
        "tier-bronze": ["tier-bronze-bronze"],  # envs/bronze.yaml is missing and ignored
        "tier-gold": ["tier-gold-gold"],  # $config/envs/gold.yaml
    }


def test_a_claim_lands_on_its_apps_cluster_and_namespace_unless_cluster_scoped(helm: str) -> None:
    fleet = inventory.load([SOURCES / "argocd" / "rendered.yaml"], "argocd", Repositories(SOURCES))
    planned = plan(fleet.applications, Repositories(SOURCES), raw=False, helm=helm, timeout=30)
    done = renders.render_all(planned.jobs, workers=1)
    placed = {(c.id.kind, c.id.cluster, c.id.namespace) for r in done for c in r.emitted}
    assert ("ConfigMap", "https://kubernetes.default.svc", "team") in placed  # no namespace: the destination's
    assert {namespace for kind, _, namespace in placed if kind == "ClusterRole"} == {""}
    assert {namespace for kind, _, namespace in placed if kind == "ConfigMap"} == {
        "configured",
        "team",
        "tier-bronze",
        "tier-gold",
    }


def test_the_pool_returns_results_in_job_order_not_in_the_order_they_finish(helm: str) -> None:
    """The first job renders a chart; the others fail at once on a missing value file, so they finish first."""
    chart = SOURCES / "charts" / "simple"
    good = make_source(path="charts/simple")
    bad = make_source(path="charts/simple", types=("helm",), helm={"valueFiles": ["/missing.yaml"]})
    jobs = [Job(app("slow", "https://k", "ns", good), good, "helm", chart, SOURCES, False, helm, 30)]
    jobs += [
        Job(app(f"fast-{n}", "https://k", "ns", bad), bad, "helm", chart, SOURCES, False, helm, 30) for n in (1, 2, 3)
    ]
    seen: list[int] = []
    done = renders.render_all(jobs, workers=3, progress=lambda finished, total: seen.append(finished))
    assert [r.job for r in done] == jobs
    assert [r.error is None for r in done] == [True, False, False, False]
    assert seen == [1, 2, 3, 4]


def test_a_failed_render_names_the_application_and_its_source(helm: str) -> None:
    bad = make_source(path="charts/simple", types=("helm",), helm={"valueFiles": ["/missing.yaml"]})
    job = Job(app("a", "https://k", "ns", bad), bad, "helm", SOURCES / "charts" / "simple", SOURCES, False, helm, 30)
    error = renders.render_job(job).error
    assert error is not None and error.startswith("apps.yaml: Application a: spec.source: ")
    assert "missing.yaml" in error


def test_differences_name_the_fields_that_changed() -> None:
    first = [claim("Secret", "db", {"data": {"password": "a", "user": "u"}, "list": [1, 2]}, namespace="ns")]
    second = [claim("Secret", "db", {"data": {"password": "b", "user": "u"}, "list": [1, 3]}, namespace="ns")]
    assert list(renders.differences(first, second)) == [(first[0].id, ("data.password", "list[1]"))]


def test_differences_name_an_object_the_second_render_gave_another_name() -> None:
    first = [claim("Secret", "db-x1")]
    found = list(renders.differences(first, [claim("Secret", "db-y2")]))
    assert found == [(ClusterResourceId("https://k", "", "Secret", "", "db-x1"), (found[0][1][0],))]
    assert found[0][1][0].startswith("metadata.name")


def test_differences_name_at_most_five_fields() -> None:
    first = [claim("Secret", "db", {"data": {str(n): "a" for n in range(9)}})]
    second = [claim("Secret", "db", {"data": {str(n): "b" for n in range(9)}})]
    assert list(renders.differences(first, second)) == [(first[0].id, tuple(f"data.{n}" for n in range(5)))]


def test_a_stripped_claim_says_whether_the_rule_writes_the_strip_or_the_top_level_owner_made_it(
    tmp_path: Path, helm: str
) -> None:
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
    roles = "".join(
        f"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: {name}}}\n"
        for name in ("implied", "written", "unmatched")
    )
    (tmp_path / "chart" / "templates" / "roles.yaml").write_text(roles)
    (tmp_path / "chartshare.yaml").write_text(
        "apiVersion: chartshare/v1\nkind: ChartShare\nchart: chart\nowner: x\nallowEmpty: true\nrules:\n"
        "  - {match: {kind: ClusterRole, name: implied}, owner: x}\n"
        "  - {match: {kind: ClusterRole, name: written}, owner: x, others: strip}\n"
    )
    source = make_source(path=".")
    job = Job(app("y", "https://k", "ns", source), source, "chartshare", tmp_path, tmp_path, False, helm, 30)
    result = renders.render_job(job)
    assert result.error is None
    flags = {c.id.name: (c.accepted, c.top_level_owner) for c in result.stripped}
    assert flags == {"implied": (False, False), "written": (True, False), "unmatched": (False, True)}
