"""ApplicationSet generators expanded as Argo CD expands them: git, clusters, matrix, merge, selectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cmp.check.fleet.generators import clusters as cluster_generator
from cmp.check.fleet.generators.context import ClusterSecret, Context, Unevaluated
from cmp.check.fleet.generators.expand import parameter_sets
from cmp.check.fleet.generators.params import GeneratorError, flatten, sanitize_name
from cmp.check.fleet.repos import Repositories, normalize

URL = "https://git.example.com/org/fleet.git"
PROD = ClusterSecret("prod", "https://prod", None, {"env": "prod"}, {"team": "a"})
STAGING = ClusterSecret("staging", "https://staging", "p", {"env": "staging"}, {})


def _context(root: Path, *, go: bool = False, clusters: tuple[ClusterSecret, ...] | None = (PROD, STAGING)) -> Context:
    return Context(go, (), Repositories.build(root, [URL], ()), clusters)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for folder in ("apps/web", "apps/api", "apps/legacy", "apps/web/nested", ".hidden/x"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "apps/web/config.json").write_text('{"team": {"name": "shop"}, "replicas": 3}')
    (tmp_path / "apps/api/config.json").write_text("- {team: {name: core}}\n- {team: {name: edge}}\n")
    (tmp_path / "apps/legacy/config.json").write_text("{}")
    return tmp_path


def _git(**fields: Any) -> dict[str, Any]:
    return {"git": {"repoURL": URL, "revision": "main", **fields}}


def test_git_directories_match_like_go_path_match_and_an_exclude_wins(repo: Path) -> None:
    entry = _git(directories=[{"path": "apps/*"}, {"path": "apps/legacy", "exclude": True}])
    found = parameter_sets(entry, "g", _context(repo))
    assert [params["path"] for params in found] == ["apps/api", "apps/web"]  # `*` does not reach apps/web/nested
    assert found[1] == {
        "path": "apps/web",
        "path.basename": "web",
        "path.basenameNormalized": "web",
        "path[0]": "apps",
        "path[1]": "web",
    }


def test_git_directories_in_go_templates_give_the_path_map_and_a_prefix(repo: Path) -> None:
    entry = _git(directories=[{"path": "apps/web"}], pathParamPrefix="svc")
    (params,) = parameter_sets(entry, "g", _context(repo, go=True))
    assert params == {
        "svc": {
            "path": {"path": "apps/web", "basename": "web", "basenameNormalized": "web", "segments": ["apps", "web"]}
        }
    }


def test_git_files_are_flattened_one_set_per_object_with_the_file_path(repo: Path) -> None:
    entry = _git(files=[{"path": "apps/*/config.json"}, {"path": "apps/legacy/*", "exclude": True}])
    found = parameter_sets(entry, "g", _context(repo))
    assert [(p["path"], p.get("team.name")) for p in found] == [
        ("apps/api", "core"),
        ("apps/api", "edge"),
        ("apps/web", "shop"),
    ]
    assert found[2]["replicas"] == "3" and found[2]["path.filename"] == "config.json"


def test_the_git_revision_is_ignored_and_said_once(repo: Path) -> None:
    context = _context(repo)
    parameter_sets(_git(directories=[{"path": "apps/*"}]), "a", context)
    parameter_sets(_git(directories=[{"path": "apps/*"}]), "b", context)
    assert len(context.notes) == 1 and "revision" in next(iter(context.notes))


def test_a_git_path_that_escapes_the_repository_is_bad_input(repo: Path) -> None:
    with pytest.raises(GeneratorError, match="leaves the repository"):
        parameter_sets(_git(directories=[{"path": "../*"}]), "g", _context(repo))


def test_a_repo_url_no_checkout_stands_for_is_unevaluated(repo: Path) -> None:
    entry = {"git": {"repoURL": "https://elsewhere/x.git", "directories": [{"path": "*"}]}}
    with pytest.raises(Unevaluated, match=r"--repo https://elsewhere/x\.git=DIR"):
        parameter_sets(entry, "g", _context(repo))


def test_repository_urls_compare_across_schemes_users_and_suffixes() -> None:
    assert normalize("git@git.example.com:org/fleet.git") == normalize("https://user@git.example.com/org/fleet/")
    assert normalize("ssh://git@GIT.example.com/org/fleet") == "git.example.com/org/fleet"


def test_clusters_include_in_cluster_only_without_a_selector(tmp_path: Path) -> None:
    found = parameter_sets({"clusters": {}}, "g", _context(tmp_path))
    assert [params["name"] for params in found] == ["prod", "staging", "in-cluster"]
    assert found[0]["metadata.labels.env"] == "prod" and found[0]["metadata.annotations.team"] == "a"
    selected = parameter_sets({"clusters": {"selector": {"matchLabels": {"env": "prod"}}}}, "g", _context(tmp_path))
    assert [params["server"] for params in selected] == ["https://prod"]


def test_cluster_values_are_templated_from_the_clusters_own_parameters(tmp_path: Path) -> None:
    entry = {
        "clusters": {
            "selector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]},
            "values": {"where": "{{name}}-{{project}}"},
        }
    }
    (params,) = parameter_sets(entry, "g", _context(tmp_path))
    assert params["values.where"] == "staging-p"


def test_the_clusters_generator_without_cluster_secrets_is_unevaluated(tmp_path: Path) -> None:
    with pytest.raises(Unevaluated, match="--clusters FILE"):
        parameter_sets({"clusters": {}}, "g", _context(tmp_path, clusters=None))


def test_a_matrix_combines_every_pair_and_the_second_child_sees_the_first(repo: Path) -> None:
    entry = {
        "matrix": {
            "generators": [
                {"list": {"elements": [{"dir": "apps/web"}, {"dir": "apps/api"}]}},
                _git(files=[{"path": "{{dir}}/config.json"}]),
            ]
        }
    }
    found = parameter_sets(entry, "g", _context(repo))
    assert [(p["dir"], p["team.name"]) for p in found] == [
        ("apps/web", "shop"),
        ("apps/api", "core"),
        ("apps/api", "edge"),
    ]


def test_a_matrix_whose_children_set_one_key_differently_is_refused(tmp_path: Path) -> None:
    entry = {"matrix": {"generators": [{"list": {"elements": [{"a": "1"}]}}, {"list": {"elements": [{"a": "2"}]}}]}}
    with pytest.raises(GeneratorError, match="both generators set the parameter 'a'"):
        parameter_sets(entry, "g", _context(tmp_path))


def test_a_merge_overlays_later_sets_on_the_first_by_merge_key(tmp_path: Path) -> None:
    entry = {
        "merge": {
            "mergeKeys": ["name"],
            "generators": [
                {"clusters": {"values": {"tier": "low"}}},
                {"list": {"elements": [{"name": "prod", "values": {"tier": "high"}}, {"name": "nowhere"}]}},
            ],
        }
    }
    found = parameter_sets(entry, "g", _context(tmp_path))
    assert {p["name"]: p["values.tier"] for p in found} == {"prod": "high", "staging": "low", "in-cluster": "low"}


def test_a_merge_in_go_templates_merges_maps_deeply(tmp_path: Path) -> None:
    entry = {
        "merge": {
            "mergeKeys": ["name"],
            "generators": [
                {"list": {"elements": [{"name": "a", "v": {"x": 1, "y": 2}}]}},
                {"list": {"elements": [{"name": "a", "v": {"y": 3}}]}},
            ],
        }
    }
    assert parameter_sets(entry, "g", _context(tmp_path, go=True)) == [{"name": "a", "v": {"x": 1, "y": 3}}]


def test_matrix_and_merge_nest_two_levels_and_a_third_is_refused(tmp_path: Path) -> None:
    leaf = {"list": {"elements": [{"a": "1"}]}}
    other = {"list": {"elements": [{"b": "2"}]}}
    two = {"matrix": {"generators": [{"matrix": {"generators": [leaf, other]}}, {"list": {"elements": [{"c": "3"}]}}]}}
    assert parameter_sets(two, "g", _context(tmp_path)) == [{"a": "1", "b": "2", "c": "3"}]
    three = {"matrix": {"generators": [{"matrix": {"generators": [two, other]}}, other]}}
    with pytest.raises(GeneratorError, match="nested three levels deep"):
        parameter_sets(three, "g", _context(tmp_path))


def test_a_selector_filters_any_generators_parameter_sets_by_their_flattened_values(tmp_path: Path) -> None:
    entry = {
        "list": {"elements": [{"name": "a", "values": {"tier": "gold"}}, {"name": "b"}]},
        "selector": {"matchLabels": {"values.tier": "gold"}},
    }
    assert [p["name"] for p in parameter_sets(entry, "g", _context(tmp_path))] == ["a"]


def test_parameters_flatten_and_names_normalise_as_argo_cd_does() -> None:
    assert flatten({"a": {"b": [1, {"c": None}]}, "e": {}, "f": True}) == {
        "a.b.0": "1",
        "a.b.1.c": "<nil>",
        "f": "true",
    }
    assert sanitize_name("-Prod_EU.") == "prod-eu"


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, "must be a v1 Secret"),
        (
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "x", "labels": {cluster_generator.SECRET_TYPE_LABEL: "cluster"}},
                "data": {"name": "eA=="},
            },
            "data.server is missing",
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "x", "labels": {cluster_generator.SECRET_TYPE_LABEL: "cluster"}},
                "data": {"name": "%%"},
            },
            "not base64",
        ),
    ],
)
def test_a_malformed_cluster_secret_is_refused_naming_the_field(secret: dict[str, Any], message: str) -> None:
    with pytest.raises(GeneratorError, match=message):
        cluster_generator.cluster_secret(secret)


def test_a_secret_of_another_type_is_not_a_cluster() -> None:
    assert (
        cluster_generator.cluster_secret({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "repo"}}) is None
    )
