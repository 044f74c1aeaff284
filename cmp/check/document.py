"""The claims document: what one shard of `check --shard I/N` rendered, for `check --merge` to judge.

A shard prints this instead of a report: each of its apps with every object it emits or strips (in full,
as JSON, which is how the API server holds them), the warnings an app earns from its own claims, and the
skipped sources and live objects that fall to the shard. What needs the whole fleet (conflicts, shared
objects, prune risks) is left to the merge. `fleet` is a digest of the fleet as every shard read it (its
Applications, the plan, the live objects and the options), so that the merge can tell the shards of one
run from those of another; `version` is this format's, `chartshare` the program's that wrote it.

Objects are stored as JSON with the values JSON lacks (timestamps, binary) written as `str()` writes
them, which is how the analysis already shows and compares them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from cmp import __version__
from cmp.check.applications import Application, Lifetime, Skip
from cmp.check.claims import AppClaims, Claim, Unstable
from cmp.check.findings import Finding, Together
from cmp.check.live import Tracking
from cmp.check.plan import Job
from cmp.check.shards import Shard
from cmp.model import ClusterResourceId

FORMAT = "chartshare-check-claims"
VERSION = 1
T = TypeVar("T")
_MAX_BYTES = 4 << 30  # a claims document past this is not one a shard wrote


class NotClaims(Exception):
    """A file that is not a claims document as this chartshare writes them; the message says where."""


@dataclass(frozen=True, slots=True)
class Header:
    """Who wrote a claims document, for which fleet, and which shard of it."""

    path: Path
    format_version: int
    chartshare: str
    fleet: str
    shard: Shard
    raw: bool
    tracking: Tracking  # how live objects name their app: the merge judges prune risks by it
    notes: tuple[str, ...] = ()  # what reading the fleet said once on stderr, for the merge to say again


@dataclass(slots=True)
class Part:
    """What one claims document gives the merge. Claims carry no object (`{}`) until `fill` reads them."""

    header: Header
    apps: list[tuple[int, AppClaims]]  # (place in the fleet's order, the app)
    warnings: list[Finding]
    skipped: list[Skip]
    live: list[tuple[int, dict[str, Any]]] | None  # (place among the live objects, object); None: no --live
    base: list[tuple[int, AppClaims]] | None = None  # the shard's apps at the --base revision; None: no --base
    base_skipped: tuple[str, ...] = ()  # the shard's apps with a source not rendered at the --base revision


def fleet_digest(
    applications: Sequence[Application],
    jobs: Sequence[Job],
    skipped: Sequence[Skip],
    live: Sequence[Mapping[str, Any]] | None,
    raw: bool,
    tracking: Tracking,
    base: str = "",
) -> str:
    """The same for every shard of one run: what the fleet holds and how it is checked (not where the files
    were read from, which only error messages quote), and the --base revision's commit when given."""
    fleet = {
        "applications": [{**asdict(app), "origin": ""} for app in applications],
        "jobs": [
            (job.app.name, job.source.label, job.renderer, str(job.app_dir.relative_to(job.repo_root))) for job in jobs
        ],
        "skipped": [(skip.app, skip.reason) for skip in skipped],
        "live": live,
        "raw": raw,
        "tracking": asdict(tracking),
        **({"base": base} if base else {}),
    }
    return hashlib.sha256(dumps(fleet).encode("ascii")).hexdigest()


def write(
    header: Header,
    apps: Sequence[tuple[int, AppClaims]],
    warnings: Sequence[Finding],
    skipped: Sequence[Skip],
    live: Sequence[tuple[int, Mapping[str, Any]]] | None,
    base: tuple[str, Sequence[tuple[int, AppClaims]], Sequence[str]] | None = None,
) -> str:
    """The document, one line of JSON; `base` is (commit, apps, apps not rendered whole) at the --base
    revision."""
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "chartshare": header.chartshare,
        "fleet": header.fleet,
        "shard": {"index": header.shard.index, "count": header.shard.count},
        "raw": header.raw,
        "tracking": asdict(header.tracking),
        "notes": list(header.notes),
        "applications": [_app_entry(position, result) for position, result in apps],
        "warnings": [_finding_entry(finding) for finding in warnings],
        "skipped": [{"app": skip.app, "reason": skip.reason} for skip in skipped],
        "live": None if live is None else [{"position": place, "object": obj} for place, obj in live],
    }
    if base is not None:
        payload["base"] = {
            "commit": base[0],
            "applications": [_app_entry(place, result) for place, result in base[1]],
            "skipped": list(base[2]),
        }
    return dumps(payload) + "\n"


def claims_entry(claims: Sequence[Claim], stripped: bool) -> list[dict[str, Any]]:
    """Claims as the document (and the render cache) holds them."""
    entries: list[dict[str, Any]] = []
    for claim in claims:
        entry: dict[str, Any] = {"id": list(claim.id), "object": claim.obj}
        if stripped:
            entry.update(reason=claim.reason, top_level_owner=claim.top_level_owner, accepted=claim.accepted)
        entries.append(entry)
    return entries


def unstable_entry(unstable: Sequence[Unstable]) -> list[dict[str, Any]]:
    return [{"id": list(key), "fields": list(fields)} for key, fields in unstable]


def render_entry(
    emitted: Sequence[Claim], stripped: Sequence[Claim], unstable: Sequence[Unstable], unmatched: Sequence[str] = ()
) -> bytes:
    """One render's claims, as the render cache keeps them for check."""
    entry: dict[str, Any] = {
        "emitted": claims_entry(emitted, stripped=False),
        "stripped": claims_entry(stripped, stripped=True),
        "unstable": unstable_entry(unstable),
    }
    if unmatched:
        entry["unmatched"] = list(unmatched)
    return dumps(entry).encode("ascii")


def read_render_entry(
    data: bytes,
) -> tuple[tuple[Claim, ...], tuple[Claim, ...], tuple[Unstable, ...], tuple[str, ...]]:
    """(emitted, stripped, unstable, unmatched) of a render the cache kept; NotClaims when it is not one."""
    try:
        entry = json.loads(data)
    except (ValueError, RecursionError):
        raise NotClaims("not JSON") from None
    emitted = tuple(claim for _, claim in _claims(entry, "emitted", "", content=True))
    stripped = tuple(claim for _, claim in _claims(entry, "stripped", "", content=True))
    unmatched = entry.get("unmatched", []) if isinstance(entry, dict) else []
    if not isinstance(unmatched, list) or not all(isinstance(where, str) for where in unmatched):
        raise NotClaims("unmatched: not a list of strings")
    return emitted, stripped, tuple(_unstable(entry, "")), tuple(unmatched)


def dumps(value: Any) -> str:
    """JSON as the document writes it: compact, ASCII (a chart's text may hold what UTF-8 cannot encode), in
    the objects' own key order (every shard reads the same files in the same order)."""
    return json.dumps(value, separators=(",", ":"), default=str)


def _app_entry(position: int, result: AppClaims) -> dict[str, Any]:
    app = result.app
    return {
        "position": position,
        "name": app.name,
        "origin": app.origin,
        "project": app.project,
        "cluster": app.cluster,
        "namespace": app.namespace,
        "lifetime": asdict(app.lifetime),
        "renderers": result.renderers,
        "complete": result.complete,
        "emitted": claims_entry(list(result.emitted.values()), stripped=False),
        "stripped": claims_entry(list(result.stripped.values()), stripped=True),
        "unstable": unstable_entry(result.unstable),
        "parent": app.parent,
    }


def _finding_entry(finding: Finding) -> dict[str, Any]:
    together = None if finding.together is None else list(finding.together)
    return {
        "app": finding.app,
        "code": finding.code,
        "id": list(finding.id),
        "message": finding.message,
        "together": together,
    }


# --- reading -------------------------------------------------------------------------------------------------


def read(path: Path) -> Part:
    """A claims document without its objects (the merge asks `fill` for those it needs). Raises NotClaims."""
    payload = _load(path)
    header = _header(path, payload)
    apps = [_app(entry, f"applications[{n}]") for n, entry in enumerate(_list(payload, "applications", ""))]
    warnings = [_finding(entry, f"warnings[{n}]") for n, entry in enumerate(_list(payload, "warnings", ""))]
    skipped = [_skip(entry, f"skipped[{n}]") for n, entry in enumerate(_list(payload, "skipped", ""))]
    live: list[tuple[int, dict[str, Any]]] | None = None
    if payload.get("live") is not None:
        live = [_live(entry, f"live[{n}]") for n, entry in enumerate(_list(payload, "live", ""))]
    base: list[tuple[int, AppClaims]] | None = None
    base_skipped: tuple[str, ...] = ()
    if payload.get("base") is not None:
        at_base = _dict(payload, "base", "")
        base = [
            _app(entry, f"base.applications[{n}]") for n, entry in enumerate(_list(at_base, "applications", "base"))
        ]
        base_skipped = tuple(str(name) for name in _list(at_base, "skipped", "base"))
    return Part(header, apps, warnings, skipped, live, base, base_skipped)


def fill(path: Path, apps: Mapping[str, AppClaims], wanted: set[ClusterResourceId], *, base: bool = False) -> None:
    """Put the objects of the `wanted` claims of a document's apps (with `base`, its apps at the --base
    revision) into `apps` (read by `read` before)."""
    payload = _load(path)
    entries = _list(_dict(payload, "base", ""), "applications", "base") if base else _list(payload, "applications", "")
    for entry in entries:
        result = apps.get(_str(entry, "name", "applications[]"))
        if result is None:
            raise NotClaims("changed while it was being read")
        for kind, claims in (("emitted", result.emitted), ("stripped", result.stripped)):
            for key, obj in _objects(entry, kind, wanted):
                if key not in claims:
                    raise NotClaims("changed while it was being read")
                claims[key] = replace(claims[key], obj=obj)


def _objects(
    entry: Mapping[str, Any], kind: str, wanted: set[ClusterResourceId]
) -> Iterator[tuple[ClusterResourceId, dict[str, Any]]]:
    for n, claim in enumerate(_list(entry, kind, "applications[]")):
        key = _id(claim, f"applications[].{kind}[{n}]")
        if key in wanted:
            yield key, _dict(claim, "object", f"applications[].{kind}[{n}]")


def _load(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            raw = file.read(_MAX_BYTES + 1)
    except OSError as error:
        raise NotClaims(f"cannot read: {error.strerror}") from None
    if len(raw) > _MAX_BYTES:
        raise NotClaims("too large for a claims document")
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise NotClaims("not JSON: a claims document is what `chartshare check --shard I/N` prints on stdout") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise NotClaims("not a claims document (what `chartshare check --shard I/N` prints on stdout)")
    return payload


def _header(path: Path, payload: Mapping[str, Any]) -> Header:
    version = _int(payload, "version", "")
    if version != VERSION:
        raise NotClaims(f"claims document version {version}; this chartshare ({__version__}) reads version {VERSION}")
    shard = _dict(payload, "shard", "")
    raw = payload.get("raw")
    if not isinstance(raw, bool):
        raise NotClaims("raw must be true or false")
    count, index = _int(shard, "count", "shard"), _int(shard, "index", "shard")
    if not 1 <= index <= count:
        raise NotClaims(f"shard {index}/{count} is not a shard I/N with 1 <= I <= N")
    how = _dict(payload, "tracking", "")
    tracking = Tracking(_str(how, "method", "tracking"), _str(how, "label_key", "tracking"))
    tracking = replace(tracking, installation_id=_str(how, "installation_id", "tracking"))
    notes = tuple(str(note) for note in _list(payload, "notes", ""))
    fleet = _str(payload, "fleet", "")
    return Header(path, version, _str(payload, "chartshare", ""), fleet, Shard(index, count), raw, tracking, notes)


def _app(entry: Any, where: str) -> tuple[int, AppClaims]:
    app = Application(
        name=_str(entry, "name", where),
        origin=_str(entry, "origin", where),
        project=_str(entry, "project", where),
        cluster=_str(entry, "cluster", where),
        namespace=_str(entry, "namespace", where),
        sources=(),  # the analysis reads an app's identity; its sources stayed with the shard that rendered them
        lifetime=_lifetime(entry, where),
        parent=_parent(entry, where),
    )
    result = AppClaims(app, renderers=[str(r) for r in _list(entry, "renderers", where)])
    result.complete = _bool(entry, "complete", where)
    result.emitted.update(_claims(entry, "emitted", where, content=False))
    result.stripped.update(_claims(entry, "stripped", where, content=False))
    result.unstable += _unstable(entry, where)
    return _int(entry, "position", where), result


def _lifetime(entry: Any, where: str) -> Lifetime:
    """What the app's Application says of its deletion (absent in a document of a run without --base)."""
    if not isinstance(entry, Mapping) or entry.get("lifetime") is None:
        return Lifetime()
    here = f"{where}.lifetime" if where else "lifetime"
    given = _dict(entry, "lifetime", where)
    return Lifetime(
        _bool(given, "finalizer", here),
        _bool(given, "fail_on_shared", here),
        _str(given, "appset", here),
        _str(given, "appset_keeps", here),
    )


def _claims(entry: Any, kind: str, where: str, *, content: bool) -> Iterator[tuple[ClusterResourceId, Claim]]:
    """The `emitted` or `stripped` claims of an entry, with their objects or (without `content`) `{}`."""
    for n, claim in enumerate(_list(entry, kind, where)):
        here = f"{where}.{kind}[{n}]" if where else f"{kind}[{n}]"
        key = _id(claim, here)
        obj = _dict(claim, "object", here) if content else {}
        if kind == "emitted":
            yield key, Claim(key, obj)
        else:
            flags = (_bool(claim, "top_level_owner", here), _bool(claim, "accepted", here))
            yield key, Claim(key, obj, _str(claim, "reason", here), *flags)


def _unstable(entry: Any, where: str) -> list[Unstable]:
    found: list[Unstable] = []
    for n, unstable in enumerate(_list(entry, "unstable", where)):
        here = f"{where}.unstable[{n}]" if where else f"unstable[{n}]"
        found.append((_id(unstable, here), tuple(str(field) for field in _list(unstable, "fields", here))))
    return found


def _parent(entry: Any, where: str) -> str | None:
    parent = entry.get("parent") if isinstance(entry, dict) else None
    if parent is not None and not isinstance(parent, str):
        raise NotClaims(f"{_at(where, 'parent')} must be an app name or null")
    return parent


def _skip(entry: Any, where: str) -> Skip:
    return Skip(_str(entry, "app", where), _str(entry, "reason", where))


def _live(entry: Any, where: str) -> tuple[int, dict[str, Any]]:
    return _int(entry, "position", where), _dict(entry, "object", where)


def _finding(entry: Any, where: str) -> Finding:
    together = _dict(entry, "", where).get("together")
    if together is not None and not (
        isinstance(together, list) and len(together) == 3 and all(isinstance(part, str) for part in together)
    ):
        raise NotClaims(f"{where}.together must be null or three strings")
    return Finding(
        _str(entry, "app", where),
        _str(entry, "code", where),
        _id(entry, where),
        _str(entry, "message", where),
        None if together is None else Together(*together),
    )


def _id(entry: Any, where: str) -> ClusterResourceId:
    value = _dict(entry, "", where).get("id")
    if not (isinstance(value, list) and len(value) == 5 and all(isinstance(part, str) for part in value)):
        raise NotClaims(f"{where}.id must be five strings (cluster, group, kind, namespace, name)")
    return ClusterResourceId(*value)


def _dict(entry: Any, key: str, where: str) -> dict[str, Any]:
    """`entry[key]` as a mapping (or, with key "", `entry` itself)."""
    value = entry if not key else (entry.get(key) if isinstance(entry, dict) else None)
    if not isinstance(value, dict):
        raise NotClaims(f"{_at(where, key)} must be a mapping")
    return value


def _list(entry: Any, key: str, where: str) -> list[Any]:
    return _typed(entry, key, where, list, "a list")


def _str(entry: Any, key: str, where: str) -> str:
    return _typed(entry, key, where, str, "a string")


def _int(entry: Any, key: str, where: str) -> int:
    return _typed(entry, key, where, int, "a whole number")


def _bool(entry: Any, key: str, where: str) -> bool:
    return _typed(entry, key, where, bool, "true or false")


def _typed(entry: Any, key: str, where: str, kind: type[T], noun: str) -> T:
    """`entry[key]` when it is a `kind` (JSON's true is no number here), else NotClaims naming the field."""
    value = _dict(entry, "", where).get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise NotClaims(f"{_at(where, key)} must be {noun}")
    return value


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where and key else where or key or "the document"
