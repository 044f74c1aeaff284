"""Objects that exercise one row of the reference table, for the in-memory row tests and the golden cases.

For a row, `case_objects` gives the target (named `target`), one referrer per source kind that names it
through every path of the row (these must be fixed), and decoys that must stay as they are: a referrer
in another namespace, one whose sibling condition names another kind, one whose `namespace` field
points elsewhere. `python tests/reference_cases.py` writes the `ref-<row>` golden case inputs; a test
checks that they match what this module gives, so the cases follow the table.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmp.ownership.reference_fields import ABSENT, NAME_REFERENCES, NameReference, Where  # noqa: E402
from cmp.ownership.scope import Scope, ScopeTable  # noqa: E402
from cmp.pointers import pointer_parts  # noqa: E402

APP = "team-b"
NAMESPACE = "team-b"
OTHER_NAMESPACE = "other"
TARGET = "target"
RENAMED = f"{APP}-{TARGET}"
CASES = ROOT / "tests" / "cases" / "generate"
SCOPES = ScopeTable()


def api_version(group: str) -> str:
    return f"{group}/v1" if group else "v1"


def nested(path: str, leaf: dict[str, Any]) -> dict[str, Any]:
    """The smallest object in which `path` (with `*` as one list item) leads to the last key of `leaf`."""
    parts = pointer_parts(path)
    node: Any = leaf
    for part in reversed(parts[:-1]):
        node = [node] if part == "*" else {part: node}
    return node if isinstance(node, dict) else {"items": node}


def merge(into: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Deep merge; lists are merged item by item (each path holds one item per list)."""
    for key, value in extra.items():
        if key in into and isinstance(into[key], dict) and isinstance(value, dict):
            merge(into[key], value)
        elif key in into and isinstance(into[key], list) and isinstance(value, list):
            for position, item in enumerate(value):
                if position < len(into[key]) and isinstance(item, dict):
                    merge(into[key][position], item)
                else:
                    into[key].append(item)
        else:
            into[key] = value
    return into


# What a decoy puts in a condition field instead of the value the row wants.
DECOY_VALUES = {"ClusterRole": "Role", "Role": "ClusterRole", "ServiceAccount": "User"}


def _leaf(path: str, name: str, row: NameReference, condition: str | None, namespace: str | None) -> dict[str, Any]:
    leaf: dict[str, Any] = {pointer_parts(path)[-1]: name}
    for field, allowed in row.when:
        value = allowed[0] if field != condition else DECOY_VALUES.get(allowed[0], "other")
        if value != ABSENT:
            leaf[field] = value
    if namespace is not None:
        leaf["namespace"] = namespace
    return leaf


def referrer(
    row: NameReference,
    group: str,
    kind: str,
    name: str,
    *,
    namespace: str | None = None,
    condition: str | None = None,
    sibling_namespace: str | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": api_version(group), "kind": kind, "metadata": {"name": name}}
    if namespace is not None:
        obj["metadata"]["namespace"] = namespace
    for source_group, source_kind, path in row.sources:
        if (source_group, source_kind) == (group, kind):
            merge(obj, nested(path, _leaf(path, TARGET, row, condition, sibling_namespace)))
    return obj


def source_kinds(row: NameReference) -> list[tuple[str, str]]:
    kinds: list[tuple[str, str]] = []
    for group, kind, _ in row.sources:
        if group is not None and (group, kind) not in kinds:
            kinds.append((group, kind))
    return kinds


def case_objects(row: NameReference) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """(objects, names of referrers that must be fixed, names of decoys that must not)."""
    target_group, target_kind = row.target
    assert target_group is not None
    objects: list[dict[str, Any]] = [
        {"apiVersion": api_version(target_group), "kind": target_kind, "metadata": {"name": TARGET}}
    ]
    fixed: list[str] = []
    decoys: list[str] = []
    for group, kind in source_kinds(row):
        cluster_scoped = SCOPES.of(group, kind) is Scope.CLUSTER
        stem = kind.lower()
        sibling = NAMESPACE if row.where is Where.SIBLING and cluster_scoped else None
        objects.append(referrer(row, group, kind, f"ref-{stem}", sibling_namespace=sibling))
        fixed.append(f"ref-{stem}")
        if row.where is Where.SAME or (row.where is Where.SIBLING and not cluster_scoped):
            objects.append(referrer(row, group, kind, f"decoy-namespace-{stem}", namespace=OTHER_NAMESPACE))
            decoys.append(f"decoy-namespace-{stem}")
        if row.where is Where.SIBLING:
            objects.append(referrer(row, group, kind, f"decoy-field-{stem}", sibling_namespace=OTHER_NAMESPACE))
            decoys.append(f"decoy-field-{stem}")
        for field, _ in row.when[:1]:
            objects.append(referrer(row, group, kind, f"decoy-{field.lower()}-{stem}", condition=field))
            decoys.append(f"decoy-{field.lower()}-{stem}")
    return objects, fixed, decoys


def chartshare_yaml(row: NameReference) -> str:
    group, kind = row.target
    return (
        f"# Renaming a {kind} fixes the reference table's row {row.id}; the decoys keep naming the old object.\n"
        "apiVersion: chartshare/v1\n"
        "kind: ChartShare\n"
        "chart: ../../../charts/objects\n"
        "unowned: keep\n"
        "rules:\n"
        f'  - match: {{group: "{group}", kind: {kind}}}\n'
        "    others: rename\n"
        '    renameTo: "{app}-{name}"\n'
    )


CASE_YAML = (
    "# Inputs are written by tests/reference_cases.py from the reference table; run it after changing a row.\n"
    f"args: [--app, {APP}, --namespace, {NAMESPACE}, --values, values.yaml]\n"
)


def values_yaml(row: NameReference) -> str:
    objects, _, _ = case_objects(row)
    return yaml.safe_dump({"objects": objects}, sort_keys=False, default_flow_style=False)


def case_files(row: NameReference) -> dict[str, str]:
    return {"case.yaml": CASE_YAML, "chartshare.yaml": chartshare_yaml(row), "values.yaml": values_yaml(row)}


def case_dir(row: NameReference) -> Path:
    return CASES / f"ref-{row.id}"


def write_all() -> None:
    for row in NAME_REFERENCES:
        folder = case_dir(row)
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in case_files(row).items():
            (folder / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_all()
