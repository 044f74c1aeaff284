"""The resources out, as Argo CD reads them: helm's own bytes for all a rule did not change.

The YAML stream is written piece by piece (stream.py): a document no rule changed as helm wrote it, its
separator line included; a change confined to `metadata` as helm's text with that entry alone written
anew; any other change as a fresh dump. What holds no object (comment-only and empty documents) is
written back where it stood, whatever happened to the documents around it, and a List whose items no rule
changed or stripped goes out whole; one that lost or changed an item goes out as its emitted items, one
document each, the way Argo CD reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from cmp import goyaml
from cmp.errors import ManifestError
from cmp.manifests.resource import Resource
from cmp.manifests.stream import Stream


def emit_yaml(resources: Iterable[Resource]) -> str:
    """The `---`-separated stream of the resources, in their order, with what holds no object between."""
    chosen = list(resources)
    whole_lists = _untouched_lists(chosen)
    parts: list[str] = []
    stream: Stream | None = None
    written = 0  # the pieces of `stream` before this one are written (or stripped)
    for resource in chosen:
        place = resource.place
        if place is None:
            _append(parts, "---\n", _text(resource))
            continue
        if place.stream is not stream:
            if stream is not None:
                _kept(parts, stream, written, len(stream.pieces))
            stream, written = place.stream, 0
        if place.piece < written:
            continue  # a later item of a List written whole
        _kept(parts, stream, written, place.piece)
        if (id(stream), place.piece) in whole_lists:
            _append(parts, stream.separator(place.piece), stream.body(place.piece))
            written = place.piece + 1
            continue
        separator = stream.separator(place.piece) if place.item is None else "---\n"
        _append(parts, separator or ("---\n" if parts else ""), _text(resource))
        written = place.piece + 1 if place.item is None else place.piece
    if stream is not None:
        _kept(parts, stream, written, len(stream.pieces))
    return "".join(parts)


def _untouched_lists(resources: list[Resource]) -> set[tuple[int, int]]:
    """The Lists (stream, piece) every item of which is emitted unchanged."""
    counts: dict[tuple[int, int], int] = {}
    lists: dict[tuple[int, int], int] = {}
    for resource in resources:
        place = resource.place
        if place is None or place.item is None:
            continue
        key = (id(place.stream), place.piece)
        lists[key] = place.stream.items[place.piece]
        if not resource.changed:
            counts[key] = counts.get(key, 0) + 1
    return {key for key, total in lists.items() if counts.get(key) == total}


def _kept(parts: list[str], stream: Stream, start: int, end: int) -> None:
    """The pieces in [start, end) that hold no object, as helm wrote them."""
    for piece in range(start, end):
        if piece not in stream.objects:
            _append(parts, stream.separator(piece), stream.body(piece))


def _append(parts: list[str], separator: str, text: str) -> None:
    last = next((part for part in reversed(parts) if part), "\n")
    if not last.endswith("\n"):
        parts.append("\n")  # the previous text ended helm's stream, which had no final newline
    parts += (separator, text)


def _text(resource: Resource) -> str:
    text = resource.text
    if text is None:
        return _dumped(resource)
    if resource.metadata_changed:
        return _with_new_metadata(resource, text)
    return text


# Comment lines at column 0 that end the metadata entry: they belong to what follows, and stay.
_TRAILING_COMMENTS = re.compile(r"(?:\n(?:#[^\n]*+)?[ \t]*+)*+\Z")


def _with_new_metadata(resource: Resource, text: str) -> str:
    """helm's text with only the `metadata` entry re-serialised (the rest keeps its bytes, comment lines
    at column 0 after the entry included), when the scan located that entry; otherwise the whole object,
    dumped."""
    head = resource.head
    metadata = resource.mutable_metadata()
    if head is None or head.metadata is None or metadata is None:
        return _dumped(resource)
    start, end = head.metadata
    end = _comments_start(text, start, end)
    try:
        block = goyaml.dump({"metadata": metadata})
    except RecursionError:
        raise ManifestError(f"{resource.id}: nested too deeply to write back") from None
    # The dumper ends a document holding a `|+` scalar with `...`; inside a document it would end it
    # early, and the entry that follows ends that scalar as well.
    return text[:start] + block.removesuffix("...\n") + text[end:]


_COLUMN_0_COMMENT = re.compile(r"\n#")


def _comments_start(text: str, start: int, end: int) -> int:
    """Where the run of blank and column-0 comment lines that ends text[start:end] starts being comments
    (a column-0 comment ends any block scalar; blank lines before it may still belong to one)."""
    tail = _TRAILING_COMMENTS.search(text, start, end)  # the run begins after the entry's last line
    if tail is None:
        return end
    first = _COLUMN_0_COMMENT.search(text, tail.start(), end)
    return end if first is None else first.start() + 1


def _dumped(resource: Resource) -> str:
    header = f"# Source: {resource.source}\n" if resource.source else ""
    try:
        return header + goyaml.dump(resource.obj)
    except RecursionError:
        raise ManifestError(f"{resource.id}: nested too deeply to write back") from None


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
