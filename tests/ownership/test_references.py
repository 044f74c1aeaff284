"""The reference table, row by row: a rename fixes exactly the fields the row names, nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import reference_cases
from reference_cases import NAMESPACE, RENAMED, TARGET, case_objects

from cmp.manifests import Resource
from cmp.model import App
from cmp.ownership import rules
from cmp.ownership.process import process
from cmp.ownership.reference_fields import (
    NAME_REFERENCES,
    POD_SPECS,
    SELECTOR_REFERENCES,
    NameReference,
    Where,
    name_slots,
    selects,
    walk,
)
from cmp.ownership.scope import Scope, ScopeTable

APP = App(reference_cases.APP, reference_cases.APP, NAMESPACE)
ROWS = {row.id: row for row in NAME_REFERENCES}


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [text for value in node.values() for text in _strings(value)]
    if isinstance(node, list):
        return [text for item in node for text in _strings(item)]
    return [node] if isinstance(node, str) else []


def _run(row: NameReference) -> dict[str, dict[str, Any]]:
    objects, _, _ = case_objects(row)
    ownership = rules.parse(reference_cases.chartshare_yaml(row), Path("chartshare.yaml"), "chartshare.yaml")
    resources = [Resource(obj, "objects/templates/objects.yaml", None, index) for index, obj in enumerate(objects)]
    outcome = process(resources, ownership, APP)
    return {f"{r.kind}/{r.name}": r.obj for r in outcome.resources}


@pytest.mark.parametrize("row", NAME_REFERENCES, ids=lambda row: row.id)
def test_a_rename_fixes_every_field_of_the_row_and_no_decoy(row: NameReference) -> None:
    _, fixed, decoys = case_objects(row)
    output = _run(row)
    target_kind = row.target[1]
    assert f"{target_kind}/{RENAMED}" in output
    for key, obj in output.items():
        kind, _, name = key.partition("/")
        if kind == target_kind:
            continue
        texts = _strings({k: v for k, v in obj.items() if k != "metadata"})
        if name in fixed:
            assert TARGET not in texts and RENAMED in texts, f"{key} still names the old {target_kind}"
        else:
            assert name in decoys
            assert RENAMED not in texts and TARGET in texts, f"decoy {key} was rewritten"


@pytest.mark.parametrize("row", NAME_REFERENCES, ids=lambda row: row.id)
def test_every_row_has_a_golden_case_made_from_the_table(row: NameReference) -> None:
    folder = reference_cases.case_dir(row)
    for name, text in reference_cases.case_files(row).items():
        path = folder / name
        assert path.is_file(), f"missing {path}: run python tests/reference_cases.py"
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run python tests/reference_cases.py"
    assert (folder / "expected.out").is_file()


def test_row_ids_are_unique() -> None:
    assert len(ROWS) == len(NAME_REFERENCES)
    assert len({row.id for row in SELECTOR_REFERENCES} | set(ROWS)) == len(ROWS) + len(SELECTOR_REFERENCES)


@pytest.mark.parametrize("row", NAME_REFERENCES, ids=lambda row: row.id)
def test_where_agrees_with_the_scope_of_target_and_sources(row: NameReference) -> None:
    scopes = ScopeTable()
    group, kind = row.target
    assert group is not None
    target_scope = scopes.of(group, kind)
    if row.where is Where.CLUSTER:
        assert target_scope is Scope.CLUSTER
    else:
        assert target_scope is Scope.NAMESPACED
    for source_group, source_kind, path in row.sources:
        assert source_group is not None and path.startswith("/")
        assert scopes.of(source_group, source_kind) is not Scope.UNKNOWN
        if row.where is Where.SAME:
            assert scopes.of(source_group, source_kind) is Scope.NAMESPACED, (source_kind, path)


def test_pod_rows_cover_every_kind_that_runs_pods() -> None:
    pod_kinds = {(group, kind) for group, kind, _ in POD_SPECS}
    wanted = {"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"}
    assert wanted <= {kind for _, kind in pod_kinds}
    for row in NAME_REFERENCES:
        if row.id.startswith("pod-"):
            assert {(g, k) for g, k, _ in row.sources} == pod_kinds, row.id


def test_the_rows_the_issue_names_are_all_there() -> None:
    targets = {(row.target, group, kind) for row in NAME_REFERENCES for group, kind, _ in row.sources}
    rbac = "rbac.authorization.k8s.io"
    for needed in [
        ((rbac, "ClusterRole"), rbac, "ClusterRoleBinding"),
        ((rbac, "ClusterRole"), rbac, "RoleBinding"),
        (("", "ServiceAccount"), rbac, "ClusterRoleBinding"),
        (("scheduling.k8s.io", "PriorityClass"), "batch", "CronJob"),
        (("node.k8s.io", "RuntimeClass"), "apps", "DaemonSet"),
        (("", "ServiceAccount"), "apps", "Deployment"),
        (("", "ConfigMap"), "batch", "Job"),
        (("", "Secret"), "apps", "StatefulSet"),
        (("", "PersistentVolumeClaim"), "apps", "ReplicaSet"),
        (("storage.k8s.io", "StorageClass"), "", "PersistentVolumeClaim"),
        (("storage.k8s.io", "StorageClass"), "apps", "StatefulSet"),
        (("", "PersistentVolume"), "", "PersistentVolumeClaim"),
        (("networking.k8s.io", "IngressClass"), "networking.k8s.io", "Ingress"),
        (("", "Service"), "admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        (("", "Service"), "admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        (("", "Service"), "apiregistration.k8s.io", "APIService"),
    ]:
        assert needed in targets, needed


# --- the walker and the selector semantics --------------------------------------------------------------------


def test_walk_steps_into_every_list_item_and_reports_concrete_pointers() -> None:
    obj = {"subjects": [{"name": "a"}, {"kind": "User"}, {"name": "c"}]}
    assert [(pointer, parent[key]) for parent, key, pointer in walk(obj, "/subjects/*/name")] == [
        ("/subjects/0/name", "a"),
        ("/subjects/2/name", "c"),
    ]


def test_a_path_ending_in_a_wildcard_reaches_every_item_of_a_list_of_names() -> None:
    obj = {"spec": {"roles": ["a", {"not": "a name"}, "c"]}}
    assert [(pointer, parent[key]) for parent, key, pointer in walk(obj, "/spec/roles/*")] == [
        ("/spec/roles/0", "a"),
        ("/spec/roles/1", {"not": "a name"}),
        ("/spec/roles/2", "c"),
    ]


def test_walk_unescapes_json_pointer_keys() -> None:
    obj = {"metadata": {"annotations": {"example.io/role": "r"}}}
    found = list(walk(obj, "/metadata/annotations/example.io~1role"))
    assert [pointer for _, _, pointer in found] == ["/metadata/annotations/example.io~1role"]


def test_a_path_through_a_scalar_or_missing_key_finds_nothing() -> None:
    assert list(walk({"spec": "text"}, "/spec/template/spec")) == []
    assert list(walk({"spec": {}}, "/spec/*/name")) == []


def test_conditions_on_sibling_fields_must_hold() -> None:
    row = ROWS["binding-roleref-clusterrole"]
    good = {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "x"}}
    other_group = {"roleRef": {"apiGroup": "example.io", "kind": "ClusterRole", "name": "x"}}
    rbac = "rbac.authorization.k8s.io"
    assert len(list(name_slots(good, row, rbac, "ClusterRoleBinding"))) == 1
    assert list(name_slots(other_group, row, rbac, "ClusterRoleBinding")) == []
    assert list(name_slots(good, row, "example.io", "ClusterRoleBinding")) == []


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {}, True),
        ({}, {"anything": "x"}, True),
    ],
)
def test_label_selectors_follow_kubernetes(selector: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    assert selects(selector, labels) is expected
