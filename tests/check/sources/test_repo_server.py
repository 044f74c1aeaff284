"""Rendering a source the way Argo CD's repo-server would: plugin environment and Helm-source flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmp.check.fleet.applications import Application, Source
from cmp.check.sources import repo_server as argocd
from cmp.errors import ParameterError, PathError
from cmp.helm.template import helm_args
from conftest import make_source


def _app(*sources: Source, name: str = "team_web") -> Application:
    return Application(name, "apps.yaml: Application web", "default", "https://k", "web", sources or (make_source(),))


def test_envsubst_follows_gos_os_expand() -> None:
    env = {"ARGOCD_APP_NAME": "web", "ARGOCD_APP_NAMESPACE": "prod"}
    assert argocd.envsubst("$ARGOCD_APP_NAME-${ARGOCD_APP_NAMESPACE}-$UNKNOWN-$$-$", env) == "web-prod--$-$"


@pytest.mark.parametrize(
    ("value", "escaped"), [("a,b", "a\\,b"), ("a\\,b", "a\\,b"), ("{a,b}", "{a,b}"), ("plain", "plain")]
)
def test_set_values_escape_commas_as_argo_cd_does(value: str, escaped: str) -> None:
    assert argocd.set_value(value) == escaped


def test_the_plugin_sees_parameters_as_json_and_env_with_variables_substituted() -> None:
    source = make_source(
        types=("plugin",),
        plugin={
            "name": "chartshare-v1",
            "env": [{"name": "CHARTSHARE_RELEASE_NAME", "value": "$ARGOCD_APP_NAMESPACE-web"}],
            "parameters": [{"name": "values-files", "array": ["/v.yaml"]}],
        },
    )
    env = argocd.plugin_env(_app(source), source)
    assert env["ARGOCD_APP_NAME"] == "team_web"
    assert env["ARGOCD_APP_NAMESPACE"] == "web"
    assert env["ARGOCD_ENV_CHARTSHARE_RELEASE_NAME"] == "web-web"
    assert json.loads(env["ARGOCD_APP_PARAMETERS"]) == [{"name": "values-files", "array": ["/v.yaml"]}]
    assert env["KUBE_VERSION"] == ""


def test_a_plugin_without_parameters_sends_the_literal_null() -> None:
    source = make_source(types=("plugin",), plugin={})
    assert argocd.plugin_env(_app(source), source)["ARGOCD_APP_PARAMETERS"] == "null"


def test_helm_fields_map_onto_helm_template_flags(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "values.yaml").write_text("a: 1\n")
    (tmp_path / "shared.yaml").write_text("b: 2\n")
    helm = {
        "releaseName": "web-release",
        "namespace": "other",
        "valueFiles": ["values.yaml", "/shared.yaml", "missing.yaml"],
        "ignoreMissingValueFiles": True,
        "values": "ignored: true",
        "valuesObject": {"image": {"tag": "1.0"}},
        "parameters": [
            {"name": "list", "value": "a,b"},
            {"name": "tag", "value": "007", "forceString": True},
            {"name": "who", "value": "$ARGOCD_APP_NAME"},
        ],
        "skipCrds": True,
        "skipTests": True,
        "kubeVersion": "1.31.0",
        "apiVersions": ["example.io/v1"],
    }
    source = make_source(types=("helm",), helm=helm)
    call = argocd.helm_invocation(_app(source), source, (tmp_path / "app").resolve(), tmp_path.resolve())
    assert helm_args(call) == [
        "template",
        ".",
        "--name-template=web-release",
        "--namespace=other",
        "--kube-version=1.31.0",
        "--api-versions=example.io/v1",
        f"--values={tmp_path.resolve()}/app/values.yaml",
        f"--values={tmp_path.resolve()}/shared.yaml",
        "--set=list=a\\,b",
        "--set=who=team_web",
        "--set-string=tag=007",
        "--include-crds=false",
        "--skip-tests",
    ]
    assert call.template.values_inline == "image:\n  tag: '1.0'\n"


def test_without_a_helm_block_the_release_is_the_app_name_and_the_namespace_the_destination(tmp_path: Path) -> None:
    source = make_source()
    call = argocd.helm_invocation(_app(source), source, tmp_path.resolve(), tmp_path.resolve())
    assert (call.template.release, call.template.namespace, call.template.include_crds) == ("web", "web", True)


def test_a_ref_value_file_is_read_from_the_repository(tmp_path: Path) -> None:
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "prod.yaml").write_text("x: 1\n")
    source = make_source(types=("helm",), helm={"valueFiles": ["$config/envs/prod.yaml"]})
    app = _app(source, make_source(label="sources[1]", path=None, ref="config"))
    call = argocd.helm_invocation(app, source, tmp_path.resolve(), tmp_path.resolve())
    assert call.template.values_files == ((tmp_path / "envs" / "prod.yaml").resolve(),)
    unknown = make_source(types=("helm",), helm={"valueFiles": ["$nope/envs/prod.yaml"]})
    with pytest.raises(PathError, match="no source has `ref: nope`"):
        argocd.helm_invocation(_app(unknown), unknown, tmp_path.resolve(), tmp_path.resolve())


@pytest.mark.parametrize(
    ("helm", "message"),
    [
        ({"fileParameters": []}, "not supported by check"),
        ({"valueFile": []}, "unknown field 'valueFile'"),
        ({"values": {"a": 1}}, "use valuesObject"),
        ({"skipCrds": "yes"}, "must be true or false"),
    ],
)
def test_bad_helm_fields_are_named(tmp_path: Path, helm: dict[str, object], message: str) -> None:
    source = make_source(types=("helm",), helm=helm)
    with pytest.raises(ParameterError, match=message):
        argocd.helm_invocation(_app(source), source, tmp_path.resolve(), tmp_path.resolve())
