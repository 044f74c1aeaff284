"""The fields Argo CD's diff ignores: an Application's `spec.ignoreDifferences` and argocd-cm's
`resource.customizations.ignoreDifferences.<group_kind>` (and `.all`).

A warning about a field (a render that differs between runs, replicas an HPA owns) is advice to make the
diff stop showing it; once the diff ignores that field, repeating the advice would never let it go quiet.
Paths are compared in the dotted form the warnings print (`spec.template.metadata.annotations.x`, `[n]`
for a list item): a JSON pointer (`/spec/replicas`, `~1` for `/`) and a jq path of the `.a.b[0]` or
`.a["b.c"]` form are read into it; a jq expression of any other form is never taken to cover a field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cmp import goyaml
from cmp.model import ClusterResourceId

CM_PREFIX = "resource.customizations.ignoreDifferences."
_JQ_STEP = re.compile(r'\.([A-Za-z_][A-Za-z0-9_-]*)|\["((?:[^"\\]|\\.)*)"\]|\[([0-9]+)\]')


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """Fields the diff ignores on the objects one entry selects (None: any)."""

    group: str | None
    kind: str | None
    name: str | None
    namespace: str | None
    paths: tuple[str, ...]

    def selects(self, key: ClusterResourceId) -> bool:
        wanted = (
            (self.group, key.group),
            (self.kind, key.kind),
            (self.name, key.name),
            (self.namespace, key.namespace),
        )
        return all(want is None or want == got for want, got in wanted)

    def covers(self, key: ClusterResourceId, field: str) -> bool:
        return self.selects(key) and any(
            field == path or field.startswith((f"{path}.", f"{path}[")) for path in self.paths
        )


def application_rules(entries: Iterable[Any]) -> list[IgnoreRule]:
    """An Application's spec.ignoreDifferences entries."""
    rules = []
    for entry in entries:
        if isinstance(entry, Mapping):
            rules.append(_rule(entry, _text(entry.get("group")) or "", _text(entry.get("kind"))))
    return rules


def argocd_cm_rules(data: Mapping[str, Any]) -> list[IgnoreRule]:
    """argocd-cm's ignoreDifferences customizations: `<group>_<kind>` (`<kind>` for the core group) or `all`."""
    rules = []
    for key, value in data.items():
        if not str(key).startswith(CM_PREFIX) or not isinstance(value, str):
            continue
        try:
            entry = goyaml.load(value)
        except Exception:
            continue
        if not isinstance(entry, Mapping):
            continue
        target = str(key).removeprefix(CM_PREFIX)
        if target == "all":
            rules.append(_rule(entry, None, None))
        else:
            group, _, kind = target.rpartition("_")
            rules.append(_rule(entry, group, kind))
    return rules


def covered(rules: Iterable[IgnoreRule], key: ClusterResourceId, field: str) -> bool:
    return any(rule.covers(key, field) for rule in rules)


def _rule(entry: Mapping[str, Any], group: str | None, kind: str | None) -> IgnoreRule:
    paths = [*_pointers(entry.get("jsonPointers")), *_jq_paths(entry.get("jqPathExpressions"))]
    return IgnoreRule(group, kind, _text(entry.get("name")), _text(entry.get("namespace")), tuple(paths))


def _pointers(found: Any) -> Iterator[str]:
    for pointer in found if isinstance(found, list) else ():
        steps = str(pointer).strip("/").split("/")
        yield ".".join(
            f"[{step}]" if step.isdigit() else step.replace("~1", "/").replace("~0", "~") for step in steps
        ).replace(".[", "[")


def _jq_paths(found: Any) -> Iterator[str]:
    for expression in found if isinstance(found, list) else ():
        text, at, steps = str(expression).strip(), 0, []
        while at < len(text):
            step = _JQ_STEP.match(text, at)
            if step is None:
                break
            name, quoted, index = step.groups()
            steps.append(f"[{index}]" if index is not None else f".{name if name is not None else quoted}")
            at = step.end()
        if at == len(text) and steps:
            yield "".join(steps).removeprefix(".")


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str) and value else None
