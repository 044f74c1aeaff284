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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from cmp import __version__
from cmp.check.analysis.claims import AppClaims
from cmp.check.analysis.claims_json import (
    NotClaims,
    bool_at,
    claims_entry,
    dict_at,
    dumps,
    int_at,
    list_at,
    place,
    read_claims,
    read_id,
    read_unstable,
    str_at,
    unstable_entry,
)
from cmp.check.analysis.findings import Finding, Together
from cmp.check.analysis.live import Tracking
from cmp.check.fleet.applications import Application, Contest, Lifetime, Skip
from cmp.check.output.shards import Shard
from cmp.check.sources.plan import Job
from cmp.model import ClusterResourceId

FORMAT = "chartshare-check-claims"
VERSION = 2
_MAX_BYTES = 4 << 30  # a claims document past this is not one a shard wrote


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
    base: AtBase | None = None  # the shard's apps at the --base revision; None: no --base
    contested: list[Contest] = field(default_factory=list)  # names with two definitions: the whole fleet's


@dataclass(frozen=True, slots=True)
class AtBase:
    """What a shard's document holds of the --base revision: its commit, the shard's apps there and their
    sources not rendered there, and the last specs of the shard's apps the change removes, rendered at the
    new revision (or why Argo CD cannot render them there)."""

    commit: str
    apps: Sequence[tuple[int, AppClaims]]
    skipped: Sequence[Skip]
    last: Sequence[tuple[int, AppClaims]] = ()
    stuck: Sequence[tuple[str, str]] = ()


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
        "applications": [{**asdict(app), "origin": "", "located": ""} for app in applications],
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
    base: AtBase | None = None,
    contested: Sequence[Contest] = (),
) -> str:
    """The document, one line of JSON."""
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
        "skipped": [{"app": skip.app, "reason": skip.reason, "located": list(skip.located)} for skip in skipped],
        "live": None if live is None else [{"position": place, "object": obj} for place, obj in live],
    }
    if contested:  # every shard reads the whole fleet, so each carries them; the merge joins them
        payload["contested"] = [{"id": list(contest.id), "places": list(contest.places)} for contest in contested]
    if base is not None:
        payload["base"] = {
            "commit": base.commit,
            "applications": [_app_entry(place, result) for place, result in base.apps],
            "skipped": [{"app": skip.app, "reason": skip.reason} for skip in base.skipped],
            "last": [_app_entry(place, result) for place, result in base.last],
            "stuck": [{"app": app, "reason": why} for app, why in base.stuck],
        }
    return dumps(payload) + "\n"


def _app_entry(position: int, result: AppClaims) -> dict[str, Any]:
    app = result.app
    governed = {"governed": True, "policy": result.policy} if result.governed else {}  # only under --policy
    return {
        **governed,
        "position": position,
        "name": app.name,
        "origin": app.origin,
        "located": list(app.located),
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
    apps = [_app(entry, f"applications[{n}]") for n, entry in enumerate(list_at(payload, "applications", ""))]
    warnings = [_finding(entry, f"warnings[{n}]") for n, entry in enumerate(list_at(payload, "warnings", ""))]
    skipped = [_skip(entry, f"skipped[{n}]") for n, entry in enumerate(list_at(payload, "skipped", ""))]
    live: list[tuple[int, dict[str, Any]]] | None = None
    if payload.get("live") is not None:
        live = [_live(entry, f"live[{n}]") for n, entry in enumerate(list_at(payload, "live", ""))]
    base: AtBase | None = None
    if payload.get("base") is not None:
        at_base = dict_at(payload, "base", "")
        listed = list_at(at_base, "applications", "base")
        base = AtBase(
            str_at(at_base, "commit", "base"),
            [_app(entry, f"base.applications[{n}]") for n, entry in enumerate(listed)],
            [_skip(entry, f"base.skipped[{n}]") for n, entry in enumerate(list_at(at_base, "skipped", "base"))],
            [_app(entry, f"base.last[{n}]") for n, entry in enumerate(list_at(at_base, "last", "base"))],
            [
                (str_at(entry, "app", f"base.stuck[{n}]"), str_at(entry, "reason", f"base.stuck[{n}]"))
                for n, entry in enumerate(list_at(at_base, "stuck", "base"))
            ],
        )
    contested = [
        Contest(
            ClusterResourceId(*(str(part) for part in list_at(entry, "id", f"contested[{n}]"))),
            tuple(str(place) for place in list_at(entry, "places", f"contested[{n}]")),
        )
        for n, entry in enumerate(payload.get("contested") or [])
    ]
    return Part(header, apps, warnings, skipped, live, base, contested)


def fill(path: Path, apps: Mapping[str, AppClaims], wanted: set[ClusterResourceId], *, section: str = "") -> None:
    """Put the objects of the `wanted` claims of a document's apps into `apps` (read by `read` before):
    its apps, or with `section` its apps at the --base revision ("applications") or their last specs ("last")."""
    payload = _load(path)
    held = dict_at(payload, "base", "") if section else payload
    entries = list_at(held, section or "applications", "base" if section else "")
    for entry in entries:
        result = apps.get(str_at(entry, "name", "applications[]"))
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
    for n, claim in enumerate(list_at(entry, kind, "applications[]")):
        key = read_id(claim, f"applications[].{kind}[{n}]")
        if key in wanted:
            yield key, dict_at(claim, "object", f"applications[].{kind}[{n}]")


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
    version = int_at(payload, "version", "")
    if version != VERSION:
        raise NotClaims(f"claims document version {version}; this chartshare ({__version__}) reads version {VERSION}")
    shard = dict_at(payload, "shard", "")
    raw = payload.get("raw")
    if not isinstance(raw, bool):
        raise NotClaims("raw must be true or false")
    count, index = int_at(shard, "count", "shard"), int_at(shard, "index", "shard")
    if not 1 <= index <= count:
        raise NotClaims(f"shard {index}/{count} is not a shard I/N with 1 <= I <= N")
    how = dict_at(payload, "tracking", "")
    tracking = Tracking(str_at(how, "method", "tracking"), str_at(how, "label_key", "tracking"))
    tracking = replace(tracking, installation_id=str_at(how, "installation_id", "tracking"))
    notes = tuple(str(note) for note in list_at(payload, "notes", ""))
    fleet = str_at(payload, "fleet", "")
    return Header(path, version, str_at(payload, "chartshare", ""), fleet, Shard(index, count), raw, tracking, notes)


def _app(entry: Any, where: str) -> tuple[int, AppClaims]:
    app = Application(
        name=str_at(entry, "name", where),
        origin=str_at(entry, "origin", where),
        project=str_at(entry, "project", where),
        cluster=str_at(entry, "cluster", where),
        namespace=str_at(entry, "namespace", where),
        sources=(),  # the analysis reads an app's identity; its sources stayed with the shard that rendered them
        lifetime=_lifetime(entry, where),
        parent=_parent(entry, where),
        located=_located(entry, where),
    )
    result = AppClaims(app, renderers=[str(r) for r in list_at(entry, "renderers", where)])
    result.complete = bool_at(entry, "complete", where)
    if isinstance(entry, dict) and "governed" in entry:
        result.governed = bool_at(entry, "governed", where)
        result.policy = None if entry.get("policy") is None else str_at(entry, "policy", where)
    result.emitted.update(read_claims(entry, "emitted", where, content=False))
    result.stripped.update(read_claims(entry, "stripped", where, content=False))
    result.unstable += read_unstable(entry, where)
    return int_at(entry, "position", where), result


def _located(entry: Any, where: str) -> tuple[str, int]:
    """Where the app is defined (file, line); absent in a document that did not record it."""
    if not isinstance(entry, Mapping) or "located" not in entry:
        return ("", 0)
    value = entry["located"]
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and type(value[1]) is int):
        raise NotClaims(f"{where}.located must be [file, line]")
    return (value[0], value[1])


def _lifetime(entry: Any, where: str) -> Lifetime:
    """What the app's Application says of its deletion (absent in a document of a run without --base)."""
    if not isinstance(entry, Mapping) or entry.get("lifetime") is None:
        return Lifetime()
    here = f"{where}.lifetime" if where else "lifetime"
    given = dict_at(entry, "lifetime", where)
    return Lifetime(
        bool_at(given, "finalizer", here),
        bool_at(given, "fail_on_shared", here),
        str_at(given, "appset", here),
        str_at(given, "appset_keeps", here),
        str_at(given, "prune", here),
        str_at(given, "delete", here),
        bool_at(given, "automated", here),
        bool_at(given, "auto_prune", here),
        str_at(given, "own_prune", here),
    )


def _parent(entry: Any, where: str) -> str | None:
    parent = entry.get("parent") if isinstance(entry, dict) else None
    if parent is not None and not isinstance(parent, str):
        raise NotClaims(f"{place(where, 'parent')} must be an app name or null")
    return parent


def _skip(entry: Any, where: str) -> Skip:
    return Skip(str_at(entry, "app", where), str_at(entry, "reason", where), _located(entry, where))


def _live(entry: Any, where: str) -> tuple[int, dict[str, Any]]:
    return int_at(entry, "position", where), dict_at(entry, "object", where)


def _finding(entry: Any, where: str) -> Finding:
    together = dict_at(entry, "", where).get("together")
    if together is not None and not (
        isinstance(together, list) and len(together) == 3 and all(isinstance(part, str) for part in together)
    ):
        raise NotClaims(f"{where}.together must be null or three strings")
    return Finding(
        str_at(entry, "app", where),
        str_at(entry, "code", where),
        read_id(entry, where),
        str_at(entry, "message", where),
        None if together is None else Together(*together),
    )
