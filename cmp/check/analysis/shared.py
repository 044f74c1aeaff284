"""Warnings about objects several apps render and one (or none) emits.

When the rules give a shared object to one app, the others strip their copies and live with the owner's.
Three things can still go wrong: the owner's copy is not protected from pruning (the day ownership moves,
the old owner deletes it), the owner the rules name is not in the fleet (nobody creates the object), or
a stripped copy differs from the owner's (a webhook calling another namespace's Service, a binding naming
other ServiceAccounts), so the app that strips it runs with something it did not render.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from cmp import goyaml
from cmp.annotations import prune_safe
from cmp.check.analysis import copies
from cmp.check.analysis.claims import AppClaims, ByObject, Claim, mapping_at
from cmp.check.analysis.findings import (
    DIVERGENT_COPY,
    NAMESPACE,
    NOBODY_EMITS,
    UNPROTECTED_SHARED,
    Finding,
    Together,
    is_crd,
    match_flow,
)
from cmp.model import ClusterResourceId, GroupKind
from cmp.ownership.managed_namespace import sync_policy
from cmp.ownership.rules import UNRENAMEABLE

MAX_POINTERS = 3  # the differing fields a divergent-copy warning names
_WEBHOOK = "calls meant for {app}'s webhook Service go to {owner}'s"
# What running with the owner's copy does to the app that strips its own, per kind.
SERVED_BY_OWNER: Mapping[GroupKind, str] = {
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _WEBHOOK,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _WEBHOOK,
    ("apiregistration.k8s.io", "APIService"): "API calls meant for {app}'s Service go to {owner}'s",
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): "subjects only {app}'s copy names are not bound",
    ("rbac.authorization.k8s.io", "RoleBinding"): "subjects only {app}'s copy names are not bound",
    ("apiextensions.k8s.io", "CustomResourceDefinition"): "{app}'s custom resources follow {owner}'s schema",
}
RUNS_WITH_OWNERS = "{app} runs with {owner}'s"
TOP_LEVEL_PROTECTION = "Namespaces, CRDs and PersistentVolumes"


def shared_warnings(renderers: ByObject, emitters: ByObject, apps: Mapping[str, AppClaims]) -> Iterator[Finding]:
    """Objects several apps render: emitted by one owner (unprotected, or copies that differ), or by nobody."""
    for key, claims in sorted(renderers.items()):
        kept = emitters.get(key, {})
        if len(kept) == 1 and len(claims) >= 2:
            ((owner, owned),) = kept.items()
            strippers = {app: claim for app, claim in claims.items() if app != owner}
            yield from _divergent_copies(key, owner, owned, strippers)
            if not is_crd(key) and not prune_safe(mapping_at(owned.obj, "metadata", "annotations")):
                top_level = all(claim.top_level_owner for claim in strippers.values())
                yield _unprotected(key, owner, sorted(claims), top_level)
        elif not kept and not all(".forbid[" in claim.policy for claim in claims.values()):
            yield _nobody_emits(key, claims, apps)  # a forbidden object's own warning says why nobody emits it


def _unprotected(key: ClusterResourceId, owner: str, renderers: list[str], top_level: bool) -> Finding:
    if top_level:  # no rule to put `protect: true` on: the fix is a rule that gives the same objects
        fix = (
            f"the top-level `owner:` protects only {TOP_LEVEL_PROTECTION}; a last rule "
            f'`- {{match: {{namespace: ""}}, owner: {owner}, protect: true}}` protects every cluster-scoped '
            "object no other rule matches"
        )
        fix_one = fix_all = fix
    else:
        fix_one = f"`protect: true` on the chartshare.yaml rule that gives it to {owner}"
        fix_all = f"`protect: true` on the chartshare.yaml rules that give them to {owner}"
    together = Together(
        f"shared objects emitted only by {owner}, without Prune=false",
        f"rendered by {', '.join(renderers)}",
        f"If ownership ever moves, {owner}'s next sync with prune deletes them. Protect them: {fix_all}",
    )
    return Finding(
        owner,
        UNPROTECTED_SHARED,
        key,
        f"{key} is rendered by {', '.join(renderers)} and emitted only by {owner}, without Prune=false: if "
        f"ownership ever moves, {owner}'s next sync with prune deletes it. Protect it: {fix_one}",
        together,
    )


def _divergent_copies(
    key: ClusterResourceId, owner: str, owned: Claim, strippers: Mapping[str, Claim]
) -> Iterator[Finding]:
    """Each stripped copy that differs from the owner's, once the per-release stamps are set aside, unless
    the rule that strips it writes `others: strip` (the app accepts the owner's copy)."""
    for app, copy in sorted(strippers.items()):
        if copy.accepted:
            continue
        found = copies.differences(copy.obj, owned.obj, MAX_POINTERS, cluster_scoped=not key.namespace)
        if not found:
            continue
        fields = "; ".join(
            f"{d.pointer} is {copies.shown(d.left)} in {app}'s, {copies.shown(d.right)} in {owner}'s" for d in found
        )
        served = SERVED_BY_OWNER.get((key.group, key.kind), RUNS_WITH_OWNERS).format(app=app, owner=owner)
        together = Together(
            f"stripped copies that differ from the ones {owner} emits",
            fields,
            f"With {app}'s copies stripped, {served}. {_copy_fix(key, app, owner, many=True)}",
        )
        yield Finding(
            app,
            DIVERGENT_COPY,
            key,
            f"{app} strips its copy of {key} ({copy.reason}), and the copy {owner} emits differs: {fields}. "
            f"With {app}'s copy stripped, {served}. {_copy_fix(key, app, owner, many=False)}",
            together,
        )


def _copy_fix(key: ClusterResourceId, app: str, owner: str, *, many: bool) -> str:
    """Rename (every app its own copy) where the kind allows it, else make the copies equal; or accept."""
    rule = f"`- {{match: {match_flow(key, name=False)}, owner: {owner}, others: strip}}`"
    if many:
        accept = f"or, if {owner}'s copies serve {app} as they are, accept them with {rule}"
    else:
        accept = f"or, if {owner}'s copy serves {app} as it is, accept it with {rule}"
    why = UNRENAMEABLE.get((key.group, key.kind))
    if why is not None:
        return f"As {why}, it cannot be renamed: render equal copies in every app (the same chart and values), {accept}"
    return (
        f"Give every app its own copy, references fixed, with the rule "
        f'`- {{match: {match_flow(key, name=False)}, others: rename, renameTo: "{{app}}-{{name}}"}}`, {accept}'
    )


def _nobody_emits(key: ClusterResourceId, claims: Mapping[str, Claim], apps: Mapping[str, AppClaims]) -> Finding:
    first = sorted(claims)[0]
    reason = claims[first].reason
    renderers = ", ".join(sorted(claims))
    if (key.group, key.kind) != NAMESPACE:
        together = Together(
            "objects no app of this fleet emits",
            f"rendered by {renderers} ({first}: {reason})",
            "No app of this fleet creates them: check the owners the rules name",
        )
        return Finding(
            first,
            NOBODY_EMITS,
            key,
            f"{key} is rendered by {renderers} and emitted by none of them ({first}: {reason}), so no app of "
            "this fleet creates it: check the owner the rule names",
            together,
        )
    # managedNamespaceMetadata applies to the destination namespace: suggest it on an app deployed there.
    hosts = sorted(app for app in claims if apps[app].app.namespace == key.name) or sorted(claims)
    snippet = sync_policy(mapping_at(claims[hosts[0]].obj, "metadata"))
    sets_metadata = "managedNamespaceMetadata" in snippet["syncPolicy"]
    return Finding(
        hosts[0],
        NOBODY_EMITS,
        key,
        f"Namespace {key.name} is rendered by {renderers} and emitted by none of them ({first}: "
        f"{reason}), so Argo CD does not create it"
        f"{' or set its labels and annotations' if sets_metadata else ''}. Give it an owner that exists, or let "
        f"exactly one Application deployed to it manage it (several would overwrite each other's metadata); in "
        f"{hosts[0]}'s spec:\n" + goyaml.dump(snippet).rstrip("\n"),
    )
