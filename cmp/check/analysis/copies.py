"""Comparing two apps' copies of one object, as far as the difference matters to what runs.

When one app emits a shared object and another strips its own copy, the second app lives with the
first one's copy. Copies that differ only in what helm and Argo CD stamp per release (the tracking id,
helm's chart and instance labels, the protection chartshare adds), or in the namespace a template writes
on a cluster-scoped object, are the same object for that purpose; any other difference is named by JSON
Pointer (RFC 6901), with both values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from cmp.annotations import PROTECTION, SYNC_OPTIONS, TRACKING_ID, sync_options
from cmp.pointers import token

# What helm or Argo CD writes per release or per app, wherever a `metadata` block sits (pod templates too).
STAMPED_LABELS = frozenset({"helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by"})
STAMPED_ANNOTATIONS = frozenset({TRACKING_ID, "meta.helm.sh/release-name", "meta.helm.sh/release-namespace"})
PROTECTION_KEYS = frozenset(option.partition("=")[0] for option in PROTECTION)  # Prune, Delete
SHOWN_VALUE_CHARS = 60


class Difference(NamedTuple):
    """One place where two copies differ; `ABSENT` where one copy has nothing."""

    pointer: str
    left: Any
    right: Any


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


def differences(left: Any, right: Any, limit: int, *, cluster_scoped: bool) -> list[Difference]:
    """The first `limit` places where the copies differ, once the per-release stamps are set aside (and,
    for a cluster-scoped object, `metadata.namespace`, which the API server drops)."""
    if _same_at_a_glance(left, right, cluster_scoped):
        return []
    left, right = unstamped(left), unstamped(right)
    if cluster_scoped:
        left, right = _without_namespace(left), _without_namespace(right)
    found: list[Difference] = []
    for difference in _walk(left, right, ""):
        found.append(difference)
        if len(found) == limit:
            break
    return found


def _same_at_a_glance(left: Any, right: Any, cluster_scoped: bool) -> bool:
    """Equal once the top-level metadata is unstamped: the common case, decided by C-speed comparison
    instead of a walk (a chart's CRDs hold a hundred thousand nodes)."""
    if not (isinstance(left, dict) and isinstance(right, dict)):
        return False
    first, second = ({**obj, "metadata": unstamped(obj.get("metadata"), "metadata")} for obj in (left, right))
    if cluster_scoped:
        first, second = _without_namespace(first), _without_namespace(second)
    return bool(first == second)


def unstamped(value: Any, key: str = "") -> Any:
    """The object without the labels and annotations helm and Argo CD stamp per release."""
    if isinstance(value, Mapping):
        if key == "metadata":
            return _metadata(value)
        return {k: unstamped(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [unstamped(item) for item in value]
    return value


def _without_namespace(obj: Any) -> Any:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(metadata, dict) or "namespace" not in metadata:
        return obj
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "namespace"}}


def _metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in metadata.items():
        if key == "labels" and isinstance(value, Mapping):
            value = {k: v for k, v in value.items() if k not in STAMPED_LABELS}
        elif key == "annotations" and isinstance(value, Mapping):
            value = _annotations(value)
        else:
            value = unstamped(value, str(key))
        if value or key not in ("labels", "annotations"):
            kept[str(key)] = value
    return kept


def _annotations(annotations: Mapping[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in annotations.items() if k not in STAMPED_ANNOTATIONS and k != SYNC_OPTIONS}
    options = [o for o in sync_options(annotations) if o.partition("=")[0] not in PROTECTION_KEYS]
    if options:
        kept[SYNC_OPTIONS] = ",".join(options)
    return kept


def _walk(left: Any, right: Any, pointer: str) -> Iterator[Difference]:
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        for key in [*left, *(key for key in right if key not in left)]:
            below = f"{pointer}/{token(str(key))}"
            yield from _walk(left.get(key, ABSENT), right.get(key, ABSENT), below)
    elif isinstance(left, list) and isinstance(right, list):
        for position in range(max(len(left), len(right))):
            yield from _walk(
                left[position] if position < len(left) else ABSENT,
                right[position] if position < len(right) else ABSENT,
                f"{pointer}/{position}",
            )
    elif left != right:
        yield Difference(pointer, left, right)


def shown(value: Any) -> str:
    """A value as a message quotes it: JSON, cut short when long; `absent` where a copy has none."""
    if value is ABSENT:
        return "absent"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 3] + "..."
