"""Renames, reference fixes, patches and protection on parsed documents: what changes, and what is kept."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cmp import manifests, name_rules
from cmp.annotations import SYNC_OPTIONS
from cmp.errors import ConfigError, RuleError
from cmp.manifests import Resource
from cmp.model import App
from cmp.ownership import managed_namespace, rules
from cmp.ownership.outcome import Outcome
from cmp.ownership.process import process
from cmp.ownership.report import summary
from cmp.ownership.rewrite.rename import has_renamed_form, render_name
from conftest import ROOT

APP = App("team-b", "team-b", "team-b")
HEAD = "apiVersion: chartshare/v1\nkind: ChartShare\nunowned: keep\n"

STREAM = """---
# Source: op/templates/rbac.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager
rules: []
---
# Source: op/templates/rbac.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: manager
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: manager}
subjects: [{kind: ServiceAccount, name: op, namespace: team-b}]
---
# Source: op/templates/workload.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data: {mode: "on"}
"""


def run(rules_text: str, stream: str = STREAM, app: App = APP) -> Outcome:
    ownership = rules.parse(HEAD + textwrap.dedent(rules_text), Path("chartshare.yaml"), "chartshare.yaml")
    return process(manifests.parse(stream), ownership, app)


def by_name(outcome: Outcome) -> dict[str, Resource]:
    return {f"{r.kind}/{r.name}": r for r in outcome.resources}


# --- what counts as changed ------------------------------------------------------------------------------------


def test_a_rename_is_a_metadata_only_change_and_a_fixed_reference_is_a_full_one() -> None:
    out = by_name(run("rules:\n  - match: {kind: ClusterRole}\n    others: rename\n"))
    role, binding = out["ClusterRole/team-b-manager"], out["ClusterRoleBinding/manager"]
    assert role.metadata_changed and role.text is not None
    assert binding.text is None and binding.obj["roleRef"]["name"] == "team-b-manager"
    assert out["ConfigMap/settings"].changed is False


def test_a_patch_confined_to_metadata_keeps_helm_text_for_the_rest() -> None:
    out = by_name(
        run("rules:\n  - match: {kind: ConfigMap}\n    patch: [{op: add, path: /metadata/labels, value: {a: b}}]\n")
    )
    config = out["ConfigMap/settings"]
    assert config.changed and config.text is not None and not config.parsed


def test_a_patch_the_text_cannot_take_re_serialises_the_document() -> None:  # `data` is a flow mapping
    out = by_name(run("rules:\n  - match: {kind: ConfigMap}\n    patch: [{op: replace, path: /data/mode, value: x}]\n"))
    assert out["ConfigMap/settings"].text is None
    assert out["ConfigMap/settings"].obj["data"] == {"mode": "x"}


def test_a_document_without_a_renamed_name_in_its_text_is_not_parsed_for_references() -> None:
    stream = STREAM + (
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: other\n"
        "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: viewer\n"
    )
    out = by_name(run("rules:\n  - match: {kind: ClusterRole}\n    others: rename\n", stream))
    assert out["ClusterRoleBinding/manager"].obj["roleRef"]["name"] == "team-b-manager"
    assert not out["ClusterRoleBinding/other"].parsed
    assert not out["ConfigMap/settings"].parsed


def test_a_reference_written_with_escapes_is_still_fixed() -> None:
    stream = STREAM.replace("name: manager}", 'name: "man\\x61ger"}')
    assert '"man\\x61ger"' in stream
    out = by_name(run("rules:\n  - match: {kind: ClusterRole}\n    others: rename\n", stream))
    assert out["ClusterRoleBinding/manager"].obj["roleRef"]["name"] == "team-b-manager"


def test_a_patch_that_changes_nothing_leaves_the_document_untouched() -> None:
    outcome = run("rules:\n  - match: {kind: ConfigMap}\n    patch: [{op: test, path: /data/mode, value: 'on'}]\n")
    assert by_name(outcome)["ConfigMap/settings"].changed is False
    assert "patched ConfigMap settings by rules[0] (1 operation)" in "\n".join(summary(outcome))


def test_protection_is_applied_after_patches_so_a_patch_cannot_remove_it() -> None:
    stream = "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b\n  annotations: {a: b}\n"
    outcome = run(
        "rules:\n  - match: {kind: Namespace}\n    owner: team-b\n"
        "    patch: [{op: remove, path: /metadata/annotations}]\n",
        stream,
    )
    (namespace,) = outcome.resources
    assert namespace.metadata["annotations"] == {SYNC_OPTIONS: "Prune=false,Delete=false"}


# --- patches that cannot be applied ---------------------------------------------------------------------------


def test_a_patch_that_removes_kind_is_refused() -> None:
    with pytest.raises(
        RuleError, match=r"chartshare.yaml:5: rules\[0\]: patch leaves ConfigMap settings .* without `kind`"
    ):
        run("rules:\n  - match: {kind: ConfigMap}\n    patch: [{op: remove, path: /kind}]\n")


def test_a_failing_operation_names_its_index_and_does_not_echo_the_document() -> None:
    with pytest.raises(RuleError) as caught:
        run("rules:\n  - match: {kind: ConfigMap}\n    patch: [{op: remove, path: /data/absent}]\n")
    message = str(caught.value)
    assert "rules[0]: patch[0] (remove /data/absent) fails on ConfigMap settings" in message
    assert "'mode'" not in message and "on'" not in message


BLOCK_CONFIG_MAP = """---
# Source: op/templates/workload.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: "on"
"""


def test_jsonpatch_is_imported_only_when_a_patch_needs_the_parsed_object() -> None:
    """A rename, and a patch helm's text can take, leave jsonpatch unloaded; a patch through a sequence index
    (which only the object path carries out) loads it."""
    probe = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = [{str(ROOT / "tests")!r}, {str(ROOT / "tests" / "ownership")!r}]
        from test_rewrite import BLOCK_CONFIG_MAP, run
        run("rules:\\n  - match: {{kind: ClusterRole}}\\n    others: rename\\n")
        assert "jsonpatch" not in sys.modules, "imported for a rename"
        text_patch = "rules:\\n  - match: {{kind: ConfigMap}}\\n    patch: [{{op: add, path: /data/x, value: y}}]\\n"
        outcome = run(text_patch, BLOCK_CONFIG_MAP)
        assert outcome.resources[0].changed and not outcome.resources[0].parsed
        assert "jsonpatch" not in sys.modules, "imported for a patch carried out on the text"
        by_index = "[{{op: replace, path: /subjects/0/name, value: x}}]"
        run(f"rules:\\n  - match: {{{{kind: ClusterRoleBinding}}}}\\n    patch: {{by_index}}\\n")
        assert "jsonpatch" in sys.modules, "the object path did not load it"
        """
    )
    subprocess.run([sys.executable, "-c", probe], check=True, cwd=ROOT, timeout=60)


# --- renames ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "template", "expected"),
    [
        ("team-b-manager", "{release}-{name}", True),
        ("manager", "{release}-{name}", False),
        ("team-b", "{release}-{name}", False),  # the name part may not be empty
        ("manager.team-b", "{name}.{app}", True),
        ("fixed", "fixed", True),
        ("team-b-team-b-x", "{app}-{namespace}-{name}", True),
    ],
)
def test_a_name_that_already_has_the_renamed_form_is_recognised(name: str, template: str, expected: bool) -> None:
    values = {"app": "team-b", "release": "team-b", "namespace": "team-b", "name": name}
    assert has_renamed_form(name, template, values) is expected


def test_placeholders_are_filled_in() -> None:
    values = {"app": "a", "release": "r", "namespace": "n", "name": "x"}
    assert render_name("{app}.{release}.{namespace}.{name}", values) == "a.r.n.x"


def test_app_names_with_a_namespace_prefix_use_a_dash() -> None:
    out = by_name(
        run(
            "rules:\n  - match: {kind: ClusterRole}\n    others: rename\n    renameTo: '{app}-{name}'\n",
            app=App("argocd_team-b", "team-b", "team-b"),
        )
    )
    assert "ClusterRole/argocd-team-b-manager" in out


def test_a_user_reference_that_is_ambiguous_between_groups_is_refused() -> None:
    stream = STREAM + textwrap.dedent(
        """\
        ---
        apiVersion: a.example.io/v1
        kind: Role
        metadata: {name: r}
        ---
        apiVersion: b.example.io/v1
        kind: Role
        metadata: {name: r}
        ---
        apiVersion: example.io/v1
        kind: Widget
        metadata: {name: w}
        spec: {role: r}
        """
    )
    with pytest.raises(
        RuleError,
        match=r"references\[0\]: /spec/role of Widget.example.io w names Role 'r', which is renamed differently "
        r"in groups a.example.io, b.example.io; give the reference a `group:`",
    ):
        run(
            "clusterScopedKinds: [Role]\nnamespacedKinds: [Widget]\nrules:\n"
            "  - match: {group: '*.example.io', kind: Role}\n    others: rename\n    renameTo: '{name}-{app}'\n"
            "references:\n  - {kind: Role, from: {kind: Widget}, path: /spec/role}\n",
            stream,
        )


# --- naming rules -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "kind", "name", "fits"),
    [
        ("", "ConfigMap", "a" * 253, True),
        ("", "ConfigMap", "a" * 254, False),
        ("", "ConfigMap", "a.b-c", True),
        ("", "ConfigMap", "A", False),
        ("", "ConfigMap", "-a", False),
        ("", "Service", "a" * 63, True),
        ("", "Service", "a" * 64, False),
        ("", "Service", "1abc", False),
        ("", "Service", "a.b", False),
        ("rbac.authorization.k8s.io", "ClusterRole", "system:controller:x", True),
        ("rbac.authorization.k8s.io", "ClusterRole", "a/b", False),
        ("rbac.authorization.k8s.io", "RoleBinding", "..", False),
        ("batch", "Job", "a" * 63, True),
        ("batch", "Job", "a" * 64, False),
        ("batch", "CronJob", "a" * 52, True),
        ("batch", "CronJob", "a" * 53, False),
        ("apps", "StatefulSet", "a" * 53, False),
        ("scheduling.k8s.io", "PriorityClass", "system-x", False),
        ("scheduling.k8s.io", "PriorityClass", "team-system-x", True),
        ("example.io", "Widget", "a" * 253, True),
        ("", "Secret", "", False),
    ],
)
def test_naming_rules_follow_the_api_server(group: str, kind: str, name: str, fits: bool) -> None:
    assert (name_rules.rule_for(group, kind).problem(name) is None) is fits


# --- the Namespace hand-off -------------------------------------------------------------------------------------

NAMESPACE = """---
apiVersion: v1
kind: Namespace
metadata:
  name: team-b
  labels: {istio-injection: enabled, pod-security.kubernetes.io/enforce: "true"}
  annotations: {argocd.argoproj.io/sync-options: Prune=false, scheduler.alpha.kubernetes.io/node-selector: pool=a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
"""


def test_the_hand_off_block_keeps_labels_and_annotations_but_not_argo_cd_ones() -> None:
    outcome = run("rules:\n  - match: {kind: Namespace}\n    others: strip\n", NAMESPACE)
    (notice,) = [line for line in outcome.notices if "managedNamespaceMetadata" in line]
    block = notice.split("\n", 1)[1]
    assert block == textwrap.indent(
        textwrap.dedent(
            """\
            syncPolicy:
              managedNamespaceMetadata:
                labels:
                  istio-injection: enabled
                  pod-security.kubernetes.io/enforce: 'true'
                annotations:
                  scheduler.alpha.kubernetes.io/node-selector: pool=a
              syncOptions:
              - CreateNamespace=true"""
        ),
        "  ",
    )


def test_no_hand_off_when_some_app_owns_the_namespace() -> None:
    outcome = run("rules:\n  - match: {kind: Namespace}\n    owner: team-a\n", NAMESPACE)
    assert not managed_namespace.orphaned(outcome.stripped)
    assert not [line for line in outcome.notices if "managedNamespaceMetadata" in line]


def test_no_hand_off_for_a_namespace_without_labels_or_annotations() -> None:
    stream = (
        "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    )
    outcome = run("rules:\n  - match: {kind: Namespace}\n    others: strip\n", stream)
    assert outcome.notices == []


# --- rules that the loader refuses or accepts -------------------------------------------------------------------


def test_renaming_an_apiservice_is_refused_when_the_file_is_read() -> None:
    with pytest.raises(ConfigError, match=r"rules\[0\].others: cannot rename an APIService: .* \(<version>.<group>\)"):
        run("rules:\n  - match: {kind: APIService}\n    others: rename\n")


def test_a_reference_without_from_group_matches_the_kind_in_any_group() -> None:
    ownership = rules.parse(
        HEAD + "references:\n  - {kind: ClusterRole, from: {kind: Widget}, path: /spec/role}\n",
        Path("chartshare.yaml"),
        "chartshare.yaml",
    )
    assert ownership.references[0].from_group is None
