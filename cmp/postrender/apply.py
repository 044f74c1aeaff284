"""The post-render fields applied to a render, in kustomize's order, before the ownership rules.

kustomize runs its transformers in a fixed order, whatever order a kustomization writes its fields in:
patchesStrategicMerge, patches, labels (each `labels` entry, then commonLabels), commonAnnotations,
patchesJson6902, images. Each step edits copies of the objects it touches (subject.py); at the end an
object no step changed keeps helm's bytes, one changed only in `metadata` keeps the rest of them, and an
object a patch deleted leaves the render before any rule sees it.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from cmp.errors import RuleError
from cmp.manifests import Resource
from cmp.postrender import images, json6902, labels, strategic
from cmp.postrender.fields import Image, Patch, PostRender, for_app
from cmp.postrender.merge_keys import root_type
from cmp.postrender.select import ClusterScoped, SelectorError, by_identity, selected
from cmp.postrender.subject import Subject, copied


class Result(NamedTuple):
    """The resources left, and what the steps did: one line per changed or deleted object, the notices
    (a target that matched nothing: `unmatched` holds those entries' places, for check's warning)."""

    resources: list[Resource]
    changes: list[str]
    notices: list[str]
    unmatched: list[str]


def post_render(resources: list[Resource], fields: PostRender, app: str, cluster: ClusterScoped) -> Result:
    """Apply the fields that concern `app` to the render."""
    run = _Run([Subject(resource) for resource in resources], cluster)
    for patch in fields.strategic + fields.patches:
        if for_app(patch.apps, app):
            run.patch(patch)
    for entry in fields.labels:
        if for_app(entry.apps, app):
            specs = labels.SELECTOR_LABELS if entry.include_selectors else labels.METADATA_LABELS
            specs = labels.TEMPLATE_LABELS if entry.include_templates and not entry.include_selectors else specs
            run.tag(entry.where.rpartition(": ")[2], entry.pairs, specs)
    if fields.annotations:
        run.tag("commonAnnotations", fields.annotations, labels.ANNOTATIONS)
    for patch in fields.json6902:
        if for_app(patch.apps, app):
            run.patch(patch)
    for image in fields.images:
        if for_app(image.apps, app):
            run.image(image)
    return run.settle(list(fields.notices))


class _Run:
    """The render's objects through the steps, and which steps touched which."""

    def __init__(self, subjects: list[Subject], cluster: ClusterScoped) -> None:
        self.subjects = subjects
        self.cluster = cluster
        self.touched: dict[int, list[str]] = {}
        self.notices: list[str] = []
        self.unmatched: list[str] = []
        self.setter = labels.Setter()

    def note(self, subject: Subject, step: str) -> None:
        steps = self.touched.setdefault(id(subject), [])
        if step not in steps:
            steps.append(step)

    def live(self) -> list[Subject]:
        return [subject for subject in self.subjects if not subject.deleted]

    def patch(self, patch: Patch) -> None:
        step = patch.where.rpartition(": ")[2]
        if patch.target is not None:
            try:
                chosen = selected(patch.target, self.live(), self.cluster)
            except (SelectorError, re.error) as error:
                raise RuleError(f"{patch.where}: target: {error}") from None
            if not chosen:
                self.notices.append(
                    f"notice: {patch.where}: target {patch.target.describe()} matches no object in this app's render"
                )
                self.unmatched.append(patch.where)
                return
            for subject in chosen:
                if patch.operations is not None:
                    _json6902(patch, subject)
                else:
                    _merge(patch, patch.documents[0], subject, targeted=True)
                self.note(subject, step)
            return
        for document in patch.documents:
            found = by_identity(document, self.live(), self.cluster)
            if len(found) != 1:
                why = "is not in this app's render" if not found else "is rendered more than once"
                raise RuleError(
                    f"{patch.where}: the object this patch names ({_named(document)}) {why}; fix its apiVersion, "
                    "kind, metadata.name and metadata.namespace, or select objects with `target:`"
                )
            _merge(patch, document, found[0], targeted=False)
            self.note(found[0], step)

    def tag(self, step: str, pairs: tuple[tuple[str, str], ...], specs: tuple[labels.Spec, ...]) -> None:
        for subject in self.live():
            chosen = labels.specs_for(specs, subject.group, subject.version, subject.kind)
            if chosen:
                # the metadata alone when the pairs go nowhere else: nothing else is read
                metadata_only = all(spec.path[0] == "metadata" for spec in chosen)
                target = {"metadata": subject.metadata()} if metadata_only else subject.obj
                self.setter.set(labels.places(target, chosen), pairs)
                self.note(subject, step)

    def image(self, entry: Image) -> None:
        step = entry.where.rpartition(": ")[2]
        for subject in self.live():
            if images.set_images(subject.obj if _may_hold_images(subject) else {}, entry):
                self.note(subject, step)

    def settle(self, notices: list[str]) -> Result:
        """The resources left, each edited object written back unless it equals helm's."""
        kept: list[Resource] = []
        changes: list[str] = []
        for subject in self.subjects:
            steps = ", ".join(self.touched.get(id(subject), ()))
            if subject.deleted:
                changes.append(f"post-render: {subject.label()}: deleted ({steps})")
                continue
            resource = subject.resource
            kept.append(resource)
            edit = subject.metadata_edit
            if edit is not None:
                if edit != resource.metadata:
                    _take_metadata(resource, edit)
                    changes.append(f"post-render: {subject.label()}: {steps}")
                continue
            if not subject.edited:
                continue
            new, old = subject.obj, resource.obj
            if new == old:
                continue
            metadata_only = {k: v for k, v in new.items() if k != "metadata"} == {
                k: v for k, v in old.items() if k != "metadata"
            }
            resource.obj = new
            resource.mark_changed(metadata_only=metadata_only)
            changes.append(f"post-render: {subject.label()}: {steps}")
        return Result(kept, changes, notices + self.notices, self.unmatched)


def _take_metadata(resource: Resource, metadata: dict[str, Any]) -> None:
    """The resource with new metadata and all else as helm wrote it."""
    if resource.parsed:
        resource.obj = {**resource.obj, "metadata": metadata}
        resource.mark_changed(metadata_only=True)
    else:
        resource.replace_metadata(metadata)


def _may_hold_images(subject: Subject) -> bool:
    """Whether the object's text can hold an image at all (no `image` in it: nothing to parse)."""
    text = subject.resource.text
    return subject.edited or text is None or "image" in text


def _named(document: dict[str, Any]) -> str:
    meta = document.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{document.get('apiVersion')} {document.get('kind')} {namespace}{meta.get('name')}"


def _merge(patch: Patch, document: dict[str, Any], subject: Subject, *, targeted: bool) -> None:
    obj = subject.obj
    kind, name, namespace, label = subject.kind, subject.name, subject.namespace, subject.label()
    body = copied(document)
    if targeted:  # the patch takes the object's group and version, and keeps its own kind and name
        body["apiVersion"] = obj.get("apiVersion")
    try:
        merged = strategic.merge(obj, body, root_type(str(obj.get("apiVersion") or ""), kind))
    except strategic.MergeError as error:
        raise RuleError(f"{patch.where}: {label}: {error}") from None
    if merged is None:
        subject.deleted = True
        return
    if not patch.allow_kind_change:
        merged["kind"] = kind
    meta = merged.get("metadata")
    if not isinstance(meta, dict):
        meta = merged["metadata"] = {}
    if not patch.allow_name_change:
        meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    subject.obj = merged


def _json6902(patch: Patch, subject: Subject) -> None:
    assert patch.operations is not None
    try:
        subject.obj = json6902.apply_operations(subject.obj, patch.operations)
    except json6902.PatchFailed as error:
        raise RuleError(f"{patch.where}: {subject.label()}: {error}") from None
