"""The values that flow through the pipeline: resource identity, resources and decisions."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, order=True)
class ResourceId:
    """What Argo CD tracks an object by: group, kind, namespace and name ("" for none)."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{kind} {self.namespace}/{self.name}" if self.namespace else f"{kind} {self.name}"


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> (`apps`, `v1`); `v1` -> (``, `v1`)."""
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass(slots=True)
class Resource:
    """One object of the render.

    `text` holds helm's bytes for the document; an unchanged resource is emitted from it byte-for-byte.
    A change to `metadata` alone sets `metadata_changed` and keeps `text` (the emitter may then rewrite just
    that block); any other change drops `text`, and the object is re-serialised whole.
    """

    obj: dict[str, Any]
    source: str
    text: str | None
    index: int
    metadata_changed: bool = False

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion") or "")

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]

    @property
    def version(self) -> str:
        return split_api_version(self.api_version)[1]

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind") or "")

    @property
    def metadata(self) -> dict[str, Any]:
        meta = self.obj.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")

    @property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace") or "")

    @property
    def labels(self) -> dict[str, Any]:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def id(self) -> ResourceId:
        return ResourceId(self.group, self.kind, self.namespace, self.name)

    @property
    def changed(self) -> bool:
        return self.text is None or self.metadata_changed

    def mark_changed(self, *, metadata_only: bool = False) -> None:
        if metadata_only:
            self.metadata_changed = True
        else:
            self.text = None


@dataclass(frozen=True, slots=True)
class App:
    """The Application being rendered, as Argo CD names it, and what helm was told."""

    name: str  # ARGOCD_APP_NAME: `<namespace>_<name>` for apps outside the control-plane namespace
    release: str
    namespace: str  # the destination namespace

    @property
    def dns_name(self) -> str:
        """`{app}` in renameTo: DNS names have no `_`."""
        return self.name.replace("_", "-")


class Action(enum.Enum):
    """What one app does with one resource."""

    KEEP = "keep"
    STRIP = "strip"
    RENAME = "rename"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict on one resource for one app, with the rule and the reason behind it."""

    action: Action
    reason: str
    rule: int | None = None
    protect: bool = False
    rename_to: str | None = None
    patch: tuple[dict[str, Any], ...] = field(default=())
    owners: tuple[str, ...] = ()  # the owner globs behind the verdict; () when nobody owns the object

    @property
    def origin(self) -> str:
        return f"rules[{self.rule}]" if self.rule is not None else "no rule"
