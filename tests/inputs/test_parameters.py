"""Application parameters decoded from every channel Argo CD uses, with the plugin's precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmp.errors import ParameterError, UsageError
from cmp.inputs import parameters as params
from cmp.inputs.config import build, merged, release_from_app


def test_app_parameters_decode_every_type() -> None:
    raw = (
        '[{"name":"values-files","array":["a.yaml","b.yaml"]},{"name":"set","map":{"b":"2","a":"1"}},'
        '{"name":"release-name","string":"web"}]'
    )
    assert params.from_app_parameters(raw) == {
        "values-files": ("a.yaml", "b.yaml"),
        "set": (("a", "1"), ("b", "2")),
        "release-name": "web",
    }


def test_literal_null_means_no_parameters() -> None:
    assert params.from_app_parameters("null") == {}


def test_unknown_parameter_lists_the_valid_ones() -> None:
    with pytest.raises(ParameterError, match=r"unknown parameter 'value-files'.*valid parameters: release-name"):
        params.from_app_parameters('[{"name":"value-files","array":["a"]}]')


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[{", "not valid JSON"),
        ('{"name":"x"}', "must be a JSON array"),
        ('[{"string":"x"}]', "string `name`"),
        ('[{"name":"values-files","string":"a.yaml"}]', "is a array, but the Application gave string"),
        ('[{"name":"set","map":{"a":1}}]', "map of strings"),
        ('[{"name":"include-crds","string":"yes"}]', "must be one of: true, false"),
    ],
)
def test_malformed_app_parameters_are_refused(raw: str, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        params.from_app_parameters(raw)


def test_param_variables_decode_strings_and_arrays_in_index_order() -> None:
    env = {"PARAM_RELEASE_NAME": "web", "PARAM_VALUES_FILES_10": "k.yaml", "PARAM_VALUES_FILES_2": "c.yaml"}
    assert params.from_param_variables(env) == {"release-name": "web", "values-files": ("c.yaml", "k.yaml")}


def test_map_parameters_through_param_variables_are_refused_because_keys_are_lossy() -> None:
    with pytest.raises(ParameterError, match="escaped"):
        params.from_param_variables({"PARAM_SET_IMAGE_TAG": "1.2"})


def test_unknown_param_variable_is_refused() -> None:
    with pytest.raises(ParameterError, match="PARAM_RELEASE"):
        params.from_param_variables({"PARAM_RELEASE": "x"})


def test_plugin_env_decodes_arrays_and_maps() -> None:
    env = {"ARGOCD_ENV_CHARTSHARE_VALUES_FILES": "a.yaml, b.yaml", "ARGOCD_ENV_CHARTSHARE_SET": "x=1,y=a=b"}
    assert params.from_plugin_env(env) == {"values-files": ("a.yaml", "b.yaml"), "set": (("x", "1"), ("y", "a=b"))}


def test_unknown_plugin_env_is_refused() -> None:
    with pytest.raises(ParameterError, match="ARGOCD_ENV_CHARTSHARE_VALUE_FILE"):
        params.from_plugin_env({"ARGOCD_ENV_CHARTSHARE_VALUE_FILE": "a"})


def test_precedence_is_flags_then_parameters_then_plugin_env() -> None:
    env = {
        "ARGOCD_APP_PARAMETERS": '[{"name":"release-name","string":"from-params"}]',
        "ARGOCD_ENV_CHARTSHARE_RELEASE_NAME": "from-env",
        "ARGOCD_ENV_CHARTSHARE_NAMESPACE": "env-ns",
        "PARAM_RELEASE_NAME": "ignored-when-app-parameters-exist",
    }
    assert merged({"release-name": None}, env) == {"release-name": "from-params", "namespace": "env-ns"}
    assert merged({"release-name": "from-flag"}, env)["release-name"] == "from-flag"


def test_param_variables_count_only_without_app_parameters() -> None:
    assert merged({}, {"PARAM_RELEASE_NAME": "legacy"}) == {"release-name": "legacy"}
    assert merged({}, {"PARAM_RELEASE_NAME": "legacy", "ARGOCD_APP_PARAMETERS": "null"}) == {}


@pytest.mark.parametrize(("app", "release"), [("web", "web"), ("team-a_web", "web")])
def test_release_name_drops_the_app_namespace_prefix(app: str, release: str) -> None:
    assert release_from_app(app) == release


def test_every_parameter_has_a_unique_env_name() -> None:
    assert len({p.env_name for p in params.PARAMETERS}) == len(params.PARAMETERS)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"release-name": "web\n"}, "release-name 'web\\\\n' is not a valid helm release name"),
        ({"namespace": "shoong\n"}, "namespace 'shoong\\\\n' is not a valid namespace name"),
        ({"kube-version": "1.31.0\n"}, "kube-version '1.31.0\\\\n' is not a version"),
    ],
)
def test_a_trailing_newline_does_not_slip_through_validation(
    tmp_path: Path, flags: dict[str, str], message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        build(tmp_path, {**flags, "repo-root": str(tmp_path)}, {"ARGOCD_APP_NAME": "web"})


def test_deeply_nested_app_parameters_are_an_error_not_a_crash() -> None:
    with pytest.raises(ParameterError, match="nested too deeply"):
        params.from_app_parameters("[" * 100_000 + "]" * 100_000)


def test_a_param_index_must_be_ascii_digits() -> None:
    with pytest.raises(ParameterError, match=r"unknown parameter 'PARAM_VALUES_FILES_²'"):
        params.from_param_variables({"PARAM_VALUES_FILES_²": "a.yaml"})


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ('[{"name":"values","string":"a: \\udcff"}]', "values"),  # a raw 0xff byte, as os.environ decodes it
        ('[{"name":"set","map":{"a":"\\ud800"}}]', "set"),  # a lone surrogate, which JSON can spell
    ],
)
def test_parameters_that_are_not_utf8_are_refused(tmp_path: Path, raw: str, name: str) -> None:
    env = {"ARGOCD_APP_NAME": "web", "ARGOCD_APP_PARAMETERS": raw}
    with pytest.raises(ParameterError, match=f"parameter '{name}' is not valid UTF-8 text"):
        build(tmp_path, {"repo-root": str(tmp_path)}, env)


@pytest.mark.parametrize("timeout", ["nan", "inf", "1e308", "3601", "0.5", "soon"])
def test_a_timeout_flag_that_is_no_usable_deadline_is_a_usage_error(tmp_path: Path, timeout: str) -> None:
    with pytest.raises(UsageError, match=rf"--timeout {timeout} is not a number of seconds between 1 and 3600"):
        build(tmp_path, {"timeout": timeout, "repo-root": str(tmp_path)}, {"ARGOCD_APP_NAME": "web"})


@pytest.mark.parametrize("timeout", ["56", "0", "nan", "soon"])
def test_a_timeout_parameter_must_leave_argo_cd_time_to_hear_the_error(tmp_path: Path, timeout: str) -> None:
    env = {"ARGOCD_APP_NAME": "web", "ARGOCD_APP_PARAMETERS": f'[{{"name":"timeout","string":"{timeout}"}}]'}
    with pytest.raises(ParameterError, match=r"parameter 'timeout' is .*from 1 to 55"):
        build(tmp_path, {"repo-root": str(tmp_path)}, env)


def test_a_timeout_parameter_within_argo_cds_deadline_is_helms(tmp_path: Path) -> None:
    env = {"ARGOCD_APP_NAME": "web", "ARGOCD_APP_PARAMETERS": '[{"name":"timeout","string":"55"}]'}
    assert build(tmp_path, {"repo-root": str(tmp_path)}, env).timeout == 55


@pytest.mark.parametrize(("raw", "limit"), [("", 100 << 20), ("200", 200 << 20)])
def test_the_output_limit_follows_argocd_grpc_max_size_mb(tmp_path: Path, raw: str, limit: int) -> None:
    env = {"ARGOCD_APP_NAME": "web", "ARGOCD_GRPC_MAX_SIZE_MB": raw}
    config = build(tmp_path, {"repo-root": str(tmp_path)}, env)
    assert config.max_output == limit


def test_a_bad_grpc_limit_is_refused(tmp_path: Path) -> None:
    env = {"ARGOCD_APP_NAME": "web", "ARGOCD_GRPC_MAX_SIZE_MB": "lots"}
    with pytest.raises(ParameterError, match="ARGOCD_GRPC_MAX_SIZE_MB='lots' is not a whole number"):
        build(tmp_path, {"repo-root": str(tmp_path)}, env)
