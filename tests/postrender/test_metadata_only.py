"""Labels and annotations that go only into `metadata` (every kind but the workloads' pod templates) edit
the metadata alone: the rest of the document is never parsed and keeps helm's bytes, and the result is
the object path's."""

from __future__ import annotations

from pathlib import Path

import yaml

from cmp import goyaml, manifests
from cmp.model import App
from cmp.ownership import rules
from cmp.ownership.process import process

CRD = """# Source: c/crds/ws.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ws.example.io
  annotations: {keep: "yes"}
spec:
  group: example.io
  names: {kind: W, plural: ws}
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: 'an image of "containers", with {braces} and
          a quote spanning lines'
        type: object
"""
CONFIG_MAP = """# Source: c/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels:
    team: before  # overwritten
data:
  image: "x"
"""
DEPLOYMENT = """# Source: c/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: web:1
"""
STREAM = "---\n".join([CRD, CONFIG_MAP, DEPLOYMENT])
FIELDS = {
    "labels": [{"pairs": {"team": "platform"}, "includeTemplates": True}, {"pairs": {"tier": "one"}}],
    "commonAnnotations": {"owner": "platform"},
}


def _emitted(tmp_path: Path, *, exact: bool) -> tuple[list[dict[str, object]], list[manifests.Resource]]:
    text = yaml.safe_dump({"apiVersion": "chartshare/v1", "kind": "ChartShare", "unowned": "keep", **FIELDS})
    ownership = rules.parse(text, tmp_path / "chartshare.yaml", "chartshare.yaml", tmp_path)
    outcome = process(manifests.parse(STREAM, exact=exact), ownership, App("app", "rel", "ns"))
    resources = [applied.resource for applied in outcome.emitted]
    return [obj for obj in goyaml.load_all(manifests.emit_yaml(resources)) if obj], resources


def test_metadata_only_labels_and_annotations_read_nothing_else(tmp_path: Path) -> None:
    got, resources = _emitted(tmp_path, exact=False)
    expected, _ = _emitted(tmp_path, exact=True)
    assert got == expected
    assert [resource.read_exactly for resource in resources] == [False, False, True]  # the pod template's
    crd, config_map = got[0], got[1]
    assert crd["metadata"]["labels"] == {"team": "platform", "tier": "one"}  # type: ignore[index]
    assert crd["metadata"]["annotations"] == {"keep": "yes", "owner": "platform"}  # type: ignore[index]
    assert config_map["metadata"]["labels"] == {"team": "platform", "tier": "one"}  # type: ignore[index]
    written = manifests.emit_yaml(resources)
    assert "a quote spanning lines'\n        type: object\n" in written  # the CRD's spec: helm's bytes
