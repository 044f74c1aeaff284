"""What check reads of an Application for the lifecycle model: its finalizers (the three cascading forms),
its application-level Prune= and Delete=, automated sync and prune, the Prune= on its own object (what its
parent's prune reads), and an ApplicationSet's applicationsSync and preserveResourcesOnDeletion."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmp.check.fleet import inventory
from cmp.check.fleet.applications import Lifetime
from cmp.check.fleet.repos import Repositories

APPLICATION = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: a
  namespace: argocd
{metadata}
spec:
  project: default
  source: {{repoURL: https://git.example.com/fleet.git, path: apps/a}}
  destination: {{server: https://kubernetes.default.svc, namespace: team}}
{spec}
"""
APPSET = """apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {{name: set, namespace: argocd}}
spec:
{policy}
  generators: [{{list: {{elements: [{{app: s1}}]}}}}]
  template:
    metadata: {{name: "{{{{app}}}}"{finalizers}}}
    spec:
      project: default
      source: {{repoURL: https://git.example.com/fleet.git, path: apps/set}}
      destination: {{server: https://kubernetes.default.svc, namespace: set}}
"""


def _lifetime(tmp_path: Path, text: str) -> Lifetime:
    (tmp_path / "app.yaml").write_text(text)
    fleet = inventory.load([tmp_path / "app.yaml"], "argocd", Repositories(tmp_path))
    assert not fleet.errors, fleet.errors
    [app] = fleet.applications
    return app.lifetime


@pytest.mark.parametrize(
    ("finalizer", "cascades"),
    [
        ("resources-finalizer.argocd.argoproj.io", True),
        ("resources-finalizer.argocd.argoproj.io/background", True),
        ("resources-finalizer.argocd.argoproj.io/foreground", True),
        ("resources-finalizer.argocd.argoproj.io/other", False),
        ("post-delete-finalizer.argocd.argoproj.io", False),
    ],
)
def test_only_the_three_resources_finalizers_cascade(tmp_path: Path, finalizer: str, cascades: bool) -> None:
    text = APPLICATION.format(metadata=f"  finalizers: [{finalizer}]", spec="")
    assert _lifetime(tmp_path, text).finalizer is cascades


def test_application_level_sync_options_and_automated_sync_are_read(tmp_path: Path) -> None:
    metadata = "  annotations: {argocd.argoproj.io/sync-options: 'Prune=confirm,Delete=false'}"
    spec = """  syncPolicy:
    automated: {prune: true}
    syncOptions: [CreateNamespace=true, Prune=false, Delete=confirm, Prune=true, FailOnSharedResource=true]"""
    lifetime = _lifetime(tmp_path, APPLICATION.format(metadata=metadata, spec=spec))
    assert (lifetime.prune, lifetime.delete, lifetime.own_prune) == ("false", "confirm", "confirm")  # the first wins
    assert (lifetime.automated, lifetime.auto_prune, lifetime.fail_on_shared) == (True, True, True)


def test_automated_sync_turned_off_by_enabled_false_does_not_sync_by_itself(tmp_path: Path) -> None:
    spec = "  syncPolicy:\n    automated: {enabled: false, prune: true}"
    lifetime = _lifetime(tmp_path, APPLICATION.format(metadata="", spec=spec))
    assert (lifetime.automated, lifetime.auto_prune) == (False, False)


@pytest.mark.parametrize(
    ("policy", "finalizers", "keeps", "finalizer"),
    [
        ("", "", "", True),  # the default policy (sync) deletes, and the finalizer is added
        ("  syncPolicy: {applicationsSync: sync}", "", "", True),
        ("  syncPolicy: {applicationsSync: create-delete}", "", "", True),
        ("  syncPolicy: {applicationsSync: create-only}", "", "create-only", True),
        ("  syncPolicy: {applicationsSync: create-update}", "", "create-update", True),
        ("  syncPolicy: {preserveResourcesOnDeletion: true}", "", "", False),
        (
            "  syncPolicy: {preserveResourcesOnDeletion: true}",
            ", finalizers: [resources-finalizer.argocd.argoproj.io]",
            "",
            True,
        ),
    ],
)
def test_an_applicationset_says_whether_it_deletes_and_cascades(
    tmp_path: Path, policy: str, finalizers: str, keeps: str, finalizer: bool
) -> None:
    lifetime = _lifetime(tmp_path, APPSET.format(policy=policy, finalizers=finalizers))
    assert (lifetime.appset, lifetime.appset_keeps, lifetime.finalizer) == ("set", keeps, finalizer)
