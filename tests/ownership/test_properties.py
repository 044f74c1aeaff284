"""Invariants of the ownership pipeline over generated fleets, resources and rule sets."""

from __future__ import annotations

import copy
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cmp import goyaml, manifests
from cmp.errors import RuleError
from cmp.manifests import Resource
from cmp.model import App
from cmp.ownership import rules
from cmp.ownership.process import process

CLUSTER_KINDS = (
    ("v1", "Namespace"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("storage.k8s.io/v1", "StorageClass"),
)
NAMES = ("shoong", "reader", "high", "fast", "shared")
APPS = ("dev-a", "dev-b", "dev-c", "team_dev-d", "prod-a")

objects = st.lists(
    st.tuples(st.sampled_from(CLUSTER_KINDS), st.sampled_from(NAMES)), min_size=1, max_size=8, unique=True
)
rule_entries = st.lists(
    st.tuples(
        st.sampled_from(["Namespace", "ClusterRole", "PriorityClass", "StorageClass", "Cluster*", "*"]),
        st.sampled_from(["*", *NAMES, "sh*"]),
        st.sampled_from(APPS),
    ),
    max_size=4,
)


def _stream(cluster_objects: list[tuple[tuple[str, str], str]]) -> str:
    documents = [
        f"---\n# Source: c/templates/{kind.lower()}-{name}.yaml\napiVersion: {api}\nkind: {kind}\n"
        f"metadata:\n  name: {name}\n"
        for (api, kind), name in cluster_objects
    ]
    documents.append("---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
    return "".join(documents)


def _ownership(entries: list[tuple[str, str, str]], top_owner: str | None) -> rules.Ownership:
    body = {
        "apiVersion": "chartshare/v1",
        "kind": "ChartShare",
        "unowned": "strip",
        "rules": [{"match": {"kind": kind, "name": name}, "owner": owner} for kind, name, owner in entries],
    }
    if top_owner:
        body["owner"] = top_owner
    text = goyaml.dump(body)
    return rules.parse(text, Path("chartshare.yaml"), "chartshare.yaml")


def _emit(stream: str, ownership: rules.Ownership, app: str) -> tuple[list[Resource], str]:
    try:
        outcome = process(manifests.parse(stream), ownership, App(app, app.partition("_")[2] or app, "ns"))
    except RuleError:
        return [], ""
    return outcome.resources, manifests.emit_yaml(outcome.resources)


@settings(max_examples=150, deadline=None)
@given(objects, rule_entries, st.sampled_from([None, *APPS]))
def test_each_cluster_scoped_object_is_emitted_by_at_most_one_named_owner(
    cluster_objects: list[tuple[tuple[str, str], str]], entries: list[tuple[str, str, str]], top_owner: str | None
) -> None:
    stream = _stream(cluster_objects)
    ownership = _ownership(entries, top_owner)
    claims: dict[tuple[str, str], list[str]] = {}
    for app in APPS:
        resources, _ = _emit(stream, ownership, app)
        for resource in resources:
            if resource.kind != "ConfigMap":
                claims.setdefault((resource.kind, resource.name), []).append(app)
    assert all(len(apps) <= 1 for apps in claims.values()), claims


@settings(max_examples=100, deadline=None)
@given(objects, rule_entries, st.sampled_from([None, *APPS]), st.sampled_from(APPS))
def test_output_is_deterministic_and_unmatched_objects_keep_helms_bytes(
    cluster_objects: list[tuple[tuple[str, str], str]],
    entries: list[tuple[str, str, str]],
    top_owner: str | None,
    app: str,
) -> None:
    stream = _stream(cluster_objects)
    ownership = _ownership(entries, top_owner)
    first, text = _emit(copy.copy(stream), ownership, app)
    _, again = _emit(stream, ownership, app)
    assert text == again
    for resource in first:
        if not resource.changed:
            assert resource.text is not None and resource.text in stream
