"""`check`: a fleet of Applications -> renders -> claims -> conflicts, warnings and prune risks.

Each source renders in a worker process exactly as `generate` (chartshare) or Argo CD's Helm source would
render it, and comes back as claims: (group, kind, namespace, name) with the object. `analyse` is pure: it
keys the claims by destination cluster, finds objects two apps would both track, the sync traps around them
(unprotected shared objects, Namespaces nobody emits, HPA-owned replicas, injected caBundles, renders that
change between runs), and, given live objects, the prunes that adopting the rules would cause.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cmp import goyaml, manifests
from cmp.annotations import PRUNE_SAFE, SYNC_OPTIONS, TRACKING_ID, sync_options
from cmp.check import sources as argocd
from cmp.check.applications import Application, Skip, Source
from cmp.errors import ChartShareError
from cmp.generate.chart import chart_dir, load_ownership
from cmp.generate.render import render
from cmp.helm import template
from cmp.helm.nondeterminism import uses_nondeterministic_functions
from cmp.inputs.options import options
from cmp.inputs.paths import CONFIG_FILE, confine_tree
from cmp.manifests import Resource
from cmp.model import ResourceId
from cmp.ownership.outcome import Applied
from cmp.ownership.scope import Scope, ScopeTable, crd_scopes

PLUGIN_NAME = "chartshare-v1"  # plugin.yaml: metadata.name chartshare, spec.version v1
CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
NAMESPACE = ("", "Namespace")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# helm's words for a chart whose dependencies were never built. Argo CD's init step builds them in a scratch
# copy of the repository; check reads the checkout as it is and never writes into it.
MISSING_DEPENDENCIES = "missing in charts/ directory"
MISSING_DEPENDENCIES_HINT = (
    "; check builds no dependencies (it never writes into the checkout): run `chartshare init` or "
    "`helm dependency build` in the chart folder first"
)

# Workloads whose spec.replicas an HPA takes over.
SCALED_KINDS = frozenset({("apps", "Deployment"), ("apps", "StatefulSet")})
HPA = ("autoscaling", "HorizontalPodAutoscaler")
# Where cert-manager's cainjector writes a CA bundle, per kind; `[]` walks every list item.
CA_BUNDLE_FIELDS: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): ("webhooks[].clientConfig.caBundle",),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): ("webhooks[].clientConfig.caBundle",),
    CRD: ("spec.conversion.webhook.clientConfig.caBundle",),
    ("apiregistration.k8s.io", "APIService"): ("spec.caBundle",),
}
CA_INJECT_ANNOTATIONS = (
    "cert-manager.io/inject-ca-from",
    "cert-manager.io/inject-ca-from-secret",
    "cert-manager.io/inject-apiserver-ca",
)


# --- the plan ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    """One source of one Application to render, and how."""

    app: Application
    source: Source
    renderer: str  # "chartshare" | "helm"
    app_dir: Path
    repo_root: Path
    raw: bool
    helm: str
    timeout: float


@dataclass(slots=True)
class Plan:
    jobs: list[Job] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def plan(applications: Iterable[Application], root: Path, *, raw: bool, helm: str, timeout: float) -> Plan:
    """Which sources to render with which renderer, as Argo CD would choose; the rest skipped with a reason."""
    result = Plan()
    for app in applications:
        for source in app.sources:
            try:
                choice = _choose(app, source, root)
            except ChartShareError as error:
                result.errors.append(f"{app.origin}: spec.{source.label}: {error}")
                continue
            if isinstance(choice, str):
                result.skipped.append(Skip(app.name, f"{source.label}: {choice}"))
            elif choice is not None:
                renderer, app_dir = choice
                result.jobs.append(Job(app, source, renderer, app_dir, root, raw, helm, timeout))
    return result


def _choose(app: Application, source: Source, root: Path) -> tuple[str, Path] | str | None:
    """(renderer, app dir), a reason to skip, or None for a values-only `ref` source."""
    if source.ref and source.path is None and not source.chart:
        return None
    if source.chart:
        origin = source.repo_url or "a Helm repository"
        return f"chart {source.chart} comes from {origin}, not from the local repository"
    raw_path = source.path if source.path is not None else ""
    try:
        app_dir = (root / raw_path.strip("/")).resolve()
    except (OSError, RuntimeError):  # a symlink loop: RuntimeError in Python 3.11
        raise ChartShareError(f"path {raw_path!r} is a symlink loop") from None
    if not app_dir.is_relative_to(root):
        raise ChartShareError(f"path {raw_path!r} resolves outside the repository root {root}")
    if not app_dir.is_dir():
        return f"path {raw_path} is not a folder of the local repository (repoURL {source.repo_url or '?'})"
    has_config = (app_dir / CONFIG_FILE).is_file()
    explicit = source.types[0] if source.types else None
    unsupported = [key for key in source.helm if key in argocd.UNSUPPORTED_HELM_FIELDS]
    if explicit == "helm" or (explicit is None and not has_config and (app_dir / "Chart.yaml").is_file()):
        if unsupported:
            flag = argocd.UNSUPPORTED_HELM_FIELDS[unsupported[0]]
            return f"helm.{unsupported[0]} ({flag}) is not evaluated by check"
        return "helm", app_dir
    if explicit == "plugin":
        name = str(source.plugin.get("name") or "")
        if name and name != PLUGIN_NAME:
            if name == "chartshare":
                return f"plugin name 'chartshare' matches no sidecar: Applications must name it {PLUGIN_NAME}"
            return f"plugin {name} is not chartshare"
        if not has_config:
            return (
                f"plugin {name or '{}'} but {raw_path or '.'} holds no {CONFIG_FILE}, which chartshare "
                "discovers apps by: Argo CD would not hand it to chartshare"
            )
        return "chartshare", app_dir
    if explicit is not None:
        return f"{explicit} source: check renders only Helm and chartshare sources"
    if has_config:  # Argo CD asks the sidecars' discover rules before detecting Helm or Kustomize
        return "chartshare", app_dir
    if any((app_dir / name).is_file() for name in KUSTOMIZATION_FILES):
        return "kustomize source: check renders only Helm and chartshare sources"
    return "directory source (plain manifests): check renders only Helm and chartshare sources"


# --- rendering (runs in worker processes) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claim:
    """One object an app renders: its identity on the cluster, and the object itself."""

    group: str
    kind: str
    namespace: str  # "" for cluster-scoped objects; the destination namespace for namespaced ones without one
    name: str
    obj: dict[str, Any]
    reason: str = ""  # for a stripped copy: why this app strips it

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.group, self.kind, self.namespace, self.name)

    @property
    def id(self) -> ResourceId:
        return ResourceId(*self.key)


@dataclass(frozen=True, slots=True)
class Rendered:
    """What one job produced: emitted and stripped claims, fields that change between runs, or an error."""

    job: Job
    emitted: tuple[Claim, ...] = ()
    stripped: tuple[Claim, ...] = ()
    unstable: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (kind, name, fields that differ)
    error: str | None = None


def render_job(job: Job) -> Rendered:
    """Render one job; a ChartShareError becomes the job's error message, naming the app."""
    try:
        emitted, stripped, chart, values = _render_once(job)
        unstable: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
        if uses_nondeterministic_functions(chart, values):
            again, _, _, _ = _render_once(job)
            unstable = tuple(differences(emitted, again))
        return Rendered(job, tuple(emitted), tuple(stripped), unstable)
    except ChartShareError as error:
        hint = MISSING_DEPENDENCIES_HINT if MISSING_DEPENDENCIES in str(error) else ""
        return Rendered(job, error=f"{job.app.origin}: spec.{job.source.label}: {error}{hint}")


def _render_once(job: Job) -> tuple[list[Claim], list[Claim], Path, tuple[Path, ...]]:
    """(emitted, stripped, chart folder, values files) of one render."""
    app = job.app
    stripped: list[Applied] = []
    if job.renderer == "chartshare":
        env = argocd.plugin_env(app, job.source)
        given = {"repo-root": str(job.repo_root), "helm": job.helm, "timeout": f"{job.timeout:g}"}
        config = options(job.app_dir, given).resolve(env)
        ownership = load_ownership(config)
        chart = chart_dir(config, ownership)
        kinds = (ownership.cluster_scoped_kinds, ownership.namespaced_kinds) if ownership else ((), ())
        values = config.template.values_files
        if job.raw:  # the chart chartshare.yaml names, rendered without its rules
            stream = template.render(config.helm, template.HelmInvocation(chart, config.template), config.timeout)
            emitted = manifests.parse(stream)
        else:
            outcome = render(config)
            emitted, stripped = outcome.resources, outcome.stripped
    else:
        confine_tree(job.app_dir, job.repo_root, "chart")  # as Argo CD's unpacking refuses links out
        invocation = argocd.helm_invocation(app, job.source, job.app_dir, job.repo_root)
        emitted = manifests.parse(template.render(job.helm, invocation, job.timeout))
        chart, kinds, values = job.app_dir, ((), ()), invocation.template.values_files
    everything = [*emitted, *(applied.resource for applied in stripped)]
    scopes = ScopeTable.build(crd_scopes(r.obj for r in everything), *kinds)
    emitted_claims = [claim for r in emitted if (claim := _claim(r, app.namespace, scopes)) is not None]
    stripped_claims = [
        replace(claim, reason=f"{applied.decision.origin}: {applied.decision.reason}")
        for applied in stripped
        if (claim := _claim(applied.resource, app.namespace, scopes)) is not None
    ]
    return emitted_claims, stripped_claims, chart, values


def _claim(resource: Resource, destination: str, scopes: ScopeTable) -> Claim | None:
    if not resource.name:  # generateName: a new object on every sync, never shared
        return None
    cluster_scoped = scopes.of(resource.group, resource.kind) is Scope.CLUSTER
    namespace = "" if cluster_scoped else (resource.namespace or destination)
    return Claim(resource.group, resource.kind, namespace, resource.name, resource.obj)


def differences(first: Sequence[Claim], second: Sequence[Claim]) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """Objects of the first render whose fields differ in the second, naming up to five fields each."""
    again = {claim.key: claim for claim in second}
    for claim in first:
        other = again.get(claim.key)
        if other is None:
            yield claim.kind, claim.name, ("metadata.name (the object is not rendered again under this name)",)
            continue
        fields = list(_diff(claim.obj, other.obj, ""))
        if fields:
            yield claim.kind, claim.name, tuple(fields[:5])


def _diff(left: Any, right: Any, path: str) -> Iterator[str]:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in [*left, *(key for key in right if key not in left)]:
            yield from _diff(left.get(key), right.get(key), f"{path}.{key}" if path else str(key))
    elif isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for position, (a, b) in enumerate(zip(left, right, strict=True)):
            yield from _diff(a, b, f"{path}[{position}]")
    elif left != right:
        yield path or "(whole object)"


def run(jobs: Sequence[Job], workers: int, progress: Callable[[int, int], None] | None = None) -> list[Rendered]:
    """Render every job, in parallel processes when there is more than one; results in job order."""
    if workers <= 1 or len(jobs) <= 1:
        results = []
        for done, job in enumerate(jobs, 1):
            results.append(render_job(job))
            if progress:
                progress(done, len(jobs))
        return results
    ordered: list[Rendered | None] = [None] * len(jobs)
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), initializer=_leave_interrupts_to_the_parent)
    try:
        futures = {pool.submit(render_job, job): position for position, job in enumerate(jobs)}
        for done, future in enumerate(as_completed(futures), 1):
            ordered[futures[future]] = future.result()
            if progress:
                progress(done, len(jobs))
    finally:  # on Ctrl-C: drop the queued renders, let the running ones (bounded by helm's deadline) end
        pool.shutdown(wait=True, cancel_futures=True)
    return [result for result in ordered if result is not None]


def _leave_interrupts_to_the_parent() -> None:
    """Workers ignore Ctrl-C: the parent stops the pool and reports once, with no worker tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def default_workers() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has affinity
        return os.cpu_count() or 1


# --- analysis (pure) ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppRow:
    name: str
    cluster: str
    namespace: str
    renderer: str
    resources: int


@dataclass(frozen=True, slots=True)
class Conflict:
    cluster: str
    group: str
    kind: str
    namespace: str
    name: str
    apps: tuple[str, ...]

    @property
    def id(self) -> ResourceId:
        return ResourceId(self.group, self.kind, self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class Finding:
    """A warning: something that will not fight over tracking but will still hurt, and the fix."""

    app: str
    kind: str
    name: str
    message: str


@dataclass(frozen=True, slots=True)
class PruneRisk:
    cluster: str
    group: str
    kind: str
    namespace: str
    name: str
    app: str
    fix: str


@dataclass(frozen=True, slots=True)
class Report:
    applications: tuple[AppRow, ...]
    conflicts: tuple[Conflict, ...]
    warnings: tuple[Finding, ...]
    skipped: tuple[Skip, ...]
    prune_risks: tuple[PruneRisk, ...] | None  # None: no --live given


@dataclass(slots=True)
class _AppResult:
    app: Application
    renderers: list[str] = field(default_factory=list)
    emitted: dict[tuple[str, str, str, str], Claim] = field(default_factory=dict)
    stripped: dict[tuple[str, str, str, str], Claim] = field(default_factory=dict)
    unstable: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    complete: bool = True  # every source rendered: only then can "no longer emits" be trusted


Key = tuple[str, str, str, str, str]  # cluster, group, kind, namespace, name


def analyse(
    renders: Sequence[Rendered], skipped: Sequence[Skip], live: Sequence[Mapping[str, Any]] | None = None
) -> Report:
    """Claims of every app -> the report."""
    results: dict[str, _AppResult] = {}
    for rendered in renders:
        result = results.setdefault(rendered.job.app.name, _AppResult(rendered.job.app))
        result.renderers.append("helm" if rendered.job.raw else rendered.job.renderer)
        for claim in rendered.emitted:
            result.emitted.setdefault(claim.key, claim)
        for claim in rendered.stripped:
            result.stripped.setdefault(claim.key, claim)
        result.unstable += rendered.unstable
    for skip in skipped:
        if skip.app in results:
            results[skip.app].complete = False
    emitters = _by_key(results.values(), emitted=True)
    renderers = _by_key(results.values(), emitted=False)
    warnings = [
        *_shared_warnings(renderers, emitters, results),
        *_unstable_warnings(results.values()),
        *_replica_warnings(results.values()),
        *_ca_bundle_warnings(results.values()),
    ]
    risks: list[PruneRisk] | None = None
    if live is not None:
        risks, handovers = _prune_risks(live, results, emitters)
        warnings += handovers
    rows = sorted(
        (
            AppRow(
                r.app.name,
                r.app.cluster,
                r.app.namespace,
                "chartshare" if "chartshare" in r.renderers else "helm",
                len(r.emitted),
            )
            for r in results.values()
        ),
        key=lambda row: (row.name, row.cluster),
    )
    return Report(
        applications=tuple(rows),
        conflicts=tuple(_conflicts(emitters)),
        warnings=tuple(sorted(set(warnings), key=lambda w: (w.app, w.kind, w.name, w.message))),
        skipped=tuple(sorted(set(skipped), key=lambda s: (s.app, s.reason))),
        prune_risks=None if risks is None else tuple(sorted(risks, key=lambda r: (r.cluster, r.group, r.kind, r.name))),
    )


def _by_key(results: Iterable[_AppResult], *, emitted: bool) -> dict[Key, dict[str, Claim]]:
    """Per object on a cluster: the apps that emit it (or, with emitted=False, that render it at all)."""
    claims: dict[Key, dict[str, Claim]] = {}
    for result in results:
        owned = result.emitted if emitted else {**result.stripped, **result.emitted}
        for key, claim in owned.items():
            claims.setdefault((result.app.cluster, *key), {})[result.app.name] = claim
    return claims


def _conflicts(emitters: Mapping[Key, Mapping[str, Claim]]) -> Iterator[Conflict]:
    for key in sorted(emitters):
        claims = emitters[key]
        if len(claims) < 2:
            continue
        if key[1:3] == CRD and len({_canonical(claim.obj) for claim in claims.values()}) == 1:
            continue  # Argo CD does not track CRDs: identical copies do not fight
        yield Conflict(*key, apps=tuple(sorted(claims)))


def _field(obj: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    """A nested mapping of an object, or an empty one when a chart wrote something else there."""
    found: Any = obj
    for key in keys:
        found = found.get(key) if isinstance(found, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _canonical(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, sort_keys=True, default=str)


def _prune_safe(obj: Mapping[str, Any]) -> bool:
    return any(option in PRUNE_SAFE for option in sync_options(_field(obj, "metadata", "annotations")))


def _shared_warnings(
    renderers: Mapping[Key, Mapping[str, Claim]],
    emitters: Mapping[Key, Mapping[str, Claim]],
    results: Mapping[str, _AppResult],
) -> Iterator[Finding]:
    """Objects several apps render: emitted by one owner without Prune=false, or emitted by nobody."""
    for key, claims in sorted(renderers.items()):
        kept = emitters.get(key, {})
        resource = ResourceId(*key[1:])
        if len(kept) == 1 and len(claims) >= 2 and key[1:3] != CRD:
            ((owner, claim),) = kept.items()
            if not _prune_safe(claim.obj):
                yield Finding(
                    owner,
                    key[2],
                    key[4],
                    f"{resource} is rendered by {', '.join(sorted(claims))} and emitted only by {owner}, without "
                    f"Prune=false: if ownership ever moves, {owner}'s next sync with prune deletes it. Protect it: "
                    f"`protect: true` on the chartshare.yaml rule that gives it to {owner}",
                )
        elif not kept:
            yield _nobody_emits(key, claims, results)


def _nobody_emits(key: Key, claims: Mapping[str, Claim], results: Mapping[str, _AppResult]) -> Finding:
    resource = ResourceId(*key[1:])
    first = sorted(claims)[0]
    reason = claims[first].reason
    if key[1:3] != NAMESPACE:
        return Finding(
            first,
            key[2],
            key[4],
            f"{resource} is rendered by {', '.join(sorted(claims))} and emitted by none of them ({first}: {reason}), "
            "so no app of this fleet creates it: check the owner the rule names",
        )
    name = key[4]
    # managedNamespaceMetadata applies to the destination namespace: suggest it on an app deployed there.
    hosts = sorted(app for app in claims if results[app].app.namespace == name) or sorted(claims)
    block: dict[str, Any] = {}
    for field_name in ("labels", "annotations"):
        given = _field(claims[hosts[0]].obj, "metadata", field_name)
        values = {k: v for k, v in given.items() if not str(k).startswith("argocd.argoproj.io/")}
        if values:
            block[field_name] = values
    policy: dict[str, Any] = {"managedNamespaceMetadata": block} if block else {}
    policy["syncOptions"] = ["CreateNamespace=true"]
    return Finding(
        hosts[0],
        key[2],
        name,
        f"Namespace {name} is rendered by {', '.join(sorted(claims))} and emitted by none of them ({first}: "
        f"{claims[first].reason}), so Argo CD does not create it"
        f"{' or set its labels and annotations' if block else ''}. Give it an owner that exists, or let exactly "
        f"one Application deployed to it manage it (several would overwrite each other's metadata); in "
        f"{hosts[0]}'s spec:\n" + goyaml.dump({"syncPolicy": policy}).rstrip("\n"),
    )


def _unstable_warnings(results: Iterable[_AppResult]) -> Iterator[Finding]:
    for result in results:
        for kind, name, fields in result.unstable:
            yield Finding(
                result.app.name,
                kind,
                name,
                f"renders differently on every run ({', '.join(fields)}): Argo CD will show it OutOfSync after "
                "each refresh. Generate the value outside the chart (an existing Secret, a fixed value) or list "
                "these fields under the Application's ignoreDifferences",
            )


def _replica_warnings(results: Iterable[_AppResult]) -> Iterator[Finding]:
    """A Deployment/StatefulSet with spec.replicas that an HPA of the same app scales."""
    for result in results:
        for claim in result.emitted.values():
            if (claim.group, claim.kind) != HPA:
                continue
            target = _field(claim.obj, "spec", "scaleTargetRef")
            group = str(target.get("apiVersion") or "").rpartition("/")[0]
            workload = result.emitted.get((group, str(target.get("kind")), claim.namespace, str(target.get("name"))))
            if workload is None or (workload.group, workload.kind) not in SCALED_KINDS:
                continue
            if _field(workload.obj, "spec").get("replicas") is None:
                continue
            snippet = {
                "spec": {
                    "ignoreDifferences": [
                        {
                            "group": workload.group,
                            "kind": workload.kind,
                            "name": workload.name,
                            "namespace": workload.namespace,
                            "jsonPointers": ["/spec/replicas"],
                        }
                    ],
                    "syncPolicy": {"syncOptions": ["RespectIgnoreDifferences=true"]},
                }
            }
            yield Finding(
                result.app.name,
                workload.kind,
                workload.name,
                f"sets spec.replicas while HorizontalPodAutoscaler {claim.name} scales it: every sync resets "
                "the replica count and the app flaps OutOfSync. Leave replicas out of the template when "
                "autoscaling is on, or add to the Application:\n" + goyaml.dump(snippet).rstrip("\n"),
            )


def _ca_bundle_warnings(results: Iterable[_AppResult]) -> Iterator[Finding]:
    """`caBundle: ""` where cert-manager's cainjector will write the real bundle."""
    for result in results:
        for claim in result.emitted.values():
            paths = CA_BUNDLE_FIELDS.get((claim.group, claim.kind))
            annotations = _field(claim.obj, "metadata", "annotations")
            if not paths or not any(annotation in annotations for annotation in CA_INJECT_ANNOTATIONS):
                continue
            empty = [found for path in paths for found in _empty_fields(claim.obj, path)]
            if not empty:
                continue
            jq = [f".{path.replace('[]', '[]?')}" for path in paths]
            snippet = {
                "spec": {
                    "ignoreDifferences": [
                        {"group": claim.group, "kind": claim.kind, "name": claim.name, "jqPathExpressions": jq}
                    ]
                }
            }
            yield Finding(
                result.app.name,
                claim.kind,
                claim.name,
                f'sets caBundle: "" ({", ".join(empty)}) and asks cert-manager to inject the CA: after each '
                "injection Argo CD sees a difference and the next sync blanks the bundle. Remove the empty "
                "caBundle from the template, or add to the Application:\n" + goyaml.dump(snippet).rstrip("\n"),
            )


def _empty_fields(obj: Any, path: str, prefix: str = "") -> Iterator[str]:
    head, _, rest = path.partition(".")
    listed = head.endswith("[]")
    name = head.removesuffix("[]")
    value = obj.get(name) if isinstance(obj, Mapping) else None
    where = f"{prefix}.{name}" if prefix else name
    if listed:
        for position, item in enumerate(value if isinstance(value, list) else []):
            yield from _empty_fields(item, rest, f"{where}[{position}]")
    elif rest:
        yield from _empty_fields(value, rest, where)
    elif value == "":
        yield where


def _prune_risks(
    live: Sequence[Mapping[str, Any]], results: Mapping[str, _AppResult], emitters: Mapping[Key, Mapping[str, Claim]]
) -> tuple[list[PruneRisk], list[Finding]]:
    """Live objects tracked by an app that will no longer emit them: deleted on its next sync with prune."""
    risks: list[PruneRisk] = []
    handovers: list[Finding] = []
    for obj in live:
        tracked = tracking(obj)
        if tracked is None:
            continue
        tracker, resource = tracked
        result = results.get(tracker)
        new_owners: list[str] = []
        if result is not None:
            new_owners = sorted(_emitting(emitters, result.app.cluster, resource))
        else:  # tracked by an app outside this fleet: any fleet app emitting it takes it over
            clusters = {r.app.cluster for r in results.values()}
            new_owners = sorted({app for cluster in clusters for app in _emitting(emitters, cluster, resource)})
        if tracker in new_owners:
            continue
        protected = _prune_safe(obj)
        if result is not None and result.complete and not protected:
            risks.append(
                PruneRisk(
                    result.app.cluster,
                    resource.group,
                    resource.kind,
                    resource.namespace,
                    resource.name,
                    tracker,
                    annotate_command(obj, resource),
                )
            )
        for owner in new_owners:
            if result is None:
                story = (
                    f"is tracked by {tracker}, an app outside this fleet, and {owner} emits it too: the two will "
                    f"fight over it unless {tracker} stops emitting it"
                )
            elif protected:
                story = (
                    f"is tracked by {tracker}, which no longer emits it; it carries Prune=false, so nothing is "
                    f"deleted: sync {owner} to take it over"
                )
            else:
                story = (
                    f"is tracked by {tracker}, which no longer emits it: annotate it first (see PRUNE RISKS), "
                    f"then sync {owner} to take it over"
                )
            handovers.append(Finding(owner, resource.kind, resource.name, f"the live {resource} {story}"))
    return risks, handovers


def _emitting(emitters: Mapping[Key, Mapping[str, Claim]], cluster: str, resource: ResourceId) -> Iterator[str]:
    """Apps emitting the live object; a live object without a namespace matches whatever namespace a claim
    was given (a cluster-scoped kind check could not place is still the same object)."""
    for key, claims in emitters.items():
        same = key[0] == cluster and key[1:3] == (resource.group, resource.kind) and key[4] == resource.name
        if same and (not resource.namespace or key[3] == resource.namespace):
            yield from claims


def tracking(obj: Mapping[str, Any]) -> tuple[str, ResourceId] | None:
    """(app, object) from a live object's tracking-id, when the id really is about this object (Argo CD
    ignores an id copied onto another object)."""
    metadata = _field(obj, "metadata")
    value = _field(obj, "metadata", "annotations").get(TRACKING_ID)
    if not isinstance(value, str):
        return None
    parts = value.split(":")
    if len(parts) != 3 or parts[1].count("/") != 1 or parts[2].count("/") != 1:
        return None
    app, (group, kind), (namespace, name) = parts[0], parts[1].split("/"), parts[2].split("/")
    object_group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    object_namespace = str(metadata.get("namespace") or "")
    if (group, kind, name) != (object_group, obj.get("kind"), metadata.get("name")):
        return None
    if object_namespace and namespace != object_namespace:
        return None
    return app, ResourceId(group, kind, object_namespace, name)


def annotate_command(obj: Mapping[str, Any], resource: ResourceId) -> str:
    """`kubectl annotate` adding Prune=false to the live object's sync-options, keeping the ones it has."""
    options = [
        option for option in sync_options(_field(obj, "metadata", "annotations")) if not option.startswith("Prune=")
    ] + ["Prune=false"]
    kind = resource.kind.lower() + (f".{resource.group}" if resource.group else "")
    words = ["kubectl", "annotate"]
    if resource.namespace:
        words += ["-n", resource.namespace]
    words += [f"{kind}/{resource.name}", f"{SYNC_OPTIONS}={','.join(options)}", "--overwrite"]
    return " ".join(shlex.quote(word) for word in words)
