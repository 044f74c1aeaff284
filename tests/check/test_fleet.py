"""The fleet: which renderer Argo CD would use, claims from real renders, and the pure analysis."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID
from cmp.check import applications, fleet
from cmp.check.applications import Application, Skip, Source
from cmp.check.fleet import Claim, Job, Rendered
from cmp.check.report import progress_wanted
from cmp.helm import nondeterminism
from conftest import ROOT, TESTS, make_source

SOURCES = TESTS / "cases" / "check" / "sources"


def _source(**fields: Any) -> Source:
    source: Source = make_source(**{"path": "apps/with-config", **fields})
    return source


def _app(name: str, cluster: str = "https://k", namespace: str = "ns", *sources: Source) -> Application:
    return Application(name, f"apps.yaml: Application {name}", "default", cluster, namespace, sources or (_source(),))


# --- which renderer ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "choice"),
    [
        (_source(), "chartshare"),  # discovery: chartshare.yaml in the path
        (_source(types=("plugin",)), "chartshare"),  # plugin: {}
        (_source(types=("plugin",), plugin={"name": "chartshare-v1"}), "chartshare"),
        (_source(types=("helm",)), "helm"),  # an explicit helm block always means plain helm
        (_source(path="charts/simple"), "helm"),  # Chart.yaml
        (_source(path="apps/kustomized"), "skip"),
        (_source(path="apps/plain"), "skip"),
        (_source(path=None, chart="redis"), "skip"),
        (_source(types=("plugin",), plugin={"name": "chartshare"}), "skip"),
        (_source(path=None, ref="config"), None),  # values-only source: nothing to render, nothing to report
        (_source(types=("helm",), helm={"fileParameters": [{"name": "a", "path": "b"}]}), "skip"),
    ],
)
def test_the_renderer_is_the_one_argo_cd_would_pick(source: Source, choice: str | None) -> None:
    planned = fleet.plan([_app("a", "https://k", "ns", source)], SOURCES.resolve(), raw=False, helm="helm", timeout=9)
    found = [job.renderer for job in planned.jobs] + ["skip" for _ in planned.skipped]
    assert found == ([choice] if choice else [])


def test_a_path_outside_the_repository_is_an_error_naming_the_app() -> None:
    planned = fleet.plan(
        [_app("a", "https://k", "ns", _source(path="../.."))], SOURCES.resolve(), raw=False, helm="", timeout=9
    )
    assert planned.errors == [
        f"apps.yaml: Application a: spec.source: path '../..' resolves outside the repository root {SOURCES.resolve()}"
    ]


def test_renders_honour_ref_value_files_release_names_and_values_objects(helm: str) -> None:
    fleet_apps = applications.load([SOURCES / "argocd" / "rendered.yaml"], "argocd")
    planned = fleet.plan(fleet_apps.applications, SOURCES.resolve(), raw=False, helm=helm, timeout=30)
    renders = fleet.run(planned.jobs, workers=2)
    names = {r.job.app.name: sorted(c.name for c in r.emitted if c.kind == "ConfigMap") for r in renders}
    assert names == {
        "configured": ["configured-bronze"],
        "team_simple": ["simple-silver"],  # valuesObject wins over values
        "tier-bronze": ["tier-bronze-bronze"],  # envs/bronze.yaml is missing and ignored
        "tier-gold": ["tier-gold-gold"],  # $config/envs/gold.yaml
    }
    configmaps = [c for r in renders for c in r.emitted if c.kind == "ConfigMap"]
    assert {c.namespace for c in configmaps} == {"configured", "team", "tier-bronze", "tier-gold"}
    roles = [c for r in renders for c in r.emitted if c.kind == "ClusterRole"]
    assert {c.namespace for c in roles} == {""}


def test_the_pool_returns_results_in_job_order(helm: str) -> None:
    fleet_apps = applications.load([ROOT / "examples" / "shoong-delivery" / "argocd"], "argocd")
    planned = fleet.plan(fleet_apps.applications, ROOT, raw=True, helm=helm, timeout=30)
    seen: list[int] = []
    renders = fleet.run(planned.jobs, workers=3, progress=lambda done, total: seen.append(done))
    assert [r.job for r in renders] == planned.jobs
    assert sorted(seen) == [1, 2, 3, 4, 5]


# --- nondeterministic charts ------------------------------------------------------------------------------


def test_random_functions_are_found_in_actions_of_packed_subcharts(tmp_path: Path) -> None:
    (tmp_path / "plain" / "templates").mkdir(parents=True)
    (tmp_path / "plain" / "templates" / "a.yaml").write_text("# now and then\nkind: ConfigMap\n")
    assert not nondeterminism.uses_nondeterministic_functions(tmp_path / "plain", ())
    data = b"password: {{ randAlphaNum 16 }}\n"
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as archive:
        info = tarfile.TarInfo("sub/templates/secret.yaml")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    (tmp_path / "packed" / "charts").mkdir(parents=True)
    (tmp_path / "packed" / "charts" / "sub-1.0.0.tgz").write_bytes(packed.getvalue())
    assert nondeterminism.uses_nondeterministic_functions(tmp_path / "packed", ())
    values = tmp_path / "values.yaml"
    values.write_text("token: '{{ uuidv4 }}'\n")
    assert nondeterminism.uses_nondeterministic_functions(tmp_path / "plain", (values,))


def test_differences_name_the_fields_that_changed() -> None:
    first = [Claim("", "Secret", "ns", "db", {"data": {"password": "a", "user": "u"}, "list": [1, 2]})]
    second = [Claim("", "Secret", "ns", "db", {"data": {"password": "b", "user": "u"}, "list": [1, 3]})]
    assert list(fleet.differences(first, second)) == [("Secret", "db", ("data.password", "list[1]"))]


# --- analysis ---------------------------------------------------------------------------------------------


def _rendered(
    app: Application, *claims: Claim, stripped: tuple[Claim, ...] = (), renderer: str = "chartshare"
) -> Rendered:
    job = Job(app, app.sources[0], renderer, Path("."), Path("."), False, "helm", 9)
    return Rendered(job, claims, stripped)


NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shoong"}}


def _namespace(obj: dict[str, Any] = NAMESPACE, reason: str = "") -> Claim:
    return Claim("", "Namespace", "", "shoong", obj, reason)


def _crd(version: str) -> Claim:
    return Claim("apiextensions.k8s.io", "CustomResourceDefinition", "", "w.example.io", {"spec": {"v": version}})


def test_the_same_object_on_two_clusters_is_no_conflict() -> None:
    report = fleet.analyse(
        [_rendered(_app("a", "https://one"), _namespace()), _rendered(_app("b", "https://two"), _namespace())], []
    )
    assert report.conflicts == ()
    report = fleet.analyse(
        [_rendered(_app("a", "https://one"), _namespace()), _rendered(_app("b", "https://one"), _namespace())], []
    )
    assert [(c.cluster, c.kind, c.apps) for c in report.conflicts] == [("https://one", "Namespace", ("a", "b"))]


def test_crds_conflict_only_when_their_contents_differ() -> None:
    same = fleet.analyse([_rendered(_app("a"), _crd("1")), _rendered(_app("b"), _crd("1"))], [])
    assert same.conflicts == ()
    different = fleet.analyse([_rendered(_app("a"), _crd("1")), _rendered(_app("b"), _crd("2"))], [])
    assert [c.apps for c in different.conflicts] == [("a", "b")]


def _live(options: str | None = None, tracked_by: str = "a") -> dict[str, Any]:
    annotations = {TRACKING_ID: f"{tracked_by}:/Namespace:shoong/shoong"}
    if options:
        annotations["argocd.argoproj.io/sync-options"] = options
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shoong", "annotations": annotations}}


def _handover_fleet() -> list[Rendered]:
    return [
        _rendered(_app("a"), stripped=(_namespace(reason="rules[0]: owned by b"),)),
        _rendered(
            _app("b"),
            _namespace({**NAMESPACE, "metadata": {"name": "shoong", "annotations": {SYNC_OPTIONS: "Prune=false"}}}),
        ),
    ]


def test_an_app_that_stops_emitting_a_tracked_object_would_prune_it() -> None:
    report = fleet.analyse(_handover_fleet(), [], [_live("ServerSideApply=true")])
    assert report.prune_risks is not None
    assert [(r.app, r.kind, r.name, r.fix) for r in report.prune_risks] == [
        (
            "a",
            "Namespace",
            "shoong",
            "kubectl annotate namespace/shoong "
            "argocd.argoproj.io/sync-options=ServerSideApply=true,Prune=false --overwrite",
        )
    ]
    assert [w.message for w in report.warnings] == [
        "the live Namespace shoong is tracked by a, which no longer emits it: annotate it first (see PRUNE RISKS), "
        "then sync b to take it over"
    ]


@pytest.mark.parametrize("options", ["Prune=false", "Prune=confirm,ServerSideApply=true"])
def test_prune_false_or_confirm_on_the_live_object_makes_it_safe(options: str) -> None:
    report = fleet.analyse(_handover_fleet(), [], [_live(options)])
    assert report.prune_risks == ()
    assert "nothing is deleted" in report.warnings[0].message


def test_no_prune_risk_is_claimed_for_an_app_with_a_skipped_source() -> None:
    report = fleet.analyse(_handover_fleet(), [Skip("a", "sources[1]: chart x comes from elsewhere")], [_live()])
    assert report.prune_risks == ()


def test_a_tracking_id_copied_onto_another_object_is_ignored() -> None:
    live = _live()
    live["metadata"]["name"] = "copy"
    assert fleet.tracking(live) is None
    assert fleet.tracking({"metadata": {"annotations": {TRACKING_ID: "broken"}}}) is None
    assert fleet.tracking(_live(tracked_by="team_a")) == ("team_a", fleet.ResourceId("", "Namespace", "", "shoong"))


def test_the_annotate_command_names_namespaced_objects_by_kind_group_and_namespace() -> None:
    resource = fleet.ResourceId("apps", "Deployment", "shoong", "order")
    assert fleet.annotate_command({}, resource) == (
        "kubectl annotate -n shoong deployment.apps/order argocd.argoproj.io/sync-options=Prune=false --overwrite"
    )


@pytest.mark.parametrize(
    ("tty", "json_output", "env", "jobs", "wanted"),
    [
        (True, False, {}, 20, True),
        (False, False, {}, 20, False),
        (True, True, {}, 20, False),
        (True, False, {"CI": "true"}, 20, False),
        (True, False, {"CI": "false"}, 20, True),
        (True, False, {}, 3, False),
    ],
)
def test_a_progress_bar_only_for_a_person_at_a_terminal(
    tty: bool, json_output: bool, env: dict[str, str], jobs: int, wanted: bool
) -> None:
    assert progress_wanted(tty, json_output, env, jobs) is wanted


def test_generate_never_imports_the_check_modules() -> None:
    """check must not slow down generate, Argo CD's hot path."""
    code = "import sys, cmp.cli; print(' '.join(sorted(m for m in sys.modules if m.startswith('cmp'))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert not {
        "cmp.check.applications",
        "cmp.check.appsets",
        "cmp.check.sources",
        "cmp.check.fleet",
        "cmp.check.report",
    } & set(loaded)


def test_objects_of_odd_shapes_do_not_break_the_warnings() -> None:
    odd = [
        Claim("autoscaling", "HorizontalPodAutoscaler", "ns", "h", {"spec": "scale me"}),
        Claim("apps", "Deployment", "ns", "d", {"spec": ["x"], "metadata": "m"}),
        Claim(
            "admissionregistration.k8s.io", "MutatingWebhookConfiguration", "", "w", {"metadata": {"annotations": 1}}
        ),
    ]
    report = fleet.analyse(
        [_rendered(_app("a"), *odd)], [], [{"apiVersion": "v1", "kind": "X", "metadata": {"annotations": "x"}}]
    )
    assert report.warnings == ()
    assert report.prune_risks == ()


claims = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "team_d"]),
        st.sampled_from(["https://one", "https://two"]),
        st.sampled_from(
            [("", "Namespace", ""), ("rbac.authorization.k8s.io", "ClusterRole", ""), ("", "Service", "ns")]
        ),
        st.sampled_from(["x", "y"]),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(claims, st.randoms())
def test_a_conflict_is_exactly_an_object_two_apps_emit_on_one_cluster(
    entries: list[tuple[str, str, tuple[str, str, str], str]], shuffle: Any
) -> None:
    clusters: dict[str, str] = {}
    by_app: dict[str, list[Claim]] = {}
    for app, cluster, (group, kind, namespace), name in entries:
        cluster = clusters.setdefault(app, cluster)  # an app has one destination
        by_app.setdefault(app, []).append(Claim(group, kind, namespace, name, {"kind": kind}))
    renders = [_rendered(_app(app, clusters[app]), *found) for app, found in by_app.items()]
    expected: dict[tuple[str, ...], set[str]] = {}
    for app, found in by_app.items():
        for claim in found:
            expected.setdefault((clusters[app], *claim.key), set()).add(app)
    wanted = sorted((*key, tuple(sorted(apps))) for key, apps in expected.items() if len(apps) >= 2)
    shuffle.shuffle(renders)
    report = fleet.analyse(renders, [])
    assert [(c.cluster, c.group, c.kind, c.namespace, c.name, c.apps) for c in report.conflicts] == wanted
