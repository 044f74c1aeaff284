"""helm's stream in, resources out: each document identified from its text, read whole only if need be."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import yaml

from cmp import goyaml
from cmp.errors import ManifestError
from cmp.manifests import structure
from cmp.manifests.exact import load, where
from cmp.manifests.identity import Scanned, has_odd_line_breaks, identify, scan
from cmp.manifests.resource import Place, Resource
from cmp.manifests.stream import Stream, pieces


class Memory(Protocol):
    """What the scan found in documents read before (kept by their bytes, by a caller that may keep it
    across renders): asked before a document is scanned, told what a scan found."""

    def recall(self, text: str) -> Scanned | None: ...

    def remember(self, text: str, scanned: Scanned) -> None: ...


def parse(
    stream: str,
    *,
    exact: bool = False,
    foreseen: Foreseen | None = None,
    memory: Memory | None = None,
) -> list[Resource]:
    """Every object of the stream, `List`s flattened as Argo CD flattens them, in order. Each document is
    identified by the scan and parsed only when something asks for its object; with `exact`, and wherever
    the scan is unsure, it is read whole by the exact reading, the reference the scan is held to. Empty
    and comment-only documents hold no object; the emitter writes them back where they stood. A document
    whose text is in `foreseen` (see `foresee`) takes its identity from there, once; one `memory` recalls
    is not scanned again, and what the scan finds in the others is remembered."""
    whole = Stream(stream, pieces(stream))
    careful = has_odd_line_breaks(stream)
    texts = [stream[piece.start : piece.end] if piece.content else "" for piece in whole.pieces]
    take = foreseen.take if foreseen else None
    known = [take(text) if take and text else None for text in texts]  # each taken once
    if memory is not None and not exact:
        known = [
            memory.recall(text) if found is None and text else found for found, text in zip(known, texts, strict=True)
        ]
    # the marks found once for the stream (but the documents foreseen or recalled), not once per document
    stretches = _stretches_to_scan(whole, known) if any(found is not None for found in known) else None
    shares = _Shares(structure.marks("\n" + stream, stretches) if stretches != [] else _Shares.NONE)
    resources: list[Resource] = []
    for number, piece in enumerate(whole.pieces):
        if not piece.content:
            continue
        text = texts[number]
        if exact or (careful and has_odd_line_breaks(text)):
            scanned = None
        else:
            marks = shares.of(piece.start, piece.end)
            found = known[number]
            scanned = found if found is not None else identify(text, marks)
            if found is None and scanned is not None and memory is not None:
                memory.remember(text, scanned)
        items = None if scanned is None or scanned.items is None else _items_scanned(scanned.items, piece.source)
        if scanned is not None and scanned.items is None:
            whole.objects.add(number)
            resources.append(_resource(scanned, piece.source, text, len(resources), Place(whole, number)))
            continue
        if items is not None:
            whole.objects.add(number)
            whole.items[number] = len(items)
            for item, (item_scanned, item_text) in enumerate(items):
                place = Place(whole, number, item)
                resources.append(_resource(item_scanned, piece.source, item_text, len(resources), place))
            continue
        obj = load(text, piece.source)
        if obj is None:
            continue  # an empty document (`null`, `~`): Argo CD skips it, the emitter writes it back
        if not isinstance(obj, dict):
            raise ManifestError(f"{where(piece.source)}: a document must be a mapping, got {type(obj).__name__}")
        whole.objects.add(number)
        listed = obj.get("items")
        if isinstance(listed, list):  # Argo CD flattens anything with an `items` list
            whole.items[number] = len(listed)
            for item, found in enumerate(listed):
                if not isinstance(found, dict):
                    raise ManifestError(f"{where(piece.source)}: items[{item}] of a List is not a mapping")
                written = _written(found, piece.source)  # the item, should it go out on its own
                resource = Resource(found, piece.source, written, len(resources), place=Place(whole, number, item))
                resources.append(_exactly(resource))
        else:
            resource = Resource(obj, piece.source, text, len(resources), place=Place(whole, number))
            resources.append(_exactly(resource))
    return resources


def _stretches_to_scan(whole: Stream, known: list[Scanned | None]) -> list[tuple[int, int]]:
    """The stretches of the stream (newline put in front) between the documents known, that hold a
    document to scan: the only ones whose marks are shared out."""
    stretches: list[tuple[int, int]] = []
    start, scanned = 0, False
    for piece, found in zip(whole.pieces, known, strict=True):
        if found is not None:
            if scanned:
                stretches.append((start, piece.start))
            start, scanned = piece.end + 1, False
        elif piece.content:
            scanned = True
    if scanned:
        stretches.append((start, len(whole.text) + 1))
    return stretches


class Foreseen:
    """Documents identified before the stream arrives, by their text, each taken once. Looked up by length
    and then compared (a memcmp), not hashed: a dict keyed by the texts would read the stream's every
    document whole to hash it, and each foreseen one twice (4 MB of CRDs: ~3.5 ms)."""

    def __init__(self) -> None:
        self._by_length: dict[int, list[tuple[str, Scanned]]] = {}

    def add(self, text: str, scanned: Scanned) -> None:
        same = self._by_length.setdefault(len(text), [])
        same[:] = [*((known, found) for known, found in same if known != text), (text, scanned)]

    def update(self, other: Foreseen) -> None:
        for same in other._by_length.values():
            for text, scanned in same:
                self.add(text, scanned)

    def take(self, text: str) -> Scanned | None:
        """The identity foreseen for `text`, forgotten here once taken."""
        same = self._by_length.get(len(text))
        if not same:
            return None
        for position, (known, scanned) in enumerate(same):
            if known == text:
                del same[position]
                return scanned
        return None

    def __len__(self) -> int:
        return sum(map(len, self._by_length.values()))


def foresee(fragments: Iterable[str], memory: Memory | None = None) -> Foreseen:
    """The identity of every document of stream fragments known before the stream arrives (helm's crds/
    files), by its text as `parse` will cut it: the same reading, done earlier (or recalled from
    `memory`). A fragment that is not in the stream costs its reading and is never looked up."""
    foreseen = Foreseen()
    for fragment in fragments:
        for piece in pieces(fragment):
            if piece.content:
                text = fragment[piece.start : piece.end]
                scanned = memory.recall(text) if memory is not None else None
                if scanned is not None:
                    if scanned.items is None:
                        foreseen.add(text, scanned)
                    continue
                try:
                    scanned = scan(text)
                except ManifestError:
                    continue  # said by parse, should the document be in the stream
                if scanned is not None and memory is not None:
                    memory.remember(text, scanned)
                if scanned is not None and scanned.items is None:
                    foreseen.add(text, scanned)
    return foreseen


def _written(item: dict[str, Any], source: str) -> str | None:
    """A List item as a document of its own; None when it cannot be written (then it is written when
    needed, and fails there)."""
    try:
        return (f"# Source: {source}\n" if source else "") + goyaml.dump(item)
    except (RecursionError, yaml.YAMLError):
        return None


class _Shares:
    """The stream's marks shared out among its documents, taken in order: offset q of the stream's (newline
    put in front) is q - start in the document at stream[start:end] (newline put in front too)."""

    NONE = structure.Marks([], [])

    def __init__(self, found: structure.Marks) -> None:
        self.found = found
        self.next = [0, 0]  # the first mark of each kind not yet shared out

    def of(self, start: int, end: int) -> structure.Marks:
        shared = []
        for kind, positions in enumerate(self.found):
            first = self.next[kind]
            while first < len(positions) and positions[first] <= start:
                first += 1
            last = first
            while last < len(positions) and positions[last] <= end:
                last += 1
            self.next[kind] = last
            shared.append([position - start for position in positions[first:last]] if last > first else [])
        return structure.Marks(*shared) if shared[0] or shared[1] else self.NONE


def _items_scanned(items: tuple[str, ...], source: str) -> list[tuple[Scanned, str]] | None:
    """Each item of a List scanned as a document of its own (under its template's `# Source:` line), or
    None when the scan is unsure of one: the exact reading then reads the List."""
    header = f"# Source: {source}\n" if source else ""
    found = []
    for item in items:
        text = header + item
        scanned = scan(text, lists=False)
        if scanned is None:
            return None
        found.append((scanned, text))
    return found


def _resource(scanned: Scanned, source: str, text: str, index: int, place: Place) -> Resource:
    resource = Resource(None, source, text, index, head=scanned.head, metadata=scanned.metadata, place=place)
    return _checked(resource)


def _exactly(resource: Resource) -> Resource:
    resource.read_exactly = True
    return _checked(resource)


def _checked(resource: Resource) -> Resource:
    """The resource, when Argo CD would take it; a ManifestError saying what to fix otherwise."""
    source = resource.source
    if not resource.kind or not resource.kind_is_text:
        raise ManifestError(
            f"{where(source)}: a document has no `kind` (Argo CD rejects the whole output); "
            "fix the template so every document is a complete Kubernetes object"
        )
    if not resource.api_version:
        raise ManifestError(f"{where(source)}: {resource.kind} has no `apiVersion`")
    if not resource.name and not resource.generate_name:
        raise ManifestError(f"{where(source)}: {resource.kind} has no `metadata.name`")
    return resource
