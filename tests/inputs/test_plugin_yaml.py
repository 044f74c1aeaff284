"""plugin.yaml is generated from the parameter table and is what argocd-cmp-server accepts."""

from __future__ import annotations

import pytest
from emulator import PluginConfig

from cmp.inputs import parameters as params
from cmp.inputs import plugin_yaml
from conftest import ROOT, run_cli

PLUGIN_YAML = ROOT / "plugin.yaml"


def test_committed_plugin_yaml_is_the_generators_output() -> None:
    assert PLUGIN_YAML.read_text(encoding="utf-8") == plugin_yaml.render(), (
        "plugin.yaml drifted from cmp/params.py: run `make plugin-yaml` and commit the result"
    )


def test_plugin_yaml_passes_argo_cds_validation_and_names_the_plugin_chartshare_v1() -> None:
    config = PluginConfig.load(PLUGIN_YAML)
    assert config.plugin_name == "chartshare-v1"
    assert config.discover_file_name == "./chartshare.yaml"
    assert config.init.argv == ["chartshare", "init"]
    assert config.generate.argv == ["chartshare", "generate"]
    assert config.dynamic.argv == ["chartshare", "parameters"]
    assert not config.preserve_file_mode
    assert not config.provide_git_creds


def test_every_parameter_is_announced_with_title_tooltip_and_collection_type() -> None:
    static = {entry["name"]: entry for entry in PluginConfig.load(PLUGIN_YAML).static}
    assert list(static) == [parameter.name for parameter in params.PARAMETERS]
    for parameter in params.PARAMETERS:
        entry = static[parameter.name]
        assert entry["title"] == parameter.title
        assert entry["tooltip"] == parameter.tooltip
        assert entry["collectionType"] == parameter.kind


@pytest.mark.parametrize("command", ["init", "generate", "parameters"])
def test_every_command_plugin_yaml_runs_exists(command: str) -> None:
    result = run_cli([command, "--help"])
    assert result.exit_code == 0, result.stderr


def test_announced_defaults_are_the_ones_the_cli_applies() -> None:
    static = {entry["name"]: entry for entry in PluginConfig.load(PLUGIN_YAML).static}
    assert static["include-crds"]["string"] == "true"
    assert static["skip-tests"]["string"] == "false"
    assert all("string" not in static[name] for name in ("release-name", "namespace", "config"))
