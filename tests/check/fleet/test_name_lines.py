"""Where each Application is defined: the line of its metadata.name, per document, as the reports point at
it (SARIF's location), read from the parser's events without composing anything."""

from __future__ import annotations

from pathlib import Path

from cmp.check.fleet.applications import MAX_NAME_DEPTH, name_lines

MANIFESTS = """\
# the apps
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  labels: {name: not-this}
  annotations:
    name: nor-this
  name: first
spec: {metadata: {name: nor-this-one}}
---
---
kind: Application
metadata: {name: flow}
---
kind: Application
spec:
  name: no-metadata-name
"""


def test_each_document_gives_the_line_of_its_own_metadata_name(tmp_path: Path) -> None:
    path = tmp_path / "apps.yaml"
    path.write_text(MANIFESTS)
    assert name_lines(path) == [9, 14, 16]  # an empty document is not counted; no name: the document's start


def test_nesting_past_the_bound_is_not_followed_and_a_bad_file_has_no_lines(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("[" * (MAX_NAME_DEPTH + 1) + "]" * (MAX_NAME_DEPTH + 1) + "\n")
    assert name_lines(path) == []
    path.write_text("a: [")
    assert name_lines(path) == []
    assert name_lines(tmp_path / "missing.yaml") == []
