"""chartshare.yaml's post-render fields, once loaded (cmp/ownership/postrender_fields.py reads them)."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, NamedTuple


class Target(NamedTuple):
    """kustomize's selector: group, version, kind, name and namespace are anchored regular expressions;
    the label and annotation selectors are Kubernetes label selectors."""

    group: str = ""
    version: str = ""
    kind: str = ""
    name: str = ""
    namespace: str = ""
    label_selector: str = ""
    annotation_selector: str = ""

    def describe(self) -> str:
        parts = zip(
            ("group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector"),
            self,
            strict=True,
        )
        return "{" + ", ".join(f"{key}: {value}" for key, value in parts if value) + "}"


class Patch(NamedTuple):
    """One entry of `patches` (or of the legacy `patchesStrategicMerge` / `patchesJson6902`): strategic
    merge documents or JSON 6902 operations, the target, kustomize's options and chartshare's `apps`."""

    where: str  # `chartshare.yaml:12: patches[0]`: the start of every message about it
    documents: tuple[dict[str, Any], ...]  # strategic merge patches; () for JSON 6902
    operations: tuple[dict[str, Any], ...] | None  # JSON 6902 operations; None for strategic merge
    target: Target | None = None
    allow_name_change: bool = False
    allow_kind_change: bool = False
    apps: tuple[str, ...] = ()


class Image(NamedTuple):
    """One entry of `images`."""

    where: str
    name: str
    new_name: str = ""
    new_tag: str = ""
    digest: str = ""
    tag_suffix: str = ""
    apps: tuple[str, ...] = ()


class Labels(NamedTuple):
    """One entry of `labels` (the legacy `commonLabels` is one with selectors)."""

    where: str
    pairs: tuple[tuple[str, str], ...]
    include_selectors: bool = False
    include_templates: bool = False
    apps: tuple[str, ...] = ()


class PostRender(NamedTuple):
    """The post-render fields, in the order kustomize applies them."""

    strategic: tuple[Patch, ...] = ()  # patchesStrategicMerge (legacy)
    patches: tuple[Patch, ...] = ()
    labels: tuple[Labels, ...] = ()  # `labels` entries, then commonLabels
    annotations: tuple[tuple[str, str], ...] = ()  # commonAnnotations
    json6902: tuple[Patch, ...] = ()  # patchesJson6902 (legacy)
    images: tuple[Image, ...] = ()
    files: tuple[Path, ...] = ()  # the files `path:` entries name (they count in the render cache's key)
    notices: tuple[str, ...] = ()  # what the legacy fields print

    @property
    def empty(self) -> bool:
        return not (self.strategic or self.patches or self.labels or self.annotations or self.json6902 or self.images)


def for_app(apps: tuple[str, ...], app: str) -> bool:
    """Whether an entry with these `apps` globs applies to the app (no globs: every app)."""
    return not apps or any(fnmatch.fnmatchcase(app, pattern) for pattern in apps)
