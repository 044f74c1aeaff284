"""App of Apps: the Applications and ApplicationSets an app renders join the fleet, as Argo CD creates them.

An Application object that an app emits becomes an Application of this Argo CD once the parent syncs, and
an ApplicationSet makes its Applications. A child lands in the namespace the parent's claim puts it in (its
own `metadata.namespace`, else the parent's destination), which gives its instance name. One name is one
Application: the same definition read from a file and rendered by a parent is one app (its parent
recorded); an app that renders itself adds nothing; a different definition under a taken name is a
conflict on the Application object (neither definition checked: Argo CD's two writers fight over it), and an
app that renders one of its ancestors is bad input naming both places. The rounds of rendering that find
them are cmp/check/rounds.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cmp.check.fleet import inventory
from cmp.check.fleet.applications import (
    ARGO_GROUP,
    IN_CLUSTER_SERVER,
    Application,
    Contest,
    Fleet,
    Malformed,
    Skip,
    application_object,
    place_of,
)
from cmp.check.fleet.generators.context import ClusterSecret
from cmp.check.fleet.repos import Repositories
from cmp.model import ClusterResourceId

ARGO_KINDS = ("Application", "ApplicationSet")


def children(
    parent: Application,
    objects: Iterable[tuple[ClusterResourceId, Mapping[str, Any]]],
    where: tuple[str, Repositories, Sequence[ClusterSecret] | None],
    fleet: Fleet,
    errors: list[str],
    skipped: list[Skip],
) -> Iterator[Application]:
    """The Applications that the Application and ApplicationSet objects among one render's `objects` stand
    for; `where` is the control-plane namespace, the repositories and the clusters they are read with."""
    control_plane_namespace, repositories, clusters = where
    for key, rendered in objects:
        if key.group != ARGO_GROUP or key.kind not in ARGO_KINDS:
            continue
        obj = dict(rendered)
        metadata = obj.get("metadata")
        obj["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), "namespace": key.namespace}
        place = f"rendered by {parent.name} ({parent.origin})"
        try:
            found, unread = inventory.argo_object(obj, place, control_plane_namespace, repositories, clusters, fleet)
        except Malformed as problem:
            errors.append(f"{place}: {key.kind} {key.name}: {problem}")
            continue
        skipped.extend([replace(skip, reason=f"{skip.reason} (rendered by {parent.name})") for skip in unread])
        for child in found:
            yield replace(child, parent=parent.name, located=parent.located)


@dataclass(slots=True)
class Known:
    """Every app admitted so far: its definition, where it was read, and the app that created it."""

    definitions: dict[str, Application] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)
    contested: dict[str, Contest] = field(default_factory=dict)  # names with two definitions: checked for none
    control_plane_namespace: str = "argocd"

    def admit(self, app: Application, errors: list[str]) -> bool:
        """Whether `app` is new to the fleet; an app already known only gains its parent."""
        if app.name in self.contested:
            self.contested[app.name] = self.contested[app.name].joined(place_of(app))
            return False
        known = self.definitions.get(app.name)
        if known is None:
            self.definitions[app.name] = app
            if app.parent is not None:
                self.parents[app.name] = app.parent
            return True
        if app.parent is None:  # two files: the inventory's own message
            errors.append(
                f"{app.origin}: the name {app.name} is taken by {known.origin}; Argo CD keeps one Application "
                "per name: rename one of them"
            )
            return False
        if app.parent == app.name and _same(app, known):
            return False  # an app that renders itself: Argo CD tracks it, and nothing new is created
        if app.name in self.ancestors(app.parent):
            errors.append(
                f"{app.origin}: Application {app.name} is rendered by {app.parent}, which {app.name} itself "
                f"creates ({known.origin}): a cycle; remove the Application from one of them"
            )
            return False
        if not _same(app, known):
            parent = self.definitions.get(app.parent)
            cluster = parent.cluster if parent is not None else IN_CLUSTER_SERVER
            found = application_object(app, self.control_plane_namespace, cluster)
            self.contested[app.name] = Contest(found, (place_of(known),)).joined(place_of(app))
            return False
        self.parents.setdefault(app.name, app.parent)
        return False

    def ancestors(self, name: str) -> list[str]:
        chain = [name]
        while (above := self.parents.get(chain[-1])) is not None and above not in chain:
            chain.append(above)
        return chain


def _same(one: Application, other: Application) -> bool:
    """One definition: the same app once where it was read and who created it are set aside."""
    return replace(one, origin="", parent=None, located=("", 0)) == replace(
        other, origin="", parent=None, located=("", 0)
    )
