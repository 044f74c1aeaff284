"""plugin.yaml, generated from the parameter table.

Argo CD ignores unknown keys in plugin.yaml and reports nothing, so a hand-edited file drifts silently from
what the CLI accepts. The committed plugin.yaml is this module's output (`make plugin-yaml`), and a test
fails when the two differ.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

from cmp.inputs.parameters import PARAMETERS, Parameter

NAME = "chartshare"
VERSION = "v1"
CONFIG_PATH = "/home/argocd/cmp-server/config/plugin.yaml"  # where argocd-cmp-server reads it
DISCOVER_FILE = "./chartshare.yaml"
# argv without a shell; argocd-cmp-server looks `chartshare` up on the sidecar's PATH.
COMMANDS: dict[str, list[str]] = {
    "init": ["chartshare", "init"],
    "generate": ["chartshare", "generate"],
    "dynamic": ["chartshare", "parameters"],
}
HEADER = (
    "# Generated from cmp/inputs/parameters.py by `make plugin-yaml`: edit the parameter table there, not this file.\n"
    "# Applications name this plugin `chartshare-v1`, or leave `plugin: {}` and let discovery find chartshare.yaml.\n"
)


def static_announcement(parameter: Parameter) -> dict[str, Any]:
    """One entry of spec.parameters.static, in the field order of Argo CD's ParameterAnnouncement."""
    entry: dict[str, Any] = {
        "name": parameter.name,
        "title": parameter.title,
        "tooltip": parameter.tooltip,
        "collectionType": parameter.kind,
    }
    if parameter.default:
        entry[parameter.kind] = parameter.default
    return entry


def document() -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ConfigManagementPlugin",
        "metadata": {"name": NAME},
        "spec": {
            "version": VERSION,
            "init": {"command": COMMANDS["init"]},
            "generate": {"command": COMMANDS["generate"]},
            "discover": {"fileName": DISCOVER_FILE},
            "parameters": {
                "static": [static_announcement(parameter) for parameter in PARAMETERS],
                "dynamic": {"command": COMMANDS["dynamic"]},
            },
        },
    }


def render() -> str:
    """The exact text of the committed plugin.yaml."""
    body = yaml.safe_dump(document(), sort_keys=False, default_flow_style=False, width=1000, allow_unicode=True)
    return HEADER + body


if __name__ == "__main__":
    sys.stdout.write(render())
