"""Builders of the values check's pure stages read: Applications, jobs, renders and claims, without helm."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from cmp.check.applications import Application, Source
from cmp.check.claims import Claim
from cmp.check.plan import Job
from cmp.check.renders import Rendered
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


def path_with_kubectl() -> str:
    """PATH with the fetched kubectl first: check renders kustomize sources with `kubectl kustomize` when
    no `kustomize` is on PATH, and the tests use the pinned binary, never one installed by hand."""
    import os

    import fetch_kubectl

    return os.pathsep.join([str(fetch_kubectl.ensure().parent), os.environ.get("PATH", "")])
