"""`images`: kustomize's image transformer. An entry's `name` is matched against the name part of every
`image` under a `containers` or `initContainers` list anywhere in an object (custom resources included,
CRDs not), and of image volumes; the name, tag and digest are replaced as the entry says."""

from __future__ import annotations

import re
from typing import Any

from cmp.postrender.fields import Image

_FIELDS = ("containers", "initContainers")
_FIELD_SPECS = (  # kustomize's image field specs, beside the walk over containers anywhere
    ("spec", "containers", "image"),
    ("spec", "initContainers", "image"),
    ("spec", "volumes", "image", "reference"),
    ("spec", "template", "spec", "containers", "image"),
    ("spec", "template", "spec", "initContainers", "image"),
    ("spec", "template", "spec", "volumes", "image", "reference"),
)


def split(image: str) -> tuple[str, str, str]:
    """name, tag, digest of an image reference (a registry's port is not a tag)."""
    slash = image.find("/")
    offset = slash if slash > 0 else 0
    search = image[offset:]
    at, colon = search.find("@"), search.find(":")
    if colon < 0 and at < 0:
        return image, "", ""
    if at >= 0 and (at < colon or colon < 0):
        return image[: at + offset], "", image[at + offset + 1 :]
    if at >= 0 and colon >= 0:
        return image[: colon + offset], image[colon + offset + 1 : at + offset], image[at + offset + 1 :]
    return image[: colon + offset], image[colon + offset + 1 :], ""


def matched(image: str, name: str) -> bool:
    """kustomize's match: the entry's name (a regular expression, as kustomize builds it), then an
    optional tag and digest."""
    try:
        pattern = re.compile("^" + name + r"(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$")
    except re.error:
        return False
    return pattern.match(image) is not None


def updated(image: str, entry: Image) -> str:
    if not matched(image, entry.name):
        return image
    name, tag, digest = split(image)
    name = entry.new_name or name
    if entry.new_tag and entry.digest:
        tag, digest = entry.new_tag, entry.digest
    elif entry.new_tag:
        tag, digest = entry.new_tag, ""
    elif entry.digest:
        tag, digest = "", entry.digest
    elif entry.tag_suffix:
        tag, digest = tag + entry.tag_suffix, ""
    return name + (":" + tag if tag else "") + ("@" + digest if digest else "")


def set_images(obj: dict[str, Any], entry: Image) -> bool:
    """Apply one entry to an object; whether an image changed."""
    changed = False
    if obj.get("kind") != "CustomResourceDefinition":
        changed = _walk(obj, entry)
    for path in _FIELD_SPECS:
        changed = _at(obj, path, entry) or changed
    return changed


def _walk(node: Any, entry: Image) -> bool:
    changed = False
    if isinstance(node, dict):
        for key, value in node.items():
            changed = _walk(value, entry) or changed
            if key in _FIELDS and isinstance(value, list):
                for container in value:
                    if isinstance(container, dict) and isinstance(container.get("image"), str):
                        new = updated(container["image"], entry)
                        if new != container["image"]:
                            container["image"] = new
                            changed = True
    elif isinstance(node, list):
        for item in node:
            changed = _walk(item, entry) or changed
    return changed


def _at(node: Any, path: tuple[str, ...], entry: Image) -> bool:
    if isinstance(node, list):
        return any([_at(item, path, entry) for item in node])
    if not isinstance(node, dict) or path[0] not in node:
        return False
    if len(path) == 1:
        value = node[path[0]]
        if isinstance(value, str):
            new = updated(value, entry)
            if new != value:
                node[path[0]] = new
                return True
        return False
    return _at(node[path[0]], path[1:], entry)
