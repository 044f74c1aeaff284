"""The merge of N shards' claims documents prints what a single run prints, for generated fleets and N in 1..5:
the text, JSON and JUnit reports byte for byte, the exit status (a conflict or none) and the notes.

A generated fleet has apps on two clusters, one or two sources each, drawing their claims from a small set
of objects (so apps collide), emitted or stripped, with contents that match or differ, Prune=false or not;
HPAs scaling Deployments, fields that change between renders, skipped sources, and live objects tracked by
fleet apps and by apps outside the fleet, under each tracking method. Each shard's document is written as
`--shard I/N` writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fleet_builders import analyse, app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmp.annotations import SYNC_OPTIONS, TRACKING_ID
from cmp.check import command
from cmp.check.analysis.claims import Claim
from cmp.check.analysis.live import METHODS, Tracking
from cmp.check.fleet.applications import Application, Fleet, Skip
from cmp.check.output.shards import Shard
from cmp.check.sources.plan import Job, Plan
from cmp.check.sources.renders import Rendered
from cmp.model import ClusterResourceId
from conftest import make_source

CLUSTERS = ("https://one", "https://two")
NAMES = ("alpha", "beta", "gamma", "delta", "eps", "zeta", "team_x", "omega")
# (group, kind, namespace, name): few enough that apps collide often.
OBJECTS = (
    ("", "Namespace", "", "shared"),
    ("rbac.authorization.k8s.io", "ClusterRole", "", "reader"),
    ("apiextensions.k8s.io", "CustomResourceDefinition", "", "widgets.example.io"),
    ("", "ConfigMap", "ns", "settings"),
    ("apps", "Deployment", "ns", "web"),
    ("autoscaling", "HorizontalPodAutoscaler", "ns", "web"),
)
API_VERSIONS = {"": "v1", "autoscaling": "autoscaling/v2"}
Generated = tuple[list[Application], list[Rendered], list[Skip], list[dict[str, Any]] | None, Tracking]


def _object(group: str, kind: str, namespace: str, name: str, version: int, protected: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/instance": "x", "tier": "t"}}
    if namespace:
        metadata["namespace"] = namespace
    if protected:
        metadata["annotations"] = {SYNC_OPTIONS: "Prune=false"}
    spec: dict[str, Any] = {"version": version, "replicas": 2}
    if kind == "HorizontalPodAutoscaler":
        spec["scaleTargetRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    return {"apiVersion": API_VERSIONS.get(group, f"{group}/v1"), "kind": kind, "metadata": metadata, "spec": spec}


@st.composite
def claims(draw: st.DrawFn, cluster: str) -> Claim:
    group, kind, namespace, name = draw(st.sampled_from(OBJECTS))
    obj = _object(group, kind, namespace, name, draw(st.integers(0, 1)), draw(st.booleans()))
    reason = draw(st.sampled_from(["", "rules[0]: owned by alpha", "no rule: top-level owner is beta"]))
    key = ClusterResourceId(cluster, group, kind, namespace, name)
    return Claim(key, obj, reason, top_level_owner=draw(st.booleans()), accepted=draw(st.booleans()))


@st.composite
def fleets(draw: st.DrawFn) -> Generated:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=len(NAMES), unique=True))
    apps = [app(name, draw(st.sampled_from(CLUSTERS))) for name in names]
    renders: list[Rendered] = []
    for application in apps:
        for label in ["source", "sources[1]"][: draw(st.integers(0, 2))]:
            source = make_source(label=label)
            job = Job(
                application,
                source,
                draw(st.sampled_from(["chartshare", "helm"])),
                Path("."),
                Path("."),
                False,
                "helm",
                9,
            )
            emitted = draw(st.lists(claims(application.cluster), max_size=4))
            stripped = draw(st.lists(claims(application.cluster), max_size=3))
            unstable = [(claim.id, ("spec.version",)) for claim in emitted if draw(st.booleans())][:1]
            renders.append(Rendered(job, tuple(emitted), tuple(stripped), tuple(unstable)))
    skipped = [
        Skip(name, draw(st.sampled_from(["sources[2]: kustomize source", "ApplicationSet: spec.templatePatch"])))
        for name in draw(st.lists(st.sampled_from([*NAMES, "some-appset"]), max_size=3, unique=True))
    ]
    tracking = Tracking(draw(st.sampled_from(METHODS)))
    live = None
    if draw(st.booleans()):
        live = []
        for _ in range(draw(st.integers(0, 4))):
            group, kind, namespace, name = draw(st.sampled_from(OBJECTS))
            tracker = draw(st.sampled_from([*names, "outsider"]))
            annotations = {TRACKING_ID: f"{tracker}:{group}/{kind}:{namespace}/{name}"}
            if draw(st.booleans()):
                annotations[SYNC_OPTIONS] = "Prune=false"
            metadata = {"name": name, "annotations": annotations, "labels": {tracking.label_key: tracker}}
            if namespace:
                metadata["namespace"] = namespace
            live.append({"apiVersion": API_VERSIONS.get(group, f"{group}/v1"), "kind": kind, "metadata": metadata})
        live.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "untracked", "namespace": "ns"}})
    return apps, renders, skipped, live, tracking


def _shard_documents(folder: Path, fleet: Generated, count: int) -> list[Path]:
    """Every shard's claims document, as `check --shard I/N` writes it, listed in no particular order."""
    apps, renders, skipped, live, tracking = fleet
    loaded = Fleet(applications=apps, skipped=skipped, notes={"git generators: `revision` is ignored"})
    planned = Plan([rendered.job for rendered in renders], [], [])
    paths = []
    for index in range(count, 0, -1):  # in any order
        shard = Shard(index, count)
        own = [rendered for rendered in renders if shard.holds(rendered.job.app.name)]
        path = folder / f"claims-{index}-of-{count}.json"
        text = command.claims_document(shard, loaded, planned, own, live, raw=False, tracking=tracking)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleet=fleets(), count=st.integers(1, 5))
def test_the_merge_of_every_shard_prints_what_the_single_run_prints(
    tmp_path_factory: Any, fleet: Generated, count: int
) -> None:
    _, renders, skipped, live, tracking = fleet
    single = analyse(renders, skipped, live, tracking)
    paths = _shard_documents(tmp_path_factory.mktemp("shards"), fleet, count)
    for output_format in ("text", "json", "junit"):
        merged = command.merge_claims(paths, output_format=output_format)
        assert merged.errors == []
        assert merged.text == command.formatted(single, output_format, raw=False), output_format
        assert merged.conflicts == len(single.conflicts)
        assert merged.notes == ["git generators: `revision` is ignored"]
