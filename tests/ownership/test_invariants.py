"""Invariants of the ownership stage over generated fleets, renders and rule sets (hypothesis).

CI runs a fixed budget (60 examples per test); `CHARTSHARE_PROPERTY_EXAMPLES=5000 pytest
tests/ownership/test_invariants.py` runs many more. The stage under test is `process`, the pure heart
`generate` and `check` share, fed streams shaped like helm's (`# Source:` comments, block and flow
styles, comments, sync-options).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmp import goyaml, manifests
from cmp.model import App
from cmp.ownership.process import process
from cmp.ownership.report import summary
from cmp.ownership.rules import Ownership, parse

# A fixed budget per test in CI, and the same examples every run (no flaky CI); a long run,
# CHARTSHARE_PROPERTY_EXAMPLES=5000, draws new ones. No global profile: other modules keep their settings.
LONG_RUN = "CHARTSHARE_PROPERTY_EXAMPLES" in os.environ
BUDGET = settings(
    max_examples=int(os.environ.get("CHARTSHARE_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    derandomize=not LONG_RUN,
    suppress_health_check=[HealthCheck.too_slow],
)

# (apiVersion, kind, cluster-scoped?) ; Widget has no known scope: chartshare treats it as namespaced
KINDS = (
    ("v1", "Namespace", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", True),
    ("storage.k8s.io/v1", "StorageClass", True),
    ("scheduling.k8s.io/v1", "PriorityClass", True),
    ("v1", "ConfigMap", False),
    ("v1", "ServiceAccount", False),
    ("apps/v1", "Deployment", False),
    ("example.io/v1", "Widget", False),
)
APPS = ("dev-a", "dev-b", "team_web", "prod-c", "dev-shoong-notification")
NAMES = ("shoong", "web", "shared-reader", "a", "b-1")
DESTINATION = "shoong"  # the apps' destination namespace
SYNC_OPTIONS = ("Prune=confirm", "Replace=true", "Prune=false,Delete=false", "ServerSideApply=true")


@dataclass(frozen=True)
class Doc:
    api_version: str
    kind: str
    name: str
    namespace: str
    labels: tuple[tuple[str, str], ...]
    sync_options: str
    flow: bool
    template: str


docs = st.builds(
    lambda kind, name, ns, labels, sync, flow, template: Doc(
        kind[0], kind[1], name, "" if kind[2] else ns, labels, sync, flow, template
    ),
    st.sampled_from(KINDS),
    st.sampled_from(NAMES),
    st.sampled_from(("", "shoong", "other")),
    st.lists(st.tuples(st.sampled_from(("team", "app", "tier")), st.sampled_from(("a", "b", "on", "1"))), max_size=2)
    .map(dict)
    .map(lambda labels: tuple(sorted(labels.items()))),
    st.sampled_from(("", *SYNC_OPTIONS)),
    st.booleans(),
    st.sampled_from(("shared/templates/a.yaml", "shared/templates/rbac.yaml", "shared/crds/x.yaml")),
)


def _render(doc: Doc) -> str:
    """One document as helm writes it, in block or flow style, with the odd comment."""
    lines = [f"# Source: {doc.template}", f"apiVersion: {doc.api_version}", f"kind: {doc.kind}"]
    meta: dict[str, Any] = {"name": doc.name}
    if doc.namespace:
        meta["namespace"] = doc.namespace
    if doc.labels:
        meta["labels"] = dict(doc.labels)
    if doc.sync_options:
        meta["annotations"] = {"argocd.argoproj.io/sync-options": doc.sync_options}
    if doc.flow:
        lines.append("metadata: " + json.dumps(meta) + "  # flow style")
    else:
        lines.append(goyaml.dump({"metadata": meta}).rstrip("\n"))
    lines.append('data:\n  mode: "on"\n  ratio: 1e3\n  operator: =')
    return "\n".join(lines) + "\n"


def _stream(render: list[Doc]) -> str:
    """The documents, one per object Argo CD would track (no namespace means the destination's)."""
    unique = {(d.api_version, d.kind, d.namespace or DESTINATION, d.name): d for d in render}
    return "".join("---\n" + _render(doc) for doc in unique.values())


# Each rule: its match, its one owner, and whether it writes `others: strip` or leaves it to the default
# (strip, for a rule that names an owner).
rules = st.lists(
    st.fixed_dictionaries(
        {"kind": st.sampled_from([k for _, k, _ in KINDS] + ["*", "Cluster*"])},
        optional={"name": st.sampled_from((*NAMES, "*", "shared-*", "sh*"))},
    ).flatmap(lambda match: st.tuples(st.just(match), st.sampled_from(APPS), st.booleans())),
    max_size=3,
)
Rules = list[tuple[dict[str, str], str, bool]]


def _ownership(rule_list: Rules, owner: str | None, unowned: str) -> Ownership:
    """A chartshare.yaml where every rule names one owner and strips elsewhere: the partition setting."""
    text = "apiVersion: chartshare/v1\nkind: ChartShare\nallowEmpty: true\n"
    text += f"unowned: {unowned}\n" + (f"owner: {owner}\n" if owner else "")
    text += "rules:\n" if rule_list else ""
    for match, app, explicit in rule_list:
        text += f"  - match: {json.dumps(match)}\n    owner: {app}\n" + ("    others: strip\n" if explicit else "")
    return parse(text, Path("chartshare.yaml"), "chartshare.yaml")


def _emit(stream: str, ownership: Ownership | None, app: str) -> tuple[str, str, list[str]]:
    outcome = process(manifests.parse(stream), ownership, App(app, "web", DESTINATION))
    resources = outcome.resources
    return manifests.emit_yaml(resources), manifests.emit_json(resources), summary(outcome)


fleets = st.lists(st.sampled_from(APPS), min_size=1, max_size=4, unique=True)
renders = st.lists(docs, min_size=1, max_size=10)


@BUDGET
@given(renders, rules, fleets, st.sampled_from((None, *APPS)), st.sampled_from(("keep", "strip")))
def test_ownership_is_a_partition_across_the_fleet(
    render: list[Doc], rule_list: Rules, fleet: list[str], owner: str | None, unowned: str
) -> None:
    """With one owner per rule (and, or not, a top-level owner), every object a rule matches, and every
    cluster-scoped object when a top-level owner is set, comes out of exactly the one app that owns it, if
    that app is in the fleet; without one, `unowned` decides for the rest."""
    stream = _stream(render)
    ownership = _ownership(rule_list, owner, unowned)
    emitted: dict[tuple[str, str, str], list[str]] = {}
    for app in fleet:
        for resource in manifests.parse(_emit(stream, ownership, app)[0]):
            emitted.setdefault((resource.kind, resource.namespace, resource.name), []).append(app)
    for resource in manifests.parse(stream):
        key = (resource.kind, resource.namespace, resource.name)
        rule = next((r for r in ownership.rules if r.match.matches(resource)), None)
        cluster = next(c for _, k, c in KINDS if k == resource.kind)
        if rule is None and not cluster:
            assert emitted.get(key) == fleet  # namespaced and unmatched: every app keeps it
            continue
        if rule is None and not ownership.owners:
            assert emitted.get(key, []) == (fleet if unowned == "keep" else [])
            continue
        owners = rule.owners if rule else ownership.owners
        assert emitted.get(key, []) == [app for app in fleet if app in owners]
        assert len(emitted.get(key, [])) <= 1


@BUDGET
@given(renders, rules, st.sampled_from(APPS))
def test_objects_no_rule_touches_keep_helms_bytes(render: list[Doc], rule_list: Rules, app: str) -> None:
    stream = _stream(render)
    ownership = _ownership(rule_list, None, "keep")
    out = [chunk.text for chunk in manifests.split(_emit(stream, ownership, app)[0])]
    for chunk, resource in zip(manifests.split(stream), manifests.parse(stream), strict=True):
        if not any(rule.match.matches(resource) for rule in ownership.rules):
            assert chunk.text in out  # byte for byte, `# Source:` comment and all


@BUDGET
@given(renders, rules, st.sampled_from(APPS), st.sampled_from(APPS), st.booleans())
def test_output_is_deterministic_and_a_second_pass_changes_nothing(
    render: list[Doc], rule_list: Rules, app: str, owner: str, with_rules: bool
) -> None:
    stream = _stream(render)
    ownership = _ownership(rule_list, owner, "strip") if with_rules else None
    first = _emit(stream, ownership, app)
    assert _emit(stream, ownership, app) == first
    if first[0]:  # an empty output is refused without allowEmpty, so only the non-empty one goes round again
        assert _emit(first[0], ownership, app)[:2] == first[:2]


@BUDGET
@given(renders, rules, st.sampled_from(APPS), st.sampled_from(APPS))
def test_output_parses_the_way_argo_cd_parses_it(render: list[Doc], rule_list: Rules, app: str, owner: str) -> None:
    """A YAML stream reader (not chartshare's splitter) and a JSON reader see the same objects, each with a
    string kind, and exactly the objects chartshare decided to emit."""
    stream = _stream(render)
    ownership = _ownership(rule_list, owner, "strip")
    outcome = process(manifests.parse(stream), ownership, App(app, "web", DESTINATION))
    text, lines, _ = _emit(stream, ownership, app)
    from_yaml = [doc for doc in yaml.load_all(text, Loader=goyaml.GoLoader) if doc is not None]
    from_json = [json.loads(line) for line in lines.splitlines()]
    assert from_yaml == from_json == [resource.obj for resource in outcome.resources]
    assert all(isinstance(obj.get("kind"), str) and obj["metadata"]["name"] for obj in from_yaml)
