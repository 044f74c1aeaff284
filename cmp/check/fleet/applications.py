"""Argo CD Applications as `check` reads them from Git: files, documents, one Application, live dumps.

`check` answers "what will Argo CD deploy" without a cluster, so this module reproduces the few rules that
give an Application its identity: the instance name (`<ns>_<name>` outside the control-plane namespace),
the destination cluster (`in-cluster` is https://kubernetes.default.svc) and its sources (`spec.sources`
wins over `spec.source`). Every problem is collected with the file, the document and the object it is
about, so one run reports them all and never a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cmp import goyaml
from cmp.model import ClusterResourceId

ARGO_GROUP = "argoproj.io"
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
IN_CLUSTER_NAME = "in-cluster"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
SOURCE_TYPES = ("helm", "kustomize", "directory", "plugin")  # Argo CD's explicit source types
RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
# the finalizers that make deleting an Application delete what it tracks (isPropagationPolicyFinalizer)
CASCADING_FINALIZERS = (RESOURCES_FINALIZER, f"{RESOURCES_FINALIZER}/background", f"{RESOURCES_FINALIZER}/foreground")
FAIL_ON_SHARED = "FailOnSharedResource=true"
SYNC_OPTIONS_ANNOTATION = "argocd.argoproj.io/sync-options"
_MAX_FILE_BYTES = 16 << 20
_FILE_OF_ORIGIN = re.compile(r"^(.*?(?: \(document [0-9]+\))?)(?: items\[[0-9]+\])?: (?:Application|ApplicationSet) ")
RENDER_FAILED = "render failed"  # how a skipped entry of an app Argo CD would fail to create or render begins


@dataclass(frozen=True, slots=True)
class Source:
    """One entry of spec.sources (or spec.source), as written."""

    label: str  # "source" or "sources[2]": how messages name it
    repo_url: str
    path: str | None
    chart: str | None
    target_revision: str
    ref: str | None
    types: tuple[str, ...]  # the explicit types set (helm, kustomize, directory, plugin)
    helm: Mapping[str, Any]
    plugin: Mapping[str, Any]
    kustomize: Mapping[str, Any] = field(default_factory=dict)
    directory: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Lifetime:
    """What Argo CD does to the objects an Application tracks: how its syncs prune, and what happens when
    the Application leaves Git. Option values are as written after `Prune=` or `Delete=` ("" when unset)."""

    finalizer: bool = False  # deleting the Application deletes what it tracks (cascade)
    fail_on_shared: bool = False  # spec.syncPolicy.syncOptions holds FailOnSharedResource=true
    appset: str = ""  # the ApplicationSet that generates it; "" for an Application read from a file
    appset_keeps: str = ""  # that ApplicationSet's applicationsSync when it never deletes: create-only|create-update
    prune: str = ""  # spec.syncPolicy.syncOptions Prune=: the default of every object's (false|confirm)
    delete: str = ""  # spec.syncPolicy.syncOptions Delete=: the same for a cascade (false|confirm)
    automated: bool = False  # spec.syncPolicy.automated is on: it syncs a new revision by itself
    auto_prune: bool = False  # spec.syncPolicy.automated.prune: its automated syncs prune
    own_prune: str = ""  # Prune= in the Application object's own sync-options: whether its parent's prune deletes it


@dataclass(frozen=True, slots=True)
class Application:
    """An Application as Argo CD will run it."""

    name: str  # the instance name Argo CD uses (ARGOCD_APP_NAME, tracking-id)
    origin: str  # "argocd/x.yaml: Application x": where a message sends the reader
    project: str
    cluster: str
    namespace: str  # the destination namespace
    sources: tuple[Source, ...]
    lifetime: Lifetime = Lifetime()
    parent: str | None = None  # the app that renders it (App of Apps); None for one read from a file
    ignore_differences: tuple[Any, ...] = ()  # spec.ignoreDifferences, as written
    respect_ignore: bool = False  # syncOptions RespectIgnoreDifferences=true: a sync leaves those fields too
    located: tuple[str, int] = ("", 0)  # the file and line of the metadata.name that defines it (its
    # ApplicationSet's for a generated app, its parent's for a rendered one): where a report points


@dataclass(frozen=True, slots=True)
class Skip:
    """Something check does not render, and why."""

    app: str
    reason: str
    located: tuple[str, int] = field(default=("", 0), compare=False)  # the app's definition (file, line)


@dataclass(frozen=True, slots=True)
class Contest:
    """Two or more definitions of one Application name: each place (a parent app, or `file:<path>`) would
    write the one Application object, a conflict on it; neither definition is checked."""

    id: ClusterResourceId  # the Application object (group argoproj.io, kind Application)
    places: tuple[str, ...]  # sorted

    def joined(self, place: str) -> Contest:
        return Contest(self.id, tuple(sorted({*self.places, place})))

    def skip(self, name: str) -> Skip:
        return Skip(
            name,
            f"{len(self.places)} definitions of Application {name} ({', '.join(self.places)}): Argo CD keeps one "
            "Application per name, so neither is checked (see the conflict on the Application object)",
        )


@dataclass(slots=True)
class Fleet:
    """What the paths hold: Applications to render, what was skipped, and every problem found."""

    applications: list[Application] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: set[str] = field(default_factory=set)  # said once on stderr, not a problem of any one app
    contested: dict[str, Contest] = field(default_factory=dict)  # by app name


def place_of(app: Application) -> str:
    """Where an Application's definition comes from, as a conflict names it: its parent app, or `file:<path>`."""
    if app.parent is not None:
        return app.parent
    found = _FILE_OF_ORIGIN.match(app.origin)
    return f"file:{found.group(1) if found else app.origin}"


def application_object(
    app: Application, control_plane_namespace: str, cluster: str = IN_CLUSTER_SERVER
) -> ClusterResourceId:
    """The Application object of an app: in its namespace (the `<ns>_` of its instance name) on `cluster`
    (where its parent deploys it; Argo CD's own cluster for one read from a file)."""
    namespace, _, name = app.name.rpartition("_")
    return ClusterResourceId(cluster, ARGO_GROUP, "Application", namespace or control_plane_namespace, name)


class Malformed(Exception):
    """A manifest Argo CD would reject; the message names the field."""


def cluster_of(server: str, name: str) -> str:
    """Clusters compare by server, else by name; `in-cluster` is the local API server."""
    if server:
        return server.rstrip("/")
    return IN_CLUSTER_SERVER if name == IN_CLUSTER_NAME else name


# --- files and documents -----------------------------------------------------------------------------------


def manifest_files(paths: Sequence[Path], errors: list[str]) -> list[Path]:
    """The files to read: each file given, and the manifests under each directory (hidden folders and
    Helm charts left out: chart templates are not YAML until helm renders them)."""
    files: list[Path] = []
    for path in paths:
        if path.is_file():
            files.append(path)
        elif (path / "Chart.yaml").is_file():  # its templates are not YAML until helm renders them
            errors.append(f"{path}: a Helm chart, not Applications: point check at the Applications that render it")
        elif path.is_dir():
            for folder, subfolders, names in os.walk(path):
                subfolders[:] = sorted(
                    name
                    for name in subfolders
                    if not name.startswith(".") and not (Path(folder) / name / "Chart.yaml").is_file()
                )
                files += [Path(folder) / name for name in sorted(names) if name.endswith(MANIFEST_SUFFIXES)]
        else:
            errors.append(f"{path}: no such file or directory")
    return files


def documents(path: Path, errors: list[str], needle: str | None = None) -> Iterator[tuple[int, int, Any]]:
    """(document number, document count, object) for each document; a file without `needle` is not parsed."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        errors.append(f"{path}: cannot read: {error.strerror}")
        return
    if len(raw) > _MAX_FILE_BYTES:
        errors.append(f"{path}: {len(raw)} bytes is too large for a manifest file")
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        errors.append(f"{path}: not UTF-8 text (bad byte at offset {error.start})")
        return
    if needle is not None and needle not in text:
        return
    try:
        loaded = [obj for obj in goyaml.load_all(text) if obj is not None]
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        errors.append(f"{path}:{line} not valid YAML: {problem}")
        return
    for number, obj in enumerate(loaded, 1):
        yield number, len(loaded), obj


def name_lines(path: Path) -> list[int]:
    """Per document of a file (numbered as `documents` numbers them), the line of its `metadata.name`, or
    of the document's start where it has none; [] for a file that cannot be read. Read again only for files
    that hold Applications, in one pass over the parser's events (nothing composed or expanded, nothing
    past MAX_NAME_DEPTH levels looked into), as tenant_yaml reads tenant files."""
    try:
        raw = path.read_bytes()
        if len(raw) > _MAX_FILE_BYTES:
            return []
        return _name_lines(yaml.parse(raw.decode("utf-8"), Loader=_LOADER))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_NAME_DEPTH = 100  # levels of nesting a name search follows (metadata.name is at the second)
_NODE_START = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_NODE_END = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


@dataclass(slots=True)
class _Open:
    """A mapping or sequence the walk is inside: whether its next node is a key, and the last key."""

    mapping: bool
    metadata: bool = False  # the root mapping's `metadata:` value
    expect_key: bool = True
    key: str | None = None


def _name_lines(events: Iterator[yaml.Event]) -> list[int]:
    lines: list[int] = []
    stack: list[_Open] = []
    start = found = 0
    empty = True
    for event in events:
        if isinstance(event, yaml.DocumentStartEvent):
            start, found, empty, stack = 0, 0, True, []
            continue
        if isinstance(event, yaml.DocumentEndEvent):
            if not empty:
                lines.append(found or start)
            continue
        if isinstance(event, _NODE_END):
            stack.pop()
            _consumed(stack)
            continue
        if not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, *_NODE_START)):
            continue
        if not stack:
            start = _line(event.start_mark)
            empty = isinstance(event, yaml.ScalarEvent) and event.value in ("", "~", "null")
        parent = stack[-1] if stack else None
        if parent is not None and parent.mapping and parent.expect_key:
            parent.key = event.value if isinstance(event, yaml.ScalarEvent) else None
            if parent.metadata and parent.key == "name" and not found:
                found = _line(event.start_mark)
        if isinstance(event, _NODE_START):
            if len(stack) >= MAX_NAME_DEPTH:
                return lines
            at_metadata = len(stack) == 1 and parent is not None and parent.key == "metadata" and not parent.expect_key
            stack.append(_Open(isinstance(event, yaml.MappingStartEvent), metadata=at_metadata))
            continue
        _consumed(stack)
    return lines


def _line(mark: Any) -> int:
    return int(mark.line) + 1 if mark is not None else 1


def _consumed(stack: list[_Open]) -> None:
    """A node of the innermost mapping is done: a key is followed by its value, a value by the next key."""
    if stack and stack[-1].mapping:
        stack[-1].expect_key = not stack[-1].expect_key


def items(obj: Any) -> Iterator[tuple[str, Any]]:
    """A document, or the items of a `List` (what `kubectl get -o yaml` prints), with a suffix naming each."""
    if isinstance(obj, dict) and str(obj.get("kind", "")).endswith("List") and isinstance(obj.get("items"), list):
        for position, item in enumerate(obj["items"]):
            yield f" items[{position}]", item
    else:
        yield "", obj


def place(path: Path, number: int, count: int, suffix: str) -> str:
    return f"{path}{f' (document {number})' if count > 1 else ''}{suffix}"


# --- Applications and ApplicationSets ----------------------------------------------------------------------


def name_of(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) and name else "(no name)"


def application(obj: Mapping[str, Any], origin: str, control_plane_namespace: str) -> Application:
    """Validate one Application; raises Malformed naming the field Argo CD would reject."""
    metadata = mapping_of(obj.get("metadata"), "metadata")
    name = _text(metadata.get("name"), "metadata.name", required=True)
    app_namespace = _text(metadata.get("namespace"), "metadata.namespace") or control_plane_namespace
    spec = mapping_of(obj.get("spec"), "spec", required=True)
    destination = mapping_of(spec.get("destination"), "spec.destination", required=True)
    server = _text(destination.get("server"), "spec.destination.server")
    cluster_name = _text(destination.get("name"), "spec.destination.name")
    if server and cluster_name:
        raise Malformed("spec.destination sets both server and name; Argo CD accepts only one of them")
    if not server and not cluster_name:
        raise Malformed("spec.destination needs a server or a name")
    raw_sources = spec.get("sources")
    if raw_sources:  # Argo CD uses spec.sources whenever it is non-empty
        if not isinstance(raw_sources, list):
            raise Malformed("spec.sources must be a list of sources")
        sources = tuple(_source(item, f"sources[{index}]") for index, item in enumerate(raw_sources))
    elif spec.get("source") is not None:
        sources = (_source(spec["source"], "source"),)
    else:
        raise Malformed("spec needs a source or sources")
    return Application(
        name=name if app_namespace == control_plane_namespace else f"{app_namespace}_{name}",
        origin=origin,
        project=_text(spec.get("project"), "spec.project") or "default",
        cluster=cluster_of(server, cluster_name),
        namespace=_text(destination.get("namespace"), "spec.destination.namespace"),
        sources=sources,
        lifetime=lifetime(metadata, spec),
        ignore_differences=tuple(ignored) if isinstance(ignored := spec.get("ignoreDifferences"), list) else (),
        respect_ignore="RespectIgnoreDifferences=true" in _options(spec),
    )


def lifetime(metadata: Mapping[str, Any], spec: Mapping[str, Any]) -> Lifetime:
    """What the Application's own fields say of its syncs and its deletion (controller/appcontroller.go
    autoSync and shouldBeDeleted, gitops-engine's isPruningDisabled read these)."""
    options = _options(spec)
    policy = spec.get("syncPolicy")
    automated = policy.get("automated") if isinstance(policy, Mapping) else None
    enabled = isinstance(automated, Mapping) and automated.get("enabled") is not False  # IsAutomatedSyncEnabled
    annotations = metadata.get("annotations")
    own = str(annotations.get(SYNC_OPTIONS_ANNOTATION) or "") if isinstance(annotations, Mapping) else ""
    return Lifetime(
        finalizer=has_finalizer(metadata),
        fail_on_shared=FAIL_ON_SHARED in options,
        prune=option_value(options, "Prune"),
        delete=option_value(options, "Delete"),
        automated=enabled,
        auto_prune=enabled and isinstance(automated, Mapping) and automated.get("prune") is True,
        own_prune=option_value(own.split(","), "Prune"),
    )


def option_value(options: Sequence[str], key: str) -> str:
    """The value of the first `key=` among sync options, as Argo CD's GetOptionValue reads it; "" if none."""
    for option in options:
        found, sign, value = option.strip().partition("=")
        if sign and found == key:
            return value
    return ""


def has_finalizer(metadata: Mapping[str, Any]) -> bool:
    """Whether deleting the Application cascades: one of the three resources finalizers."""
    finalizers = metadata.get("finalizers")
    names = [str(name) for name in finalizers] if isinstance(finalizers, list) else []
    return any(name in CASCADING_FINALIZERS for name in names)


def _options(spec: Mapping[str, Any]) -> list[str]:
    policy = spec.get("syncPolicy")
    options = policy.get("syncOptions") if isinstance(policy, Mapping) else None
    return [str(option).strip() for option in options] if isinstance(options, list) else []


def _source(raw: Any, label: str) -> Source:
    source = mapping_of(raw, f"spec.{label}", required=True)
    types = tuple(kind for kind in SOURCE_TYPES if source.get(kind) is not None)
    if len(types) > 1:
        raise Malformed(f"spec.{label} sets {' and '.join(types)}; Argo CD refuses more than one source type")
    return Source(
        label=label,
        repo_url=_text(source.get("repoURL"), f"spec.{label}.repoURL"),
        path=_text(source.get("path"), f"spec.{label}.path") if source.get("path") is not None else None,
        chart=_text(source.get("chart"), f"spec.{label}.chart") or None,
        target_revision=_text(source.get("targetRevision"), f"spec.{label}.targetRevision"),
        ref=_text(source.get("ref"), f"spec.{label}.ref") or None,
        types=types,
        helm=mapping_of(source.get("helm"), f"spec.{label}.helm"),
        plugin=mapping_of(source.get("plugin"), f"spec.{label}.plugin"),
        kustomize=mapping_of(source.get("kustomize"), f"spec.{label}.kustomize"),
        directory=mapping_of(source.get("directory"), f"spec.{label}.directory"),
    )


def mapping_of(value: Any, where: str, required: bool = False) -> Mapping[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, Mapping):
        raise Malformed(f"{where} must be a mapping" if value is not None else f"{where} is missing")
    return value


def _text(value: Any, where: str, required: bool = False) -> str:
    if value is None or value == "":
        if required:
            raise Malformed(f"{where} is missing")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise Malformed(f"{where} must be a string, got {type(value).__name__}")
    return str(value)


def argocd_cm_data(path: Path, errors: list[str]) -> dict[str, Any]:
    """The `data` of the argocd-cm ConfigMap in a dump (`kubectl -n argocd get cm argocd-cm -o yaml`)."""
    if not path.is_file():
        errors.append(f"--argocd-cm {path}: no such file")
        return {}
    for _, _, document in documents(path, errors):
        for _, obj in items(document):
            metadata = obj.get("metadata") if isinstance(obj, dict) else None
            if isinstance(metadata, dict) and obj.get("kind") == "ConfigMap" and metadata.get("name") == "argocd-cm":
                data = obj.get("data")
                return dict(data) if isinstance(data, dict) else {}
    return {}  # read_argocd_cm says so


# --- live objects ------------------------------------------------------------------------------------------


def load_live(paths: Sequence[Path], errors: list[str]) -> list[dict[str, Any]]:
    """Objects from `kubectl get ... -o yaml` output: a List, or a stream of objects."""
    objects: list[dict[str, Any]] = []
    for path in paths:
        if not path.is_file():
            errors.append(f"--live {path}: no such file")
            continue
        for number, count, document in documents(path, errors):
            for suffix, obj in items(document):
                where = place(path, number, count, suffix)
                if not isinstance(obj, dict):
                    errors.append(f"{where}: a live object must be a mapping")
                    continue
                metadata = obj.get("metadata")
                if not (
                    obj.get("apiVersion")
                    and obj.get("kind")
                    and isinstance(metadata, dict)
                    and isinstance(metadata.get("name"), str)
                ):
                    errors.append(f"{where}: not a Kubernetes object (it needs apiVersion, kind and metadata.name)")
                    continue
                objects.append(obj)
    return objects
