"""A rendered document: helm's text, what the scan read of it, and the object parsed only when asked for."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from cmp.manifests import exact, reach
from cmp.model import ResourceId, split_api_version

if TYPE_CHECKING:
    from cmp.manifests.stream import Stream


FLOOR_UNREAD = -1  # the scan read the identity above every mark of the text: no floor was needed


class Head(NamedTuple):
    """What the scan of a document's text found, exactly as a full parse would give it.

    `api_version` and `kind` are the parsed top-level values (None when absent); `name`, `namespace` and
    `generate_name` those of `metadata`; `metadata` is the span of the top-level `metadata` entry in the text,
    which the emitter replaces when only metadata changed; `spec` holds, for a CRD, the `group`, `names` and
    `scope` of its spec (what scope detection reads), so the schema below them is never parsed; `floor` is
    the shallowest indentation a quote or flow spanning lines may reach (structure.py): every line
    shallower than it is structure, which text edits rely on; FLOOR_UNREAD when the identity did not need
    it (`Resource.head_for_edit` works it out). (A tuple: one is made per document.)
    """

    api_version: Any
    kind: Any
    name: Any
    namespace: Any
    generate_name: Any
    metadata: tuple[int, int] | None
    spec: dict[str, Any] | None = None
    floor: int = 0


def with_floor(head: Head, text: str) -> Head:
    """The head of `text` with its floor worked out, when the scan did not need it."""
    return head._replace(floor=reach.floor("\n" + text)) if head.floor == FLOOR_UNREAD else head


class Place(NamedTuple):
    """Where a resource stands in the stream it was read from: its piece, and its position among the
    items when that piece is a List."""

    stream: Stream
    piece: int
    item: int | None = None


class Resource:
    """One object of the render.

    `text` holds helm's bytes for the document; an unchanged resource is emitted from it byte-for-byte.
    A change to `metadata` alone sets `metadata_changed` and keeps `text` (the emitter then rewrites just
    that block); a patch carried out on the text replaces it (`text_edited`); any other change drops
    `text`, and the object is re-serialised whole.

    A resource read by the scan (`head`) parses its text only when something asks for `obj`: most
    documents of a render are only identified and passed through, and parsing them would cost more than
    helm's whole render. `metadata` is parsed on its own, so protecting or renaming a large CRD never
    parses its schema. Every parse is recorded: `read_exactly` when the whole document was read by the
    exact reading, `metadata_read` when its metadata was, so that tests (and the bench) can hold what a
    rule costs to what it changes.
    """

    __slots__ = (
        "_ids",
        "_meta",
        "_obj",
        "entries_read",
        "head",
        "index",
        "metadata_changed",
        "metadata_read",
        "place",
        "read_exactly",
        "source",
        "text",
        "text_edited",
    )

    def __init__(
        self,
        obj: dict[str, Any] | None,
        source: str,
        text: str | None,
        index: int,
        metadata_changed: bool = False,
        *,
        head: Head | None = None,
        metadata: dict[str, Any] | None = None,
        place: Place | None = None,
    ) -> None:
        if obj is None and (head is None or text is None):
            raise ValueError("a resource needs its object, or a head and the text to parse it from")
        self._obj = obj
        self._meta = metadata  # metadata parsed alone, before (or instead of) the object
        # (apiVersion, group, version, kind, name, namespace, generateName) while only the head is known:
        # the pipeline asks for them thousands of times; any access that may edit the object drops them
        self._ids: tuple[str, ...] | None = None
        if obj is None and metadata is None and head is not None:
            api_version = str(head.api_version or "")
            group, version = split_api_version(api_version)
            self._ids = (
                api_version,
                group,
                version,
                str(head.kind or ""),
                str(head.name or ""),
                str(head.namespace or ""),
                str(head.generate_name or ""),
            )
        self.head = head
        self.source = source
        self.text = text
        self.index = index
        self.metadata_changed = metadata_changed
        self.text_edited = False  # `text` is no longer helm's: a patch was carried out on it
        self.place = place
        self.read_exactly = False  # the whole document was parsed from helm's text
        self.metadata_read = metadata is not None
        self.entries_read = False  # some top-level entries were parsed alone (to find reference fields)

    def __repr__(self) -> str:
        return f"Resource({self.id}, source={self.source!r}, index={self.index}, changed={self.changed})"

    @property
    def obj(self) -> dict[str, Any]:
        """The whole object, parsed from the text on first use."""
        if self._obj is None:
            assert self.text is not None  # guaranteed by __init__ and mark_changed
            obj = exact.load_object(self.text, self.source)
            self.read_exactly = True
            if self._meta is not None:  # keep edits made to the metadata parsed alone
                obj["metadata"] = self._meta
            self._obj = obj
            self._ids = None
        return self._obj

    @obj.setter
    def obj(self, value: dict[str, Any]) -> None:
        self._obj = value
        self._meta = None
        self._ids = None

    @property
    def parsed(self) -> bool:
        """Whether the whole object has been parsed (or was given)."""
        return self._obj is not None

    @property
    def metadata_parsed(self) -> bool:
        """Whether `metadata` has been parsed alone (then it, not the text, says what the entry holds)."""
        return self._meta is not None

    def replace_metadata(self, metadata: dict[str, Any]) -> None:
        """Take a new `metadata` mapping for the one parsed alone (an edit of a copy of it)."""
        if self._obj is not None:
            raise ValueError("a parsed object is edited as an object")
        self._meta = metadata
        self._ids = None
        self.metadata_changed = True

    def _value(self, key: str) -> Any:
        if self._obj is not None or self.head is None:
            return self.obj.get(key)
        return self.head.api_version if key == "apiVersion" else self.head.kind

    def _meta_value(self, key: str) -> Any:
        if self._obj is not None or self.head is None or self._meta is not None:
            return self.metadata.get(key)
        head = self.head
        return head.name if key == "name" else head.namespace if key == "namespace" else head.generate_name

    @property
    def api_version(self) -> str:
        ids = self._ids
        return ids[0] if ids is not None else str(self._value("apiVersion") or "")

    @property
    def group(self) -> str:
        ids = self._ids
        return ids[1] if ids is not None else split_api_version(self.api_version)[0]

    @property
    def version(self) -> str:
        ids = self._ids
        return ids[2] if ids is not None else split_api_version(self.api_version)[1]

    @property
    def kind(self) -> str:
        ids = self._ids
        return ids[3] if ids is not None else str(self._value("kind") or "")

    @property
    def kind_is_text(self) -> bool:
        """Whether `kind` is a string at all (Argo CD refuses an object whose kind is not)."""
        return isinstance(self._value("kind"), str)

    @property
    def metadata(self) -> dict[str, Any]:
        meta = self.mutable_metadata()
        return meta if meta is not None else {}

    def mutable_metadata(self) -> dict[str, Any] | None:
        """The object's own `metadata` mapping, to edit in place (None when it has none); parses only that
        block when the object itself has not been parsed."""
        if self._obj is None and self.head is not None and self.text is not None:
            if self._meta is None:
                self._meta = exact.load_metadata(self.text, self.head.metadata, self.source)
                self.metadata_read = True
                self._ids = None  # the caller may edit it
            return self._meta
        meta = self.obj.get("metadata")
        return meta if isinstance(meta, dict) else None

    @property
    def name(self) -> str:
        ids = self._ids
        return ids[4] if ids is not None else str(self._meta_value("name") or "")

    @property
    def namespace(self) -> str:
        ids = self._ids
        return ids[5] if ids is not None else str(self._meta_value("namespace") or "")

    @property
    def generate_name(self) -> str:
        ids = self._ids
        return ids[6] if ids is not None else str(self._meta_value("generateName") or "")

    @property
    def labels(self) -> dict[str, Any]:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def id(self) -> ResourceId:
        return ResourceId(self.group, self.kind, self.namespace, self.name)

    def identity(self) -> dict[str, Any]:
        """`apiVersion`, `kind` and, for a CRD, `spec.group/names/scope`, without parsing anything else:
        what scope detection reads."""
        if self._obj is not None or self.head is None:
            return self.obj
        view: dict[str, Any] = {"apiVersion": self.head.api_version, "kind": self.head.kind}
        if self.head.spec is not None:
            view["spec"] = self.head.spec
        return view

    def template_note(self) -> str:
        """` (template x/templates/y.yaml)` for a message about this resource, or nothing when unknown."""
        return f" (template {self.source})" if self.source else ""

    @property
    def changed(self) -> bool:
        return self.text is None or self.metadata_changed or self.text_edited

    def head_for_edit(self) -> Head:
        """The head with the floor of the text the scan read (structure.py), worked out on first use when
        the identity did not need it: only an edit of the text reads the lines below the identity."""
        assert self.head is not None and self.text is not None
        self.head = with_floor(self.head, self.text)
        return self.head

    def edit_text(self, text: str, head: Head) -> None:
        """Take an edited text (a patch carried out on it) and its scan; the object, not parsed yet, will
        be read from it, and `metadata` parsed or edited alone stays as it is."""
        if self._obj is not None:
            raise ValueError("a parsed object is edited as an object, not as text")
        self.text = text
        self.head = head
        self.text_edited = True

    def mark_changed(self, *, metadata_only: bool = False) -> None:
        """Record an edit: `metadata_only` when nothing outside `metadata` changed."""
        if metadata_only:
            self.metadata_changed = True
        else:
            self.obj  # noqa: B018  # parse before the text goes: the object is all that will be left
            self.text = None


def exact_readings(resources: Iterable[Resource]) -> int:
    """How many documents of the render the exact reading read whole (a List counts once)."""
    documents = set()
    for resource in resources:
        if resource.read_exactly:
            place = resource.place
            documents.add((id(place.stream), place.piece) if place is not None else id(resource))
    return len(documents)


def searchable(words: Iterable[str]) -> tuple[str, ...] | None:
    """The words, when looking for each in a document's text can rule it out: none is empty or holds
    whitespace (at which a folded scalar could break it); None otherwise."""
    found = tuple(words)
    return None if any(not word or any(char.isspace() for char in word) for word in found) else found


def surely_lacks(resource: Resource, words: tuple[str, ...] | None) -> bool:
    """Whether a document not yet parsed surely holds none of the `searchable` words, read from its text
    alone: true when its text has no backslash (so no string in it is escaped) and no word is in it."""
    text = resource.text
    if words is None or resource.parsed or text is None or "\\" in text:
        return False
    return not any(word in text for word in words)
