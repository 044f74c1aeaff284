"""Tracking methods in --live: label and annotation+label tracking find the prune risks annotation tracking
finds on the same objects, and an object of another installation is never taken for ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fleet_builders import path_with_kubectl

import fetch_helm
from cmp.check.analysis.live import Tracking, read_argocd_cm, tracking
from conftest import ROOT, run_cli

FLEET = ROOT / "examples" / "fleet"
ARGS = [
    "check",
    str(FLEET / "argocd"),
    "--repo-root",
    str(FLEET),
    "--repo",
    f"https://git.example.com/platform/fleet.git={FLEET}",
    "--clusters",
    str(FLEET / "clusters" / "clusters.yaml"),
    "--format",
    "json",
    "--offline",  # the fleet's Helm-repository app is a public chart: never fetched by the tests
]


def _risks(*extra: str) -> list[dict[str, Any]]:
    env = {"CHARTSHARE_HELM": str(fetch_helm.ensure(4)), "PATH": path_with_kubectl()}
    result = run_cli([*ARGS, *extra], env=env)
    assert result.exit_code == 1, result.stderr
    risks: list[dict[str, Any]] = json.loads(result.stdout)["prune_risks"]
    return risks


def _both(tmp_path: Path) -> Path:
    """The annotation dump with the default instance label added: what annotation+label tracking leaves."""
    dump = yaml.safe_load((FLEET / "live" / "prod-eu.yaml").read_text())
    for item in dump["items"]:
        app = item["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"].split(":")[0]
        item["metadata"].setdefault("labels", {})["app.kubernetes.io/instance"] = app
    path = tmp_path / "both.yaml"
    path.write_text(yaml.safe_dump(dump))
    return path


def test_label_and_annotation_label_tracking_give_the_prune_risks_of_annotation_tracking(tmp_path: Path) -> None:
    by_annotation = _risks("--live", str(FLEET / "live" / "prod-eu.yaml"))
    assert [(risk["kind"], risk["name"], risk["app"]) for risk in by_annotation] == [
        ("Namespace", "shop", "cart-prod-eu")
    ]
    labels = FLEET / "live" / "prod-eu-labels.yaml"
    assert _risks("--live", str(labels), "--argocd-cm", str(FLEET / "live" / "argocd-cm-labels.yaml")) == by_annotation
    flags = ("--tracking-method", "label", "--instance-label-key", "argocd.example.com/app")
    assert _risks("--live", str(labels), *flags) == by_annotation
    assert _risks("--live", str(_both(tmp_path)), "--tracking-method", "annotation+label") == by_annotation


def test_with_an_installation_id_only_objects_of_that_installation_are_ours() -> None:
    risks = _risks("--live", str(FLEET / "live" / "prod-eu.yaml"), "--installation-id", "staging-argocd")
    assert [(risk["kind"], risk["name"], risk["app"]) for risk in risks] == [
        ("ResourceQuota", "shop-quota", "cart-prod-eu")
    ]


NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}


@pytest.mark.parametrize(
    ("annotations", "labels", "how", "app"),
    [
        ({"argocd.argoproj.io/tracking-id": "a:/Namespace:/shop"}, {}, Tracking(), "a"),
        (
            {"argocd.argoproj.io/tracking-id": "a:/Namespace:/other"},
            {},
            Tracking(),
            None,
        ),  # an id copied from elsewhere
        ({}, {"app.kubernetes.io/instance": "b"}, Tracking("label"), "b"),
        ({}, {"app.kubernetes.io/instance": "b"}, Tracking(), None),  # annotation tracking ignores the label
        (
            {"argocd.argoproj.io/tracking-id": "a:/Namespace:/shop"},
            {"app.kubernetes.io/instance": "b"},
            Tracking("annotation+label"),
            "a",
        ),
        (
            {"argocd.argoproj.io/tracking-id": "a:/Namespace:/shop", "argocd.argoproj.io/installation-id": "x"},
            {},
            Tracking(),
            None,
        ),
        ({"argocd.argoproj.io/installation-id": "x"}, {"app.kubernetes.io/instance": "b"}, Tracking("label"), None),
        ({"argocd.argoproj.io/tracking-id": "a:/Namespace:/shop"}, {}, Tracking(installation_id="x"), None),
    ],
)
def test_which_app_tracks_a_live_object(
    annotations: dict[str, str], labels: dict[str, str], how: Tracking, app: str | None
) -> None:
    obj = {**NAMESPACE, "metadata": {"name": "shop", "annotations": annotations, "labels": labels}}
    found = tracking(obj, how)
    assert (found[0] if found else None) == app


def test_argocd_cm_gives_the_three_settings_and_refuses_an_unknown_method(tmp_path: Path) -> None:
    errors: list[str] = []
    assert read_argocd_cm(FLEET / "live" / "argocd-cm-labels.yaml", errors) == {
        "method": "label",
        "label_key": "argocd.example.com/app",
    }
    bad = tmp_path / "cm.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n"
        "  application.resourceTrackingMethod: labels\n  installationID: x\n"
    )
    read_argocd_cm(bad, errors)
    assert errors == [
        f"{bad}: data.application.resourceTrackingMethod 'labels' is not one of annotation, label, annotation+label"
    ]
