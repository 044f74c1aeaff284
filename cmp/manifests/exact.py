"""The exact reading of one document: go-yaml's rules through the libyaml parser (goyaml.load).

Every fast reading in this package is held to this one by property tests; a document the fast readings
are unsure of is read here.
"""

from __future__ import annotations

from typing import Any

import yaml

from cmp import goyaml
from cmp.errors import ManifestError


def where(source: str) -> str:
    """How a message names the document: its template, else helm's output."""
    return f"template {source}" if source else "helm output"


def load_object(text: str, source: str) -> dict[str, Any]:
    """The whole object of a document the scan identified (so it is a mapping, unless the YAML is broken)."""
    obj = load(text, source)
    if not isinstance(obj, dict):
        raise ManifestError(f"{where(source)}: a document must be a mapping, got {type(obj).__name__}")
    return obj


def load_metadata(text: str, span: tuple[int, int] | None, source: str) -> dict[str, Any] | None:
    """`metadata` alone, parsed from its entry at `span` in the text; None when the object has no such
    mapping (or no such entry)."""
    if span is None:
        return None
    start, end = span
    value = load(text[start:end], source)
    metadata = value.get("metadata") if isinstance(value, dict) else None
    return metadata if isinstance(metadata, dict) else None


def load(text: str, source: str) -> Any:
    """The document as Kubernetes reads it; a ManifestError naming the template and line otherwise."""
    try:
        return goyaml.load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ManifestError(f"{where(source)}:{line} not valid YAML: {problem}") from None
    except RecursionError:
        raise ManifestError(f"{where(source)}: a document is nested too deeply to process") from None
