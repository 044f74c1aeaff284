"""JSON 6902 patches on the selected objects, as kustomize applies them (evanphx/json-patch: strict, an
operation on a path that is not there fails)."""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer


class PatchFailed(ValueError):
    """An operation did not apply (a missing path, a failed `test`)."""


def apply_operations(obj: dict[str, Any], operations: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """The object with the operations applied, one by one so that a failure names its operation (a new
    object; the given one is untouched)."""
    result: Any = obj
    for index, operation in enumerate(operations):
        what = f"operation {index} ({operation.get('op')} {operation.get('path')})"
        try:
            result = jsonpatch.JsonPatch([operation]).apply(result, in_place=False)
        except jsonpatch.JsonPatchTestFailed:
            raise PatchFailed(f"{what}: the test failed (the value differs)") from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, KeyError, IndexError, TypeError):
            raise PatchFailed(f"{what}: the path does not exist in the object") from None
    if not isinstance(result, dict):
        raise PatchFailed("the operations leave no object")
    return result
