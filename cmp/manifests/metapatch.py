"""JSON Patch under `/metadata/labels` and `/metadata/annotations`, on the metadata parsed alone.

Once a document's metadata is parsed on its own (a rename took it), its text no longer says what the
emitter will write there, so a later label or annotation patch edits that parsed copy; the emitter then
rewrites the `metadata` entry alone. The operations mean what jsonpatch makes them mean (RFC 6902, `add`
needing its parent, `test` comparing with ==); any the copy cannot take for sure is left to the object
path, which also gives the errors.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from cmp.pointers import pointer_parts

_FIELDS = frozenset({"labels", "annotations"})
_OPERATIONS = frozenset({"add", "replace", "remove", "test"})


def editable(tokens: list[str]) -> bool:
    """Whether a path's keys lead to the labels or annotations, or to one of them."""
    return len(tokens) in (2, 3) and tokens[0] == "metadata" and tokens[1] in _FIELDS


def applies(operation: dict[str, Any]) -> bool:
    """Whether an operation is one this module carries out."""
    path = operation.get("path")
    return operation.get("op") in _OPERATIONS and isinstance(path, str) and editable(pointer_parts(path))


def apply(metadata: dict[str, Any], operations: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """A new metadata mapping with the operations carried out (`metadata` itself is left as it is); None
    when jsonpatch would fail, or the operation is not one of the four on these paths."""
    result = dict(metadata)
    copied: set[str] = set()  # the maps already copied, to edit
    for operation in operations:
        if not applies(operation):
            return None
        op, tokens, value = operation["op"], pointer_parts(operation["path"]), operation.get("value")
        field = tokens[1]
        if len(tokens) == 2:
            parent, key = result, field
            copied.add(field)  # a map put in whole is the patch's own copy
        else:
            found = result.get(field)
            if not isinstance(found, dict):
                return None  # no such map (or not a map): jsonpatch's own error says so
            if field not in copied:
                found = result[field] = dict(found)
                copied.add(field)
            parent, key = found, tokens[2]
        if op == "add":
            parent[key] = copy.deepcopy(value)
        elif key not in parent:
            return None  # replace, remove and test need the entry
        elif op == "replace":
            parent[key] = copy.deepcopy(value)
        elif op == "remove":
            del parent[key]
        elif parent[key] != value:
            return None  # a failed test
    return result
