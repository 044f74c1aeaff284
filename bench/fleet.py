#!/usr/bin/env python3
"""Fleet benchmarks for `chartshare check`.

Against helm (the default): N Applications (default 100) rendering the example chart. The floor a perfect
scheduler could reach is the sum of plain `helm template` times for the same renders divided by the CPU
count. This measures both in the same run (helm first, then check, alternating over the rounds) and prints
the wall time of `chartshare check`, the floor and their ratio. It also prints the CPU seconds each side
used (children's user + system time), which other load on the machine does not inflate: their ratio is
check's own overhead over helm.

    python bench/fleet.py [--apps 100] [--rounds 3] [--helm PATH]

At scale (`--shards N`): a generated repository of Applications of mixed source types (chartshare, Helm,
kustomize, plain directories), checked in one run, then shard by shard (`--shard I/N`, one after the other)
and merged (`--merge`), and last in one run over shard 1's Applications alone (a fleet of one shard's size).
For each: wall and CPU time (the process tree's user + system) and peak RSS, both check's own process (which
holds the claims) and its largest child (a render worker, or helm). It fails unless the merged report (JSON)
and exit status equal the single run's.

    python bench/fleet.py --apps 1000 --shards 4 [--helm PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/shoong-delivery"
SERVICES = ("order", "kitchen", "delivery", "notification", "batch")
APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/platform/gitops.git
    targetRevision: main
{source}
  destination:
    server: https://kubernetes.default.svc
    namespace: {namespace}
"""
SOURCES = {
    "chartshare": """\
    path: {example}/apps/dev/{service}
    plugin:
      name: chartshare-v1
      parameters:
        - name: values-files
          array: [/{example}/values/common.yaml, /{example}/values/{service}.yaml]""",
    "helm": """\
    path: {example}/charts/shoong-app
    helm:
      releaseName: {name}
      valueFiles: [../../values/common.yaml, ../../values/{service}.yaml]""",
    "kustomize": """\
    path: kustomize/base
    kustomize:
      namePrefix: {name}-""",
    "directory": """\
    path: manifests
    directory:
      recurse: true""",
}
MIX = ("chartshare",) * 6 + ("helm",) * 2 + ("kustomize", "directory")  # per ten apps


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def find_helm(given: str | None) -> str:
    if given or os.environ.get("CHARTSHARE_HELM"):
        return given or os.environ["CHARTSHARE_HELM"]
    sys.path.insert(0, str(ROOT / "tools"))
    import fetch_helm

    return str(fetch_helm.ensure(4))


def apps(count: int) -> list[tuple[str, str, str]]:
    """(app name, service, destination namespace): one namespace per app, so the fleet has no conflict."""
    return [(f"bench-{i:03d}-{SERVICES[i % 5]}", SERVICES[i % 5], f"bench-{i:03d}") for i in range(count)]


def kubectl_folder() -> Path:
    """Where the fetched kubectl is (sha256-verified by tools/fetch_kubectl.py)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import fetch_kubectl

    return fetch_kubectl.ensure().parent


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def helm_sum(helm: str, fleet: list[tuple[str, str, str]]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of plain `helm template` for every app, one after the other, with
    chartshare's arguments."""
    chart = ROOT / EXAMPLE / "charts" / "shoong-app"
    total = 0.0
    cpu = children_cpu()
    for name, service, namespace in fleet:
        argv = [
            helm,
            "template",
            ".",
            f"--name-template={name}",
            f"--namespace={namespace}",
            f"--values={ROOT / EXAMPLE / 'values' / 'common.yaml'}",
            f"--values={ROOT / EXAMPLE / 'values' / f'{service}.yaml'}",
            "--include-crds",
        ]
        start = time.perf_counter()
        subprocess.run(argv, cwd=chart, check=True, capture_output=True)
        total += time.perf_counter() - start
    return total, children_cpu() - cpu


def check_wall(helm: str, folder: Path, count: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of `chartshare check` on the fleet, process start-up included."""
    argv = [sys.executable, "-m", "cmp", "check", str(folder), "--repo-root", str(ROOT), "--format", "json"]
    env = {**os.environ, "CHARTSHARE_HELM": helm, "CHARTSHARE_RENDER_CACHE": "off"}  # every round renders
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu = children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"check failed ({done.returncode}): {done.stderr}")
    rendered = len(json.loads(done.stdout)["applications"])
    if rendered != count:
        raise SystemExit(f"check rendered {rendered} applications, expected {count}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shards", type=int, help="the scale benchmark: a single run, N shards and their merge")
    parser.add_argument("--cache", action="store_true", help="check twice through the render cache, one app changed")
    parser.add_argument("--helm")
    options = parser.parse_args()
    helm = find_helm(options.helm)
    if options.shards:
        at_scale(helm, options.apps, options.shards)
        return
    if options.cache:
        twice(helm, options.apps, options.rounds)
        return
    fleet = apps(options.apps)
    walls: list[float] = []
    floors: list[float] = []
    cpu_check: list[float] = []
    cpu_helm: list[float] = []
    with tempfile.TemporaryDirectory(prefix="chartshare-bench-") as scratch:
        folder = Path(scratch)
        for name, service, namespace in fleet:
            source = SOURCES["chartshare"].format(name=name, service=service, example=EXAMPLE)
            text = APPLICATION.format(name=name, source=source, namespace=namespace)
            (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
        check_wall(helm, folder, options.apps)  # warm the page cache and helm's own caches
        for _ in range(options.rounds):
            helm_wall, helm_cpu = helm_sum(helm, fleet)
            floors.append(helm_wall / cpus())
            cpu_helm.append(helm_cpu)
            wall, cpu = check_wall(helm, folder, options.apps)
            walls.append(wall)
            cpu_check.append(cpu)
    version = subprocess.run([helm, "version", "--short"], capture_output=True, text=True).stdout.strip()
    wall, floor = statistics.median(walls), statistics.median(floors)
    load = os.getloadavg()[0]
    print(f"fleet: {options.apps} Applications (chartshare plugin, example chart), {cpus()} CPUs, helm {version}")
    print(f"rounds: {options.rounds}; load average at the end {load:.2f}")
    print(f"  check wall     {' '.join(f'{w:6.2f}' for w in walls)} s")
    print(f"  helm-sum/CPUs  {' '.join(f'{f:6.2f}' for f in floors)} s")
    print(f"check wall time (median):       {wall:.2f} s")
    print(f"helm-sum / CPUs floor (median): {floor:.2f} s")
    print(f"ratio wall / floor:             {wall / floor:.2f}")
    check_cpu, helm_cpu = statistics.median(cpu_check), statistics.median(cpu_helm)
    print(f"CPU seconds, check / helm-sum:  {check_cpu:.2f} / {helm_cpu:.2f} = {check_cpu / helm_cpu:.2f}")


# --- at scale: shards and their merge ------------------------------------------------------------------------

# check's own peak RSS, apart from its children's: written by check's process alone (its render workers are
# forked from it and leave through the same os._exit), when it leaves, however it leaves.
_MEASURED = """\
import os, resource, runpy, sys
report, parent, leave = sys.argv.pop(1), os.getpid(), os._exit
def record():
    if os.getpid() == parent:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        largest_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        with open(report, "w") as file:
            file.write(f"{own} {largest_child}")
def leave_recorded(status):
    record()
    leave(status)
os._exit = leave_recorded
sys.argv[0] = "chartshare"
try:
    runpy.run_module("cmp", run_name="__main__", alter_sys=True)
finally:
    record()
"""
KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [configmap.yaml, deployment.yaml]
"""
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  LOG_LEVEL: info\n"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  selector:
    matchLabels: {app: worker}
  template:
    metadata:
      labels: {app: worker}
    spec:
      containers:
        - name: worker
          image: registry.example.com/worker:1.0.0
"""


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    own_rss_mb: float
    child_rss_mb: float
    status: int
    stdout: str


def scale_repository(root: Path, count: int) -> Path:
    """A repository of `count` Applications of mixed source types, each deployed to a namespace of its own
    (the example's chart and rules, a kustomize base, a folder of manifests); returns their folder."""
    shutil.copytree(ROOT / EXAMPLE, root / EXAMPLE, ignore=shutil.ignore_patterns("argocd", "appsets", "live"))
    for folder in (root / "kustomize" / "base", root / "manifests" / "more"):
        folder.mkdir(parents=True)
    (root / "kustomize" / "base" / "kustomization.yaml").write_text(KUSTOMIZATION, encoding="utf-8")
    for folder in (root / "kustomize" / "base", root / "manifests"):
        (folder / "configmap.yaml").write_text(CONFIGMAP, encoding="utf-8")
    for folder in (root / "kustomize" / "base", root / "manifests" / "more"):
        (folder / "deployment.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    folder = root / "argocd"
    folder.mkdir()
    for number in range(count):
        service, kind = SERVICES[number % len(SERVICES)], MIX[number % len(MIX)]
        name = f"scale-{number:04d}-{service}"
        source = SOURCES[kind].format(name=name, service=service, example=EXAMPLE)
        text = APPLICATION.format(name=name, source=source, namespace=f"scale-{number:04d}")
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return folder


def measured(helm: str, root: Path, args: list[str]) -> Run:
    """`chartshare ARGS` in `root`: wall and CPU time of the process tree, own and largest-child peak RSS."""
    with tempfile.NamedTemporaryFile(prefix="chartshare-rss-") as report:
        argv = [sys.executable, "-c", _MEASURED, report.name, *args]
        env = {**os.environ, "CHARTSHARE_HELM": helm, "PYTHONPATH": str(ROOT), "CHARTSHARE_RENDER_CACHE": "off"}
        env["PATH"] = f"{kubectl_folder()}{os.pathsep}{env.get('PATH', '')}"  # kustomize sources: kubectl kustomize
        cpu = children_cpu()
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        cpu = children_cpu() - cpu
        own, child = (int(kb) / 1024 for kb in Path(report.name).read_text().split())
    if done.returncode not in (0, 1):
        raise SystemExit(f"chartshare {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return Run(wall, cpu, own, child, done.returncode, done.stdout)


def shard_alone(root: Path, shards: int) -> str:
    """A folder holding only the Applications of shard 1, for a single run over a fleet of one shard's size."""
    sys.path.insert(0, str(ROOT))
    from cmp.check.output.shards import shard_of

    folder = root / "shard-1-alone"
    folder.mkdir()
    for manifest in sorted((root / "argocd").iterdir()):
        if shard_of(manifest.stem, shards) == 1:  # each file is named after its Application
            shutil.copy(manifest, folder / manifest.name)
    return folder.name


def at_scale(helm: str, count: int, shards: int) -> None:
    with tempfile.TemporaryDirectory(prefix="chartshare-scale-") as scratch:
        root = Path(scratch)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        scale_repository(root, count)
        measured(helm, root, ["check", "argocd", "--format", "json"])  # warm the page cache and helm's caches
        single = measured(helm, root, ["check", "argocd", "--format", "json"])
        parts = []
        for index in range(1, shards + 1):
            part = measured(helm, root, ["check", "argocd", "--shard", f"{index}/{shards}"])
            (root / f"claims-{index}.json").write_text(part.stdout, encoding="utf-8")
            parts.append(part)
        documents = [f"claims-{index}.json" for index in range(1, shards + 1)]
        merged = measured(helm, root, ["check", "--merge", *documents, "--format", "json"])
        sizes = [(root / name).stat().st_size / 2**20 for name in documents]
        alone = measured(helm, root, ["check", shard_alone(root, shards), "--format", "json"])
    report = json.loads(single.stdout)
    rendered, skipped = len(report["applications"]), len({skip["app"] for skip in report["skipped"]})
    version = subprocess.run([helm, "version", "--short"], capture_output=True, text=True).stdout.strip()
    print(f"fleet: {count} Applications ({rendered} rendered, {skipped} skipped), {cpus()} CPUs, helm {version}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    print(f"{'run':<16}{'wall s':>9}{'CPU s':>9}{'own RSS MB':>12}{'child RSS MB':>14}")
    rows = [
        ("single", single),
        *((f"shard {i}/{shards}", part) for i, part in enumerate(parts, 1)),
        ("merge", merged),
        ("shard 1 alone", alone),
    ]
    for label, run in rows:
        print(f"{label:<16}{run.wall:>9.2f}{run.cpu:>9.2f}{run.own_rss_mb:>12.1f}{run.child_rss_mb:>14.1f}")
    shard_cpu = sum(part.cpu for part in parts)
    print(f"shards' CPU / single run's CPU: {shard_cpu:.2f} / {single.cpu:.2f} = {shard_cpu / single.cpu:.3f}")
    print(f"largest shard's own RSS / single run's: {max(p.own_rss_mb for p in parts) / single.own_rss_mb:.2f}")
    print(f"shard 1's own RSS / a single run over shard 1's apps alone: {parts[0].own_rss_mb / alone.own_rss_mb:.2f}")
    print(f"claims documents: {' '.join(f'{size:.1f}' for size in sizes)} MB")
    same = merged.stdout == single.stdout and merged.status == single.status
    print(f"merged report equals the single run's (JSON, exit {single.status}): {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


# --- twice through the render cache ----------------------------------------------------------------------------


def twice(helm: str, count: int, rounds: int) -> None:
    """Per round, with an empty render cache: check the fleet, change one app's values, check it again. The
    second run's wall time over the first's is what a commit touching one app costs in CI."""
    fleet = apps(count)
    firsts: list[float] = []
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="chartshare-twice-") as scratch:
        folder = Path(scratch) / "apps"
        folder.mkdir()
        for name, service, namespace in fleet:
            source = SOURCES["chartshare"].format(name=name, service=service, example=EXAMPLE)
            (folder / f"{name}.yaml").write_text(APPLICATION.format(name=name, source=source, namespace=namespace))
        changed = folder / f"{fleet[count // 2][0]}.yaml"
        original = changed.read_text()
        argv = [sys.executable, "-m", "cmp", "check", str(folder), "--repo-root", str(ROOT), "--format", "json"]
        for round_number in range(rounds + 1):  # the first round warms the page cache and is not counted
            cache = Path(scratch) / f"cache-{round_number}"
            env = {
                **os.environ,
                "CHARTSHARE_HELM": helm,
                "CHARTSHARE_CACHE": str(cache),
                "CHARTSHARE_RENDER_CACHE": "on",
            }
            changed.write_text(original)
            first, _ = timed(argv, env)
            changed.write_text(
                re.sub(r"(\n +array: .*\n)", r"\1        - {name: values, string: 'replicaCount: 3'}\n", original)
            )
            second, report = timed(argv, env)
            if round_number:
                firsts.append(first)
                seconds.append(second)
        same = timed(argv, {**env, "CHARTSHARE_RENDER_CACHE": "off"})[1] == report
    load = os.getloadavg()[0]
    print(f"fleet: {count} Applications (chartshare plugin, example chart), {cpus()} CPUs; load average {load:.2f}")
    print(f"  first run (empty cache)     {' '.join(f'{w:6.2f}' for w in firsts)} s")
    print(f"  second run (one app changed) {' '.join(f'{w:6.2f}' for w in seconds)} s")
    first, second = statistics.median(firsts), statistics.median(seconds)
    print(f"second / first (medians): {second:.2f} / {first:.2f} = {second / first:.3f}")
    print(f"second run's report equals an uncached run's: {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"check failed ({done.returncode}): {done.stderr}")
    return wall, done.stdout


if __name__ == "__main__":
    main()
