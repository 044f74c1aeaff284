"""A non-owner never silently loses permissions: no app strips a binding of its own ServiceAccount unless a
rule says `others: strip` for it (or `unowned: strip` leaves it to nobody)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp import manifests
from cmp.errors import RuleError
from cmp.model import Action, App
from cmp.ownership.process import process
from cmp.ownership.rules import Ownership, parse

APPS = ("team-a", "team-b", "team-c")
ACCOUNTS = ("ctl", "webhook", "cleaner")
REFUSAL = "which binds this app's own ServiceAccount"


def _render(namespace: str, accounts: list[str], bindings: list[tuple[str, list[str], bool]]) -> str:
    """ServiceAccounts in the app's namespace and ClusterRoleBindings naming them (or another namespace's)."""
    documents = [
        f"apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"
        for name in accounts
    ]
    for name, subjects, elsewhere in bindings:
        listed = "".join(
            f"  - kind: ServiceAccount\n    name: {subject}\n    namespace: {'other' if elsewhere else namespace}\n"
            for subject in subjects
        )
        documents.append(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
            f"metadata:\n  name: {name}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n"
            f"  name: {name}\nsubjects:\n{listed or '  []'}\n".replace("subjects:\n  []", "subjects: []")
        )
    return "".join(f"---\n# Source: ctl/templates/rbac.yaml\n{document}" for document in documents)


# A rule: the bindings it matches, its owner (or none) and its `others` (None: the default).
rule_specs = st.lists(
    st.tuples(
        st.sampled_from(("*", *ACCOUNTS)),
        st.sampled_from((None, *APPS)),
        st.sampled_from((None, "strip", "keep", "rename")),
    ),
    max_size=2,
)


def _ownership(specs: list[tuple[str, str | None, str | None]], top_owner: str | None, unowned: str) -> Ownership:
    text = f"apiVersion: chartshare/v1\nkind: ChartShare\nallowEmpty: true\nunowned: {unowned}\n"
    text += f"owner: {top_owner}\n" if top_owner else ""
    text += "rules:\n" if specs else ""
    for name, owner, others in specs:
        text += f"  - match: {json.dumps({'kind': 'ClusterRoleBinding', 'name': name})}\n"
        text += f"    owner: {owner}\n" if owner else ""
        text += f"    others: {others}\n" if others else ""
        text += '    renameTo: "{app}-{name}"\n' if others == "rename" else ""
    return parse(text, Path("chartshare.yaml"), "chartshare.yaml")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(ACCOUNTS), min_size=1, max_size=3, unique=True),
    st.lists(
        st.tuples(st.sampled_from(ACCOUNTS), st.lists(st.sampled_from(ACCOUNTS), max_size=2), st.booleans()),
        min_size=1,
        max_size=3,
        unique_by=lambda binding: binding[0],
    ),
    rule_specs,
    st.sampled_from((None, *APPS)),
    st.sampled_from(("keep", "strip")),
)
def test_an_app_keeps_the_bindings_of_its_own_accounts_unless_a_rule_says_strip(
    accounts: list[str],
    bindings: list[tuple[str, list[str], bool]],
    specs: list[tuple[str, str | None, str | None]],
    top_owner: str | None,
    unowned: str,
) -> None:
    ownership = _ownership(specs, top_owner, unowned)
    for app in APPS:
        stream = _render(app, accounts, bindings)
        try:
            outcome = process(manifests.parse(stream), ownership, App(app, "ctl", app))
        except RuleError as error:
            refused = str(error)
        else:
            refused = ""
        if refused:
            assert REFUSAL in refused  # refusing is fine: nothing is lost silently
            continue
        emitted = {(a.resource.kind, a.renamed_from or a.resource.name) for a in outcome.emitted}
        for applied in outcome.stripped:
            resource = applied.resource
            binds_own = any(
                subject.get("namespace") == app and ("ServiceAccount", subject.get("name")) in emitted
                for subject in resource.obj.get("subjects") or []
            )
            if not binds_own:
                continue
            rule = ownership.rules[applied.decision.rule] if applied.decision.rule is not None else None
            said_so = (rule is not None and rule.others_written and rule.others is Action.STRIP) or (
                rule is None and not ownership.owners
            )
            assert said_so, f"{app} silently lost {resource.id}"


def test_the_refusal_names_the_binding_the_account_and_the_fix() -> None:
    stream = _render("team-b", ["ctl"], [("ctl", ["ctl"], False)])
    with pytest.raises(RuleError) as raised:
        process(manifests.parse(stream), _ownership([], "team-a", "fail"), App("team-b", "ctl", "team-b"))
    message = str(raised.value)
    assert "ClusterRoleBinding.rbac.authorization.k8s.io ctl" in message
    assert "ServiceAccount team-b/ctl" in message and "whatever team-a emits binds team-a's accounts" in message
    assert 'others: rename, renameTo: "{app}-{name}"' in message and "`others: strip`" in message


def test_a_binding_of_another_namespaces_account_may_go_with_the_owner() -> None:
    stream = _render("team-b", ["ctl"], [("ctl", ["ctl"], True)])
    outcome = process(manifests.parse(stream), _ownership([], "team-a", "fail"), App("team-b", "ctl", "team-b"))
    assert [a.resource.kind for a in outcome.stripped] == ["ClusterRoleBinding"]
