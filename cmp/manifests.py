"""helm's output stream in, Argo CD's input stream out.

Documents are split as text on the separator lines Kubernetes' YAML reader recognises, so each keeps
helm's exact bytes and its `# Source:` template path. A document no stage changed is written back
byte-for-byte; only changed ones are re-serialised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from . import goyaml
from .errors import ManifestError
from .model import Resource

# k8s.io/apimachinery's YAMLReader: a line starting with `---` followed by nothing but blanks or a comment.
_SEPARATOR = re.compile(r"^---[ \t]*(?:#[^\n]*)?(?:\n|\Z)", re.M)
_SOURCE = re.compile(r"^# Source: (.+?)[ \t]*$", re.M)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One document's text as helm wrote it, and the template it came from."""

    text: str
    source: str


def split(stream: str) -> Iterator[Chunk]:
    """Cut a YAML stream into documents.

    A document without `# Source:` inherits the previous one's (helm writes a CRD file whole, so its second
    document carries no comment of its own). A comment-only document (helm's `# Source:` line followed by a
    file's own `---`) is glued, separator included, to the front of the next one, so helm's bytes survive.
    """
    source = ""
    pending = ""
    pieces = _SEPARATOR.split(stream)
    separators = _SEPARATOR.findall(stream)
    for position, text in enumerate(pieces):
        found = _SOURCE.search(text)
        if found:
            source = found.group(1)
        if not _has_content(text):
            if text.strip() and position < len(separators):
                pending += text + separators[position]
            continue
        yield Chunk(pending + text, source)
        pending = ""


def _has_content(text: str) -> bool:
    """Whether a document holds anything but blank lines and comments."""
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


def parse(stream: str) -> list[Resource]:
    """Every object of the stream, `List`s flattened, in order; empty documents dropped as Argo CD does."""
    resources: list[Resource] = []
    for chunk in split(stream):
        obj = _load(chunk)
        if obj is None:
            continue
        if not isinstance(obj, dict):
            raise ManifestError(f"{_where(chunk)}: a document must be a mapping, got {type(obj).__name__}")
        items = obj.get("items")
        if isinstance(items, list):  # Argo CD flattens anything with an `items` list
            for position, item in enumerate(items):
                if not isinstance(item, dict):
                    raise ManifestError(f"{_where(chunk)}: items[{position}] of a List is not a mapping")
                resources.append(_checked(Resource(item, chunk.source, None, len(resources)), chunk))
        else:
            resources.append(_checked(Resource(obj, chunk.source, chunk.text, len(resources)), chunk))
    return resources


def _load(chunk: Chunk) -> Any:
    try:
        return goyaml.load(chunk.text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ManifestError(f"{_where(chunk)}:{line} not valid YAML: {problem}") from None
    except RecursionError:
        raise ManifestError(f"{_where(chunk)}: a document is nested too deeply to process") from None


def _checked(resource: Resource, chunk: Chunk) -> Resource:
    if not resource.kind or not isinstance(resource.obj.get("kind"), str):
        raise ManifestError(
            f"{_where(chunk)}: a document has no `kind` (Argo CD rejects the whole output); "
            "fix the template so every document is a complete Kubernetes object"
        )
    if not resource.api_version:
        raise ManifestError(f"{_where(chunk)}: {resource.kind} has no `apiVersion`")
    if not resource.name and not resource.metadata.get("generateName"):
        raise ManifestError(f"{_where(chunk)}: {resource.kind} has no `metadata.name`")
    return resource


def _where(chunk: Chunk) -> str:
    return f"template {chunk.source}" if chunk.source else "helm output"


def emit_yaml(resources: Iterable[Resource]) -> str:
    """The `---`-separated stream: helm's own text for unchanged objects, a fresh dump for changed ones."""
    parts: list[str] = []
    for resource in resources:
        if resource.text is not None and not resource.metadata_changed:
            text = resource.text
        else:
            header = f"# Source: {resource.source}\n" if resource.source else ""
            try:
                text = header + goyaml.dump(resource.obj)
            except RecursionError:
                raise ManifestError(f"{resource.id}: nested too deeply to write back") from None
        parts.append("---\n" + text if text.endswith("\n") else "---\n" + text + "\n")
    return "".join(parts)


def emit_json(resources: Iterable[Resource]) -> str:
    """One compact JSON object per line, the other stream format Argo CD reads."""
    return "".join(_json(resource) + "\n" for resource in resources)


def _json(resource: Resource) -> str:
    """Strict JSON: `.nan`/`.inf` have no JSON spelling (Kubernetes refuses them too), so they are an error."""
    try:
        return json.dumps(resource.obj, separators=(",", ":"), allow_nan=False)
    except ValueError:
        raise ManifestError(f"{resource.id}: holds .nan or .inf, which JSON (and Kubernetes) cannot carry") from None
    except RecursionError:
        raise ManifestError(f"{resource.id}: nested too deeply to write as JSON") from None


def refuse_oversize(data: bytes, limit: int) -> None:
    """Argo CD fails a manifest response over its gRPC limit with an opaque error, deep in the repo-server;
    say it here, in numbers, instead."""
    if len(data) > limit:
        raise ManifestError(
            f"the output is {len(data):,} bytes, over Argo CD's {limit >> 20} MiB gRPC message limit "
            "(ARGOCD_GRPC_MAX_SIZE_MB); split the app, strip resources, or raise the limit on the repo-server "
            "and this sidecar"
        )
