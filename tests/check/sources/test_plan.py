"""The plan: which renderer Argo CD would pick for each source, and why a source is skipped."""

from __future__ import annotations

from typing import Any

import pytest
from fleet_builders import app

from cmp.check.fleet.applications import Source
from cmp.check.fleet.repos import Repositories
from cmp.check.sources import plan as planning
from cmp.model import RemoteChart
from conftest import TESTS, make_source

SOURCES = (TESTS / "cases" / "check" / "sources").resolve()


def _source(**fields: Any) -> Source:
    source: Source = make_source(**{"path": "apps/with-config", **fields})
    return source


@pytest.mark.parametrize(
    ("source", "renderer", "folder"),
    [
        (_source(), "chartshare", "apps/with-config"),  # discovery: chartshare.yaml in the path
        (_source(types=("plugin",)), "chartshare", "apps/with-config"),  # plugin: {}
        (_source(types=("plugin",), plugin={"name": "chartshare-v1"}), "chartshare", "apps/with-config"),
        (_source(types=("helm",)), "helm", "apps/with-config"),  # an explicit helm block always means plain helm
        (_source(path="charts/simple"), "helm", "charts/simple"),  # Chart.yaml
        (_source(path="/charts/simple/"), "helm", "charts/simple"),  # slashes around the path do not matter
    ],
)
def test_a_rendered_source_gets_the_renderer_argo_cd_would_pick(source: Source, renderer: str, folder: str) -> None:
    planned = planning.plan(
        [app("a", "https://k", "ns", source)], Repositories(SOURCES), raw=False, helm="helm", timeout=9
    )
    assert [(job.renderer, job.app_dir) for job in planned.jobs] == [(renderer, SOURCES / folder)]
    assert planned.skipped == planned.errors == []


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (_source(path="apps/kustomized", kustomize={"version": "v5.0.0"}), "source: kustomize.version (picks a"),
        (_source(path="nowhere"), "render failed: app path does not exist: source.path nowhere (repoURL"),
        (_source(path=None, chart="redis"), "source: chart redis: targetRevision 'main' is not one exact version"),
        (
            _source(path=None, chart="redis", target_revision="^19.0"),
            "source: chart redis: targetRevision '^19.0' is not one exact version; check renders a published chart",
        ),
        (
            _source(path=None, chart="redis", repo_url="git@git.example.com:r.git", target_revision="1.0.0"),
            "source: chart redis: repoURL git@git.example.com:r.git is neither a Helm repository nor an OCI",
        ),
        (_source(types=("plugin",), plugin={"name": "chartshare"}), "source: plugin name 'chartshare' matches no"),
        (_source(types=("plugin",), plugin={"name": "other-v1"}), "source: plugin other-v1 is not chartshare"),
        (_source(types=("plugin",), path="charts/simple"), "source: plugin {} but charts/simple holds no chartshare"),
        (
            _source(types=("helm",), helm={"fileParameters": [{"name": "a", "path": "b"}]}),
            "source: helm.fileParameters (helm --set-file) is not evaluated by check",
        ),
    ],
)
def test_a_source_check_cannot_render_is_skipped_with_the_reason(source: Source, reason: str) -> None:
    planned = planning.plan(
        [app("a", "https://k", "ns", source)], Repositories(SOURCES), raw=False, helm="helm", timeout=9
    )
    assert planned.jobs == [] and planned.errors == []
    assert [(skip.app, skip.reason[: len(reason)]) for skip in planned.skipped] == [("a", reason)]


@pytest.mark.parametrize(
    ("repo_url", "chart", "repository"),
    [
        ("https://charts.example.com/stable/", "redis", "https://charts.example.com/stable"),
        ("oci://registry.example.com/charts", "redis", "oci://registry.example.com/charts"),
        ("registry.example.com/charts", "redis", "oci://registry.example.com/charts"),  # Argo CD's Helm OCI form
        ("public.ecr.aws", "karpenter/redis", "oci://public.ecr.aws/karpenter"),  # the path in the chart name
        ("oci://registry.example.com", "/charts/redis", "oci://registry.example.com/charts"),
    ],
)
def test_a_helm_repository_source_renders_its_published_chart_at_its_target_revision(
    repo_url: str, chart: str, repository: str
) -> None:
    source = _source(path=None, chart=chart, repo_url=repo_url, target_revision="19.0.0")
    planned = planning.plan(
        [app("a", "https://k", "ns", source)], Repositories(SOURCES), raw=False, helm="helm", timeout=9
    )
    assert [(job.renderer, job.remote) for job in planned.jobs] == [
        ("helm", RemoteChart(repository, "redis", "19.0.0"))
    ]
    assert planned.skipped == planned.errors == []


def test_a_values_only_ref_source_is_neither_rendered_nor_skipped() -> None:
    source = _source(path=None, ref="config")
    planned = planning.plan(
        [app("a", "https://k", "ns", source)], Repositories(SOURCES), raw=False, helm="helm", timeout=9
    )
    assert planned.jobs == planned.skipped == planned.errors == []


def test_a_path_outside_the_repository_is_an_error_naming_the_app() -> None:
    planned = planning.plan(
        [app("a", "https://k", "ns", _source(path="../.."))], Repositories(SOURCES), raw=False, helm="", timeout=9
    )
    assert planned.errors == [
        f"apps.yaml: Application a: spec.source: path '../..' resolves outside the repository root {SOURCES}"
    ]
