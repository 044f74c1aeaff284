"""A rendered resource as the post-render steps see it: helm's object until a step edits a copy of it."""

from __future__ import annotations

from typing import Any

from cmp.manifests import Resource
from cmp.model import split_api_version


def copied(value: Any) -> Any:
    """A deep copy of a YAML value (dicts, lists and scalars only: faster than copy.deepcopy)."""
    if isinstance(value, dict):
        return {key: copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copied(item) for item in value]
    return value


class Subject:
    """One resource: its identity as helm rendered it (kustomize's original id, which selectors also
    match), and its object as the steps so far left it. A step that edits only the metadata (labels and
    annotations on most kinds) edits a copy of the metadata alone, so a 200 KB CRD is never parsed whole
    for a label; the first step that needs more takes the whole object, that copy in it."""

    __slots__ = ("_meta_edit", "_obj", "deleted", "origin", "resource")

    def __init__(self, resource: Resource) -> None:
        self.resource = resource
        self._obj: dict[str, Any] | None = None
        self._meta_edit: dict[str, Any] | None = None
        self.deleted = False
        self.origin = (resource.group, resource.version, resource.kind, resource.name, resource.namespace)

    @property
    def edited(self) -> bool:
        """Whether a step took the whole object to edit."""
        return self._obj is not None

    @property
    def metadata_edit(self) -> dict[str, Any] | None:
        """The metadata as the steps left it, when they edited nothing else (None otherwise)."""
        return self._meta_edit if self._obj is None else None

    @property
    def obj(self) -> dict[str, Any]:
        """The object to edit (a copy of helm's, made on first use, with the metadata edited so far)."""
        if self._obj is None:
            self._obj = copied(self.resource.obj)
            if self._meta_edit is not None:
                self._obj["metadata"] = self._meta_edit  # the same maps: a Setter's shared nodes stay shared
                self._meta_edit = None
        return self._obj

    @obj.setter
    def obj(self, value: dict[str, Any]) -> None:
        self._obj = value
        self._meta_edit = None

    def metadata(self) -> dict[str, Any]:
        """The metadata to edit: the whole object's once a step took it, else a copy of helm's alone."""
        if self._obj is not None:
            meta = self._obj.get("metadata")
            if not isinstance(meta, dict):
                meta = self._obj["metadata"] = {}
            return meta
        if self._meta_edit is None:
            self._meta_edit = copied(self.resource.metadata)
        return self._meta_edit

    @property
    def api_version(self) -> str:
        return str(self._obj.get("apiVersion") or "") if self._obj is not None else self.resource.api_version

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]

    @property
    def version(self) -> str:
        return split_api_version(self.api_version)[1]

    @property
    def kind(self) -> str:
        return str(self._obj.get("kind") or "") if self._obj is not None else self.resource.kind

    def _meta(self) -> dict[str, Any]:
        if self._obj is None:
            return self.resource.metadata if self._meta_edit is None else self._meta_edit
        meta = self._obj.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        return str(self._meta().get("name") or "") if self._obj is not None else self.resource.name

    @property
    def namespace(self) -> str:
        return str(self._meta().get("namespace") or "") if self._obj is not None else self.resource.namespace

    def tags(self, key: str) -> dict[str, Any]:
        """`labels` or `annotations` of the metadata."""
        found = self._meta().get(key)
        return found if isinstance(found, dict) else {}

    def label(self) -> str:
        group = self.group
        return f"{group + '/' if group else ''}{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"
