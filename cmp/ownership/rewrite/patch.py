"""The rules' RFC 6902 patches: on helm's text when it can take them, else on the parsed object."""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from cmp.errors import RuleError
from cmp.manifests import Resource
from cmp.model import Decision
from cmp.ownership.outcome import rule_label
from cmp.ownership.rules import Ownership


def patch(resource: Resource, decision: Decision, ownership: Ownership | None) -> int:
    """Apply the rule's RFC 6902 operations in order; returns how many were applied."""
    if not decision.patch:
        return 0
    if _text_patched(resource, decision.patch):
        return len(decision.patch)
    import jsonpatch  # only apps whose rules patch pay for the import
    import jsonpointer

    label = rule_label(decision, ownership)
    before = resource.obj
    try:  # copying and comparing recurse: a document nested hundreds deep exhausts Python's stack
        work: Any = copy.deepcopy(before)
        for position, operation in enumerate(decision.patch):
            try:
                work = jsonpatch.JsonPatch([operation]).apply(work, in_place=True)
            except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as error:
                raise RuleError(
                    f"{label}: patch[{position}] ({_operation(operation)}) fails on {resource.id}"
                    f"{resource.template_note()}: {_cause(error, operation)}; "
                    "fix the operation or narrow the rule's match"
                ) from None
        touched = {key for key in {*before, *work} if before.get(key) != work.get(key)}
    except RecursionError:
        raise RuleError(f"{label}: {resource.id}{resource.template_note()} is nested too deeply to patch") from None
    problem = _incomplete(work)
    if problem:
        raise RuleError(
            f"{label}: patch leaves {resource.id}{resource.template_note()} {problem}, which Argo CD rejects; "
            "fix the operations"
        )
    if touched:
        resource.obj = work
        resource.mark_changed(metadata_only=touched == {"metadata"})
    return len(decision.patch)


def _text_patched(resource: Resource, operations: Sequence[dict[str, Any]]) -> bool:
    from cmp.manifests import textpatch  # only apps whose rules patch load it

    return textpatch.patch_resource(resource, operations)


def _operation(operation: dict[str, Any]) -> str:
    text = f"{operation['op']} {operation['path'] or '/'}"
    return f"{text} from {operation['from']}" if "from" in operation else text


def _cause(error: Exception, operation: dict[str, Any]) -> str:
    """The library's reason without the dump of the document it carries (it may hold secrets)."""
    import jsonpatch

    if isinstance(error, jsonpatch.JsonPatchTestFailed):
        return f"the value at {operation['path']} is not the tested value"
    message = re.sub(r" in [\[{].*$", "", str(error), flags=re.S)
    if operation["op"] == "add" and "not found" in message:
        message += " (`add` needs the parent to exist: add the parent first, e.g. with value {})"
    return message


def _incomplete(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return "not an object"
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            return f"without `{key}`"
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or not (metadata.get("name") or metadata.get("generateName")):
        return "without `metadata.name`"
    return None
