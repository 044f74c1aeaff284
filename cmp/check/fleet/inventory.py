"""The fleet the paths describe: every Application, and every Application an ApplicationSet makes.

Names are unique per Argo CD instance: two definitions under one name (two files) are a conflict on the
Application object, neither checked, the rest of the fleet is; one ApplicationSet generating a name twice
makes the first (Argo CD's validateGeneratedApplications refuses the later ones, which fail). An
ApplicationSet whose generators check cannot evaluate is listed as skipped, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from cmp.check.fleet.applications import (
    ARGO_GROUP,
    RENDER_FAILED,
    Application,
    Contest,
    Fleet,
    Malformed,
    Skip,
    application,
    application_object,
    documents,
    items,
    manifest_files,
    name_lines,
    name_of,
    place,
    place_of,
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
    seen: dict[str, Application] = {}
    for path in manifest_files(paths, fleet.errors):
        lines: list[int] | None = None
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
                if lines is None:
                    lines = name_lines(path)
                located = (path.as_posix(), lines[number - 1] if number <= len(lines) else 1)
                _add(fleet, [replace(app, located=located) for app in found], seen, control_plane_namespace)
    fleet.applications = [app for app in fleet.applications if app.name not in fleet.contested]
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
    found, skipped = _expanded(obj, where, control_plane_namespace, repositories, clusters, fleet)
    made: dict[str, Application] = {}
    for app in found:
        if app.name in made:  # Argo CD creates the first and refuses the others (ApplicationValidationError)
            skipped.append(
                Skip(
                    app.name,
                    f"{RENDER_FAILED}: {label} generates the name {app.name} again ({app.origin}); Argo CD creates "
                    f"the first ({made[app.name].origin}) and refuses the others: make the name template unique",
                )
            )
            continue
        made[app.name] = app
    return list(made.values()), skipped


def _expanded(
    obj: Mapping[str, Any],
    where: str,
    control_plane_namespace: str,
    repositories: Repositories,
    clusters: Sequence[ClusterSecret] | None,
    fleet: Fleet,
) -> tuple[list[Application], list[Skip]]:
    spec = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    context = Context(
        go_template=spec.get("goTemplate") is True,
        options=tuple(str(option) for option in spec.get("goTemplateOptions") or ()),
        repositories=repositories,
        clusters=None if clusters is None else tuple(clusters),
        notes=fleet.notes,
    )
    return expand(obj, where, context, control_plane_namespace)


def _add(fleet: Fleet, found: list[Application], seen: dict[str, Application], control_plane_namespace: str) -> None:
    """Each app under a new name joins the fleet; a second definition of a name contests it."""
    for app in found:
        first = seen.get(app.name)
        if first is None:
            seen[app.name] = app
            fleet.applications.append(app)
            continue
        contest = fleet.contested.get(app.name) or Contest(
            application_object(app, control_plane_namespace), (place_of(first),)
        )
        fleet.contested[app.name] = contest.joined(place_of(app))
