"""A non-owner never silently loses permissions: the bindings of an app's own ServiceAccounts.

Apps of one operator chart often share its release name, so each renders the same ClusterRoleBinding,
whose subjects name the chart's ServiceAccount in the app's own namespace. Give the binding to one owner
and the owner's copy binds only the owner's accounts: every other app's controllers run without the
permissions the chart gave them, and nothing says so. So an app may strip a binding of a ServiceAccount it
emits only when the rule that strips it says `others: strip` itself; a strip that comes from the top-level
owner, or from the default of a rule that names an owner, is an error that names the fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cmp.errors import RuleError
from cmp.manifests import Resource, searchable, surely_lacks
from cmp.model import App, Decision
from cmp.ownership.decide import landing_namespace
from cmp.ownership.outcome import Applied, rule_label
from cmp.ownership.rules import Ownership
from cmp.ownership.scope import ScopeTable

RBAC = "rbac.authorization.k8s.io"
BINDING_KINDS = frozenset({(RBAC, "ClusterRoleBinding"), (RBAC, "RoleBinding")})
SERVICE_ACCOUNT = ("", "ServiceAccount")


def refuse_unbinding(
    emitted: Sequence[Applied], stripped: Sequence[Applied], ownership: Ownership, app: App, scopes: ScopeTable
) -> None:
    """Raise RuleError when this app strips, without saying so, a binding of a ServiceAccount it emits."""
    unasked = [a for a in stripped if (a.resource.group, a.resource.kind) in BINDING_KINDS and not _asked(a, ownership)]
    if not unasked:
        return
    accounts = _own_accounts(emitted, scopes, app)
    if not accounts:
        return
    words = searchable({name for _, name in accounts})
    for applied in unasked:
        binding = applied.resource
        if surely_lacks(binding, words):
            continue  # none of the account names is in its text: it binds none of them
        namespace = landing_namespace(binding, scopes, app.namespace)
        for subject in _subjects(binding.obj):
            account = (str(subject.get("namespace") or namespace), str(subject.get("name") or ""))
            if account in accounts:
                raise RuleError(_refusal(binding, applied.decision, account, ownership, app))


def _asked(applied: Applied, ownership: Ownership) -> bool:
    """Whether the strip is what the file says for this object: `others: strip` on the rule that matched it,
    or `unowned: strip` for what no owner covers."""
    rule, policy = applied.decision.rule, applied.decision.policy
    if rule is None and policy is not None:
        return policy.accepted  # `forbid`, or a policy rule's own `others: strip`: the platform decided
    return ownership.says_strip(rule) or (rule is None and not ownership.owners)


def _own_accounts(emitted: Iterable[Applied], scopes: ScopeTable, app: App) -> set[tuple[str, str]]:
    """(namespace, name) of each ServiceAccount the app emits, under helm's name and any new one."""
    accounts: set[tuple[str, str]] = set()
    for applied in emitted:
        resource = applied.resource
        if (resource.group, resource.kind) != SERVICE_ACCOUNT:
            continue
        namespace = landing_namespace(resource, scopes, app.namespace)
        accounts.add((namespace, resource.name))
        if applied.renamed_from is not None:
            accounts.add((namespace, applied.renamed_from))
    return accounts


def _subjects(obj: dict[str, Any]) -> Iterable[dict[str, Any]]:
    subjects = obj.get("subjects")
    for subject in subjects if isinstance(subjects, list) else ():
        if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount" and not subject.get("apiGroup"):
            yield subject


def _refusal(binding: Resource, decision: Decision, account: tuple[str, str], ownership: Ownership, app: App) -> str:
    namespace, name = account
    owners = ", ".join(decision.owners) or "its owner"
    return (
        f"app {app.name} would strip {binding.id} ({_template(binding)}{rule_label(decision, ownership)}: "
        f"{decision.reason}), which binds this app's own ServiceAccount {namespace}/{name}: whatever {owners} "
        f"emits binds {owners}'s accounts, so this app's account would be left without these permissions. Give "
        f"every app its own binding with a rule such as {{match: {{kind: {binding.kind}}}, others: rename, "
        'renameTo: "{app}-{name}"}, or write `others: strip` on a rule for it to accept that the owner\'s copy '
        "serves"
    )


def _template(resource: Resource) -> str:
    return f"template {resource.source}; " if resource.source else ""
