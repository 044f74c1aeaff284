"""Claims as JSON: how a shard's claims document and check's render-cache entries write and read them.

Objects are stored as JSON with the values JSON lacks (timestamps, binary) written as `str()` writes them,
which is how the analysis already shows and compares them. Every reader names the place of what it refuses
(NotClaims), so a damaged document or cache entry says where.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from cmp.check.analysis.claims import Claim, Unstable
from cmp.model import ClusterResourceId

T = TypeVar("T")


class NotClaims(Exception):
    """A file that is not a claims document as this chartshare writes them; the message says where."""


def claims_entry(claims: Sequence[Claim], stripped: bool) -> list[dict[str, Any]]:
    """Claims as the document (and the render cache) holds them."""
    entries: list[dict[str, Any]] = []
    for claim in claims:
        entry: dict[str, Any] = {"id": list(claim.id), "object": claim.obj}
        if stripped:
            entry.update(reason=claim.reason, top_level_owner=claim.top_level_owner, accepted=claim.accepted)
        entry.update({key: value for key, value in _decided(claim).items() if value})
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
    emitted = tuple(claim for _, claim in read_claims(entry, "emitted", "", content=True))
    stripped = tuple(claim for _, claim in read_claims(entry, "stripped", "", content=True))
    unmatched = entry.get("unmatched", []) if isinstance(entry, dict) else []
    if not isinstance(unmatched, list) or not all(isinstance(where, str) for where in unmatched):
        raise NotClaims("unmatched: not a list of strings")
    return emitted, stripped, tuple(read_unstable(entry, "")), tuple(unmatched)


def dumps(value: Any) -> str:
    """JSON as the document writes it: compact, ASCII (a chart's text may hold what UTF-8 cannot encode), in
    the objects' own key order (every shard reads the same files in the same order)."""
    return json.dumps(value, separators=(",", ":"), default=str)


def read_claims(entry: Any, kind: str, where: str, *, content: bool) -> Iterator[tuple[ClusterResourceId, Claim]]:
    """The `emitted` or `stripped` claims of an entry, with their objects or (without `content`) `{}`."""
    for n, claim in enumerate(list_at(entry, kind, where)):
        here = f"{where}.{kind}[{n}]" if where else f"{kind}[{n}]"
        key = read_id(claim, here)
        obj = dict_at(claim, "object", here) if content else {}
        decided = {
            field: typed_at(claim, field, here, type(default), noun)
            for field, (default, noun) in _DECIDED.items()
            if isinstance(claim, dict) and field in claim
        }
        if kind == "emitted":
            yield key, Claim(key, obj, **decided)
        else:
            flags = (bool_at(claim, "top_level_owner", here), bool_at(claim, "accepted", here))
            yield key, Claim(key, obj, str_at(claim, "reason", here), *flags, **decided)


# What a claim says of the decision behind it, written only when set: (the default, how an error names it).
_DECIDED: dict[str, tuple[Any, str]] = {
    "rule": ("", "a string"),
    "renamed_from": ("", "a string"),
    "protected": (False, "true or false"),
    "policy": ("", "a string"),  # the fleet policy entry that decided it, its file and line, the app's rule it
    "policy_at": ("", "a string"),  # overrode: only under --policy, so documents without one stay as they were
    "overrode": ("", "a string"),
}


def _decided(claim: Claim) -> dict[str, Any]:
    return {
        "rule": claim.rule,
        "renamed_from": claim.renamed_from,
        "protected": claim.protected,
        "policy": claim.policy,
        "policy_at": claim.policy_at,
        "overrode": claim.overrode,
    }


def read_unstable(entry: Any, where: str) -> list[Unstable]:
    found: list[Unstable] = []
    for n, unstable in enumerate(list_at(entry, "unstable", where)):
        here = f"{where}.unstable[{n}]" if where else f"unstable[{n}]"
        found.append((read_id(unstable, here), tuple(str(field) for field in list_at(unstable, "fields", here))))
    return found


def read_id(entry: Any, where: str) -> ClusterResourceId:
    value = dict_at(entry, "", where).get("id")
    if not (isinstance(value, list) and len(value) == 5 and all(isinstance(part, str) for part in value)):
        raise NotClaims(f"{where}.id must be five strings (cluster, group, kind, namespace, name)")
    return ClusterResourceId(*value)


def dict_at(entry: Any, key: str, where: str) -> dict[str, Any]:
    """`entry[key]` as a mapping (or, with key "", `entry` itself)."""
    value = entry if not key else (entry.get(key) if isinstance(entry, dict) else None)
    if not isinstance(value, dict):
        raise NotClaims(f"{place(where, key)} must be a mapping")
    return value


def list_at(entry: Any, key: str, where: str) -> list[Any]:
    return typed_at(entry, key, where, list, "a list")


def str_at(entry: Any, key: str, where: str) -> str:
    return typed_at(entry, key, where, str, "a string")


def int_at(entry: Any, key: str, where: str) -> int:
    return typed_at(entry, key, where, int, "a whole number")


def bool_at(entry: Any, key: str, where: str) -> bool:
    return typed_at(entry, key, where, bool, "true or false")


def typed_at(entry: Any, key: str, where: str, kind: type[T], noun: str) -> T:
    """`entry[key]` when it is a `kind` (JSON's true is no number here), else NotClaims naming the field."""
    value = dict_at(entry, "", where).get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise NotClaims(f"{place(where, key)} must be {noun}")
    return value


def place(where: str, key: str) -> str:
    return f"{where}.{key}" if where and key else where or key or "the document"
