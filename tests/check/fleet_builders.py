"""Builders of the values check's pure stages read: Applications, jobs, renders and claims, without helm;
and the analysis of renders, as a run makes it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from cmp.check.analysis import conflicts
from cmp.check.analysis.claims import Claim
from cmp.check.analysis.conflicts import Report
from cmp.check.analysis.live import ANNOTATION_TRACKING, Tracking
from cmp.check.fleet.applications import Application, Skip, Source
from cmp.check.sources.plan import Job
from cmp.check.sources.renders import Rendered, claims_by_app
from cmp.model import ClusterResourceId
from conftest import make_source

CLUSTER = "https://k"


def app(name: str, cluster: str = CLUSTER, namespace: str = "ns", *sources: Source) -> Application:
    return Application(
        name, f"apps.yaml: Application {name}", "default", cluster, namespace, sources or (make_source(),)
    )


def claim(
    kind: str, name: str, obj: dict[str, Any] | None = None, *, group: str = "", namespace: str = "", reason: str = ""
) -> Claim:
    """A claim on the default cluster; `rendered` moves it to its app's cluster."""
    return Claim(ClusterResourceId(CLUSTER, group, kind, namespace, name), obj or {"kind": kind}, reason)


def rendered(
    application: Application, *emitted: Claim, stripped: tuple[Claim, ...] = (), renderer: str = "chartshare"
) -> Rendered:
    """One render of the app's first source, its claims placed on the app's cluster."""
    job = Job(application, application.sources[0], renderer, Path("."), Path("."), False, "helm", 9)

    def placed(found: Claim) -> Claim:
        return replace(found, id=found.id._replace(cluster=application.cluster))

    return Rendered(job, tuple(map(placed, emitted)), tuple(map(placed, stripped)))


def analyse(
    renders: Sequence[Rendered],
    skipped: Sequence[Skip],
    live_objects: Sequence[Mapping[str, Any]] | None = None,
    tracking: Tracking = ANNOTATION_TRACKING,
) -> Report:
    """The report of these renders, as a single run of check analyses them."""
    return conflicts.analyse(claims_by_app(renders, skipped), skipped, live_objects, tracking)


def path_with_kubectl() -> str:
    """PATH with the kustomize Argo CD 3.6 ships and the fetched kubectl first: check renders kustomize
    sources with `kustomize build` (`kubectl kustomize` when no `kustomize` is on PATH, as on a machine
    without Go), and the tests use the pinned binaries, never ones installed by hand."""
    import os

    import fetch_kubectl

    from conftest import kustomize_build

    first = [str(Path(kustomize_build()[0]).parent), str(fetch_kubectl.ensure().parent)]
    return os.pathsep.join(dict.fromkeys([*first, os.environ.get("PATH", "")]))
