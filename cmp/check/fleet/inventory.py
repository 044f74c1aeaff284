"""The fleet the paths describe: every Application, and every Application an ApplicationSet makes.

Names are unique per Argo CD instance, so a second Application under a taken name is an error naming both
places; an ApplicationSet whose generators check cannot evaluate is listed as skipped, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cmp.check.fleet.applications import (
    ARGO_GROUP,
    Application,
    Fleet,
    Malformed,
    Skip,
    application,
    documents,
    items,
    manifest_files,
    name_of,
    place,
)
from cmp.check.fleet.generators.context import ClusterSecret, Context
from cmp.check.fleet.generators.expand import expand
from cmp.check.fleet.repos import Repositories
from cmp.model import split_api_version


def load(
    paths: Sequence[Path],
    control_plane_namespace: str,
    repositories: Repositories,
    clusters: Sequence[ClusterSecret] | None = None,
) -> Fleet:
    """Every Application and expanded ApplicationSet under `paths`; other kinds are ignored."""
    fleet = Fleet()
    seen: dict[str, str] = {}
    for path in manifest_files(paths, fleet.errors):
        for number, count, document in documents(path, fleet.errors, needle=ARGO_GROUP):
            for suffix, obj in items(document):
                where = place(path, number, count, suffix)
                if not isinstance(obj, dict):
                    continue
                group, _ = split_api_version(str(obj.get("apiVersion") or ""))
                if group != ARGO_GROUP or obj.get("kind") not in ("Application", "ApplicationSet"):
                    continue
                label = f"{obj['kind']} {name_of(obj)}"
                try:
                    found, skipped = argo_object(obj, where, control_plane_namespace, repositories, clusters, fleet)
                except Malformed as problem:
                    fleet.errors.append(f"{where}: {label}: {problem}")
                    continue
                fleet.skipped += skipped
                _add(fleet, found, seen)
    return fleet


def argo_object(
    obj: Mapping[str, Any],
    where: str,
    control_plane_namespace: str,
    repositories: Repositories,
    clusters: Sequence[ClusterSecret] | None,
    fleet: Fleet,
) -> tuple[list[Application], list[Skip]]:
    """The Applications one Application or ApplicationSet object stands for, and what its generators could
    not evaluate; raises Malformed."""
    label = f"{obj['kind']} {name_of(obj)}"
    if obj["kind"] == "Application":
        return [application(obj, f"{where}: {label}", control_plane_namespace)], []
    spec = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    context = Context(
        go_template=spec.get("goTemplate") is True,
        options=tuple(str(option) for option in spec.get("goTemplateOptions") or ()),
        repositories=repositories,
        clusters=None if clusters is None else tuple(clusters),
        notes=fleet.notes,
    )
    return expand(obj, where, context, control_plane_namespace)


def _add(fleet: Fleet, found: list[Application], seen: dict[str, str]) -> None:
    for app in found:
        if app.name in seen:
            fleet.errors.append(
                f"{app.origin}: the name {app.name} is taken by {seen[app.name]}; Argo CD keeps one "
                "Application per name: rename one of them"
            )
            continue
        seen[app.name] = app.origin
        fleet.applications.append(app)
