"""The pure analysis: which objects are conflicts, and how an app's sources add up."""

from __future__ import annotations

from typing import Any

from fleet_builders import analyse, app, claim, rendered
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp.check.analysis.claims import Claim
from cmp.check.fleet.applications import Skip
from cmp.check.sources.renders import claims_by_app
from cmp.model import ClusterResourceId
from conftest import make_source

CRD_GROUP = "apiextensions.k8s.io"


def _crd(version: str) -> Claim:
    return claim("CustomResourceDefinition", "w.example.io", {"spec": {"v": version}}, group=CRD_GROUP)


def test_the_same_object_on_two_clusters_is_no_conflict() -> None:
    apart = analyse(
        [
            rendered(app("a", "https://one"), claim("Namespace", "x")),
            rendered(app("b", "https://two"), claim("Namespace", "x")),
        ],
        [],
    )
    assert apart.conflicts == ()
    together = analyse(
        [
            rendered(app("a", "https://one"), claim("Namespace", "x")),
            rendered(app("b", "https://one"), claim("Namespace", "x")),
        ],
        [],
    )
    assert [(c.id, c.apps) for c in together.conflicts] == [
        (ClusterResourceId("https://one", "", "Namespace", "", "x"), ("a", "b"))
    ]


def test_crds_conflict_only_when_their_contents_differ() -> None:
    same = analyse([rendered(app("a"), _crd("1")), rendered(app("b"), _crd("1"))], [])
    assert same.conflicts == ()
    different = analyse([rendered(app("a"), _crd("1")), rendered(app("b"), _crd("2"))], [])
    assert [c.apps for c in different.conflicts] == [("a", "b")]


def test_an_app_claims_what_any_of_its_sources_renders_and_is_incomplete_when_one_is_skipped() -> None:
    two = app("a", "https://k", "ns", make_source(), make_source(label="sources[1]"))
    first, second = (
        rendered(two, claim("ConfigMap", "x", namespace="ns")),
        rendered(two, claim("Secret", "y", namespace="ns")),
    )
    apps = claims_by_app([first, second], [])
    assert sorted(key.kind for key in apps["a"].emitted) == ["ConfigMap", "Secret"]
    assert apps["a"].complete
    assert not claims_by_app([first], [Skip("a", "sources[1]: chart x comes from elsewhere")])["a"].complete


def test_the_renderer_column_says_chartshare_when_any_source_renders_with_it() -> None:
    report = analyse(
        [rendered(app("a"), claim("Namespace", "x")), rendered(app("b"), claim("Namespace", "y"), renderer="helm")], []
    )
    assert [(row.name, row.renderer, row.resources) for row in report.applications] == [
        ("a", "chartshare", 1),
        ("b", "helm", 1),
    ]


entries = st.lists(
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
@given(entries, st.randoms())
def test_a_conflict_is_exactly_an_object_two_apps_emit_on_one_cluster(
    found: list[tuple[str, str, tuple[str, str, str], str]], shuffle: Any
) -> None:
    clusters: dict[str, str] = {}
    by_app: dict[str, list[Claim]] = {}
    for name, cluster, (group, kind, namespace), object_name in found:
        clusters.setdefault(name, cluster)  # an app has one destination
        by_app.setdefault(name, []).append(claim(kind, object_name, group=group, namespace=namespace))
    renders = [rendered(app(name, clusters[name]), *claims) for name, claims in by_app.items()]
    expected: dict[ClusterResourceId, set[str]] = {}
    for name, claims in by_app.items():
        for one in claims:
            expected.setdefault(one.id._replace(cluster=clusters[name]), set()).add(name)
    wanted = sorted((key, tuple(sorted(names))) for key, names in expected.items() if len(names) >= 2)
    shuffle.shuffle(renders)
    assert [(c.id, c.apps) for c in analyse(renders, []).conflicts] == wanted
