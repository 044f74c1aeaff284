"""Invariants of renaming, checked on generated renders and rule sets.

- Renaming the output again with the same rules changes nothing, byte for byte.
- No reference in the output names an object that was renamed away.
- An object no rule matches, and that names nothing renamed, keeps helm's bytes.
- The same input gives the same output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmp import goyaml, manifests
from cmp.errors import RuleError
from cmp.manifests import Resource
from cmp.model import App
from cmp.ownership import rules
from cmp.ownership.decide import landing_namespace, matching_rule
from cmp.ownership.outcome import Outcome
from cmp.ownership.process import process
from cmp.ownership.report import summary
from cmp.ownership.scope import ScopeTable
from conftest import named_objects

APP = App("team-b", "team-b", "team-b")
NAMES = st.sampled_from(["reader", "writer", "team-b-reader", "high", "app", "team-b-app", "cfg", "cfg-team-b"])
REFERENCED = st.sampled_from(["reader", "high", "app", "cfg", "team-b-app"])  # names referrers tend to use
NAMESPACES = st.sampled_from([None, "team-b", "other"])
TEMPLATES = st.sampled_from(["{app}-{name}", "{release}-{name}", "{name}-{namespace}", "x.{name}"])
RENAMEABLE = ["ClusterRole", "ClusterRoleBinding", "PriorityClass", "ServiceAccount", "ConfigMap", "Deployment"]
API_VERSIONS = {
    "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "ServiceAccount": "v1",
    "ConfigMap": "v1",
    "Deployment": "apps/v1",
}
SCOPES = ScopeTable()


def _object(kind: str, name: str, namespace: str | None, **body: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": metadata, **body}


@st.composite
def renders(draw: st.DrawFn) -> str:
    """A helm-like stream: named objects of each kind and objects that reference them (or names absent)."""
    objects: list[dict[str, Any]] = []
    for name in draw(st.lists(NAMES, unique=True, min_size=1, max_size=3)):
        objects.append(_object("ClusterRole", name, None, rules=[]))
    for name in draw(st.lists(NAMES, unique=True, max_size=2)):
        objects.append(_object("PriorityClass", name, None, value=draw(st.integers(0, 1000))))
    for kind in ("ServiceAccount", "ConfigMap"):
        for name in draw(st.lists(NAMES, unique=True, min_size=1, max_size=3)):
            objects.append(_object(kind, name, draw(NAMESPACES)))
    for name in draw(st.lists(NAMES, unique=True, max_size=2)):
        subjects = [
            {
                "kind": "ServiceAccount",
                "name": draw(REFERENCED),
                "namespace": draw(st.sampled_from(["team-b", "other"])),
            }
            for _ in range(draw(st.integers(0, 2)))
        ]
        role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": draw(REFERENCED)}
        objects.append(_object("ClusterRoleBinding", name, None, roleRef=role_ref, subjects=subjects))
    for name in draw(st.lists(NAMES, unique=True, min_size=1, max_size=3)):
        pod: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
        if draw(st.booleans()):
            pod["priorityClassName"] = draw(REFERENCED)
        if draw(st.booleans()):
            pod["serviceAccountName"] = draw(REFERENCED)
        if draw(st.booleans()):
            pod["containers"][0]["envFrom"] = [{"configMapRef": {"name": draw(REFERENCED)}}]
        spec = {"selector": {"matchLabels": {"app": name}}, "template": {"spec": pod}}
        objects.append(_object("Deployment", name, draw(NAMESPACES), spec=spec))
    order = draw(st.permutations(range(len(objects))))
    return "".join(
        f"---\n# Source: chart/templates/{objects[i]['kind'].lower()}.yaml\n" + goyaml.dump(objects[i]) for i in order
    )


@st.composite
def rule_sets(draw: st.DrawFn) -> str:
    kinds = draw(st.lists(st.sampled_from(RENAMEABLE), unique=True, min_size=2, max_size=4))
    lines = ["apiVersion: chartshare/v1", "kind: ChartShare", "unowned: keep", "allowEmpty: true", "rules:"]
    for kind in kinds:
        lines += [f"  - match: {{kind: {kind}}}", "    others: rename", f'    renameTo: "{draw(TEMPLATES)}"']
    return "\n".join(lines) + "\n"


def _ownership(text: str) -> rules.Ownership:
    return rules.parse(text, Path("chartshare.yaml"), "chartshare.yaml")


def _generate(stream: str, rule_text: str) -> Outcome | None:
    """The outcome, or None when the rules are refused for this render (a rename clashes with a name)."""
    try:
        return process(manifests.parse(stream), _ownership(rule_text), APP)
    except RuleError as error:
        if "two objects would both be" not in str(error):
            raise
        return None


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(renders(), rule_sets())
def test_renaming_the_output_again_changes_nothing(stream: str, rule_text: str) -> None:
    first = _generate(stream, rule_text)
    if first is None:
        return
    once = manifests.emit_yaml(first.resources)
    second = _generate(once, rule_text)
    assert second is not None
    assert manifests.emit_yaml(second.resources) == once
    assert not [applied for applied in second.emitted if applied.resource.changed]


def _identity(resource: Resource) -> tuple[str, str, str, str]:
    return resource.group, resource.kind, landing_namespace(resource, SCOPES, APP.namespace), resource.name


def _references(resource: Resource) -> list[tuple[str, str, str, str]]:
    """Every (group, kind, namespace, name) the reference table says `resource` names."""
    return [target for target, _ in named_objects(resource, landing_namespace(resource, SCOPES, APP.namespace))]


@PROPERTY
@given(renders(), rule_sets())
def test_no_reference_names_an_object_that_was_renamed_away(stream: str, rule_text: str) -> None:
    before = {resource.index: _identity(resource) for resource in manifests.parse(stream)}
    outcome = _generate(stream, rule_text)
    if outcome is None:
        return
    after = {resource.index: _identity(resource) for resource in outcome.resources}
    gone = {before[index] for index in after if before[index] != after[index]} - set(after.values())
    for resource in outcome.resources:
        dangling = set(_references(resource)) & gone
        assert not dangling, f"{resource.id} still names {dangling}"


@PROPERTY
@given(renders(), rule_sets())
def test_objects_no_rule_matches_and_that_name_nothing_renamed_keep_helms_bytes(stream: str, rule_text: str) -> None:
    originals = manifests.parse(stream)
    outcome = _generate(stream, rule_text)
    if outcome is None:
        return
    ownership = _ownership(rule_text)
    renamed_away = {
        _identity(original)
        for original, result in zip(originals, outcome.resources, strict=True)
        if original.name != result.name
    }
    for original, result in zip(originals, outcome.resources, strict=True):
        if matching_rule(original, ownership, SCOPES, APP.namespace) is not None:
            continue
        if set(_references(original)) & renamed_away:
            assert result.changed
            continue
        assert not result.changed
        assert manifests.emit_yaml([result]) == "---\n" + original.text if original.text else True


@PROPERTY
@given(renders(), rule_sets())
def test_the_same_input_gives_the_same_output(stream: str, rule_text: str) -> None:
    first, second = _generate(stream, rule_text), _generate(stream, rule_text)
    if first is None or second is None:
        assert first is second is None
        return
    assert manifests.emit_yaml(first.resources) == manifests.emit_yaml(second.resources)
    assert summary(first) == summary(second)


@pytest.mark.parametrize("template", ["{app}-{name}", "{name}-{namespace}"])
def test_a_chain_of_references_follows_every_rename(template: str) -> None:
    stream = (
        "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: op}\n"
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: op}\nrules: []\n"
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: op}\n"
        "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: op}\n"
        "subjects: [{kind: ServiceAccount, name: op, namespace: team-b}]\n"
    )
    rule_text = "apiVersion: chartshare/v1\nkind: ChartShare\nrules:\n" + "".join(
        f"  - match: {{kind: {kind}}}\n    others: rename\n    renameTo: '{template}'\n"
        for kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding")
    )
    outcome = _generate(stream, rule_text)
    assert outcome is not None
    binding = outcome.resources[2].obj
    new = template.replace("{app}", "team-b").replace("{namespace}", "team-b").replace("{name}", "op")
    assert binding["metadata"]["name"] == new
    assert binding["roleRef"]["name"] == new
    assert binding["subjects"][0]["name"] == new
