#!/usr/bin/env python3
"""Fleet benchmark for `chartshare check`: N Applications (default 100) rendering the example chart.

The floor a perfect scheduler could reach is the sum of plain `helm template` times for the same renders
divided by the CPU count. This script measures both in the same run (helm first, then check, alternating
over the rounds) and prints the wall time of `chartshare check`, the floor and their ratio. It also prints
the CPU seconds each side used (children's user + system time), which other load on the machine does not
inflate: their ratio is check's own overhead over helm.

    python bench/fleet.py [--apps 100] [--rounds 3] [--helm PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
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
    path: {example}/apps/dev/{service}
    plugin:
      name: chartshare-v1
      parameters:
        - name: values-files
          array: [/{example}/values/common.yaml, /{example}/values/{service}.yaml]
  destination:
    server: https://kubernetes.default.svc
    namespace: {namespace}
"""


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
    env = {**os.environ, "CHARTSHARE_HELM": helm}
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
    parser.add_argument("--helm")
    options = parser.parse_args()
    helm = find_helm(options.helm)
    fleet = apps(options.apps)
    walls: list[float] = []
    floors: list[float] = []
    cpu_check: list[float] = []
    cpu_helm: list[float] = []
    with tempfile.TemporaryDirectory(prefix="chartshare-bench-") as scratch:
        folder = Path(scratch)
        for name, service, namespace in fleet:
            text = APPLICATION.format(name=name, service=service, namespace=namespace, example=EXAMPLE)
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


if __name__ == "__main__":
    main()
