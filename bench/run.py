#!/usr/bin/env python3
"""chartshare generate against raw `helm template`, measured interleaved in one run.

    python bench/run.py [--rounds 15] [--helm-major 4] [--json bench/results/latest.json]
                        [--charts ../shared/realcharts]

Cases (each paired with raw helm rendering the same release with the same arguments):
  owner        the ~4 MB, ~1,700-document chart; the top-level owner keeps everything, protects the 40 CRDs
  other        the same chart for another app: strips the CRDs, renames ClusterRoles and bindings, patches
               every Deployment (its spec, and a label under /metadata/labels)
  other-strip  the same app without rename and patch: strips CRDs, ClusterRoles and bindings
  operator     an operator bundle of ~4 MB: ten CRDs with brace-, bracket- and quote-heavy descriptions from
               a subchart's crds/ folder, 120 ConfigMaps of JSON dashboards in block scalars; its owner
  operator-other
               the same chart for another app: strips the CRDs, labels every ConfigMap
  small        examples/shoong-delivery for its Namespace owner: the fixed overhead
  <chart> owner / <chart> other
               with --charts, every chart of that folder's index.yaml (real public charts, untarred into
               the work folder): an app that owns everything (`owner: app-a`, protecting its CRDs) and
               one that owns nothing (it strips every cluster-scoped object)

Every chartshare case runs three times: cold (its cache folder emptied before every run, so each run renders
and scans every document, as the first refresh of a new chart does), `miss` (the cache folder kept, and a
values file of comments only whose bytes change before every run: the render cache misses, the documents
are those seen before, as when a value no template reads changes: helm prints what it printed before, so
what the rules made of it is read back) and `cached` (the entry stored by the
checking run, read back without starting helm). Each has a cache folder of its own under the work folder;
a table after the main one puts each case's three ratios side by side.
chartshare runs as the image runs it, with CHARTSHARE_WARM=on (a warm process, started by the first run,
serves the others; its socket lives under the work folder and it is stopped at the end); `--no-warm` runs
every command in its own process instead. chartshare's own RSS is always measured in a process of its own.

Every round runs every command once, in a shuffled order, after one warm-up round; the table gives medians.
A served render answers before it writes its cache entries; after each warm run the bench waits, untimed,
until the warm process's child is gone, so those writes do not fall into the next command's time.
Wall time runs from spawn to exit. Peak RSS comes from wait4() for the whole process tree (chartshare and
the helm it runs; the larger of the two), and, from one extra untimed run per case, from chartshare's own
getrusage(RUSAGE_SELF). chartshare is installed the way the image installs it (a regular, non-editable
install in a venv of its own under the work folder), so Python's start-up is what Argo CD pays.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
EXAMPLE = ROOT / "examples" / "shoong-delivery"
sys.path.insert(0, str(ROOT / "tools"))

import fetch_helm  # noqa: E402

# Runs a console script with runpy and writes its own peak RSS (KB) to a file when it exits, also when it
# leaves through os._exit (as a successful generate does).
_SELF_RSS = (
    "import os, resource, runpy, sys\n"
    "report = sys.argv.pop(1)\n"
    "sys.argv.pop(0)\n"
    "def write():\n"
    "    with open(report, 'w') as file:\n"
    "        file.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    "leave = os._exit\n"
    "def exit_now(code):\n"
    "    write()\n"
    "    leave(code)\n"
    "os._exit = exit_now\n"
    "try:\n"
    "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
    "finally:\n"
    "    write()\n"
)


@dataclass
class Command:
    """One measured command line and its samples."""

    name: str
    argv: list[str]
    cwd: Path
    baseline: str | None = None  # the raw-helm command this one is compared with
    skipped: str = ""
    wall: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    self_rss_kb: int = 0
    output_bytes: int = 0
    documents: int = 0
    case: str = ""  # for a real chart's app: owner or other
    cache: Path | None = None  # chartshare's $CHARTSHARE_CACHE
    cold: bool = False  # the cache is emptied before every run
    miss: Path | None = None  # a values file rewritten before every run (comments only: the same documents)
    runs: int = 0

    def environment(self, warm: Path | None = None) -> dict[str, str] | None:
        """chartshare's environment: its cache folder, and a warm process's runtime folder when `warm`."""
        if self.cache is None:
            return None
        skipped = ("CHARTSHARE_RENDER_CACHE", "CHARTSHARE_CACHE_MB", "CHARTSHARE_WARM", "CHARTSHARE_RUNTIME_DIR")
        env = {k: v for k, v in os.environ.items() if k not in skipped}
        env["CHARTSHARE_CACHE"] = str(self.cache)
        if warm is not None:
            env.update(CHARTSHARE_WARM="on", CHARTSHARE_RUNTIME_DIR=str(warm))
        return env


def _variants(
    name: str, argv: list[str], cwd: Path, baseline: str, work: Path, root: Path, case: str = ""
) -> list[Command]:
    """The chartshare command three times: cold (an empty cache folder before every run), miss (the cache
    folder kept, a values file whose bytes change before every run: the chart seen before, its render
    not) and cached (answered by the render cache). `root` is the command's repository root (--repo-root):
    the miss's values file goes under the work folder when that lies in it, else under `root`."""
    slug = name.removeprefix("chartshare ").replace(" ", "-")
    folder = work / "caches" / slug
    variants = [Command(name, argv, cwd, baseline=baseline, case=case, cache=folder / "cold", cold=True)]
    values = (work if (work / "miss").is_relative_to(root) else root) / "miss" / f"{slug}.yaml"
    if values.is_relative_to(root):
        miss = [*argv, "-f", "/" + str(values.relative_to(root))]
        variants.append(
            Command(f"{name} miss", miss, cwd, baseline=baseline, case=case and f"{case} miss", cache=folder / "seen")
        )
        variants[-1].miss = values
    variants.append(
        Command(f"{name} cached", argv, cwd, baseline=baseline, case=case and f"{case} cached", cache=folder / "kept")
    )
    return variants


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--helm-major", type=int, choices=(3, 4), default=4)
    parser.add_argument("--work", type=Path, default=BENCH / ".work")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "latest.json")
    parser.add_argument("--chartshare", help="an installed chartshare to measure instead of a fresh install")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--charts", type=Path, help="a folder of packaged charts with an index.yaml (realcharts)")
    parser.add_argument("--no-warm", action="store_true", help="every chartshare run in a process of its own")
    args = parser.parse_args()

    helm = str(fetch_helm.ensure(args.helm_major))
    work = args.work.resolve()
    print(f"writing the chart under {work} ...", file=sys.stderr)
    if (work / "chart").exists():
        shutil.rmtree(work / "chart")
    # a child process, so this one stays small: a child's peak RSS starts at its parent's size
    subprocess.run([sys.executable, str(BENCH / "chart.py"), str(work)], check=True, stdout=subprocess.DEVNULL)
    chartshare = str(Path(args.chartshare).resolve()) if args.chartshare else _install(work)
    shutil.rmtree(work / "caches", ignore_errors=True)
    warm = None if args.no_warm else work / "run"

    commands = _commands(helm, chartshare, work)
    if args.charts:
        commands += _chart_commands(helm, chartshare, work / "realcharts", args.charts.resolve())
    by_name = {command.name: command for command in commands}
    out = work / "stdout"
    for command in commands:  # check each once; keep what it printed for the table
        code, _, _ = _run(command, out, work / "stderr", warm)
        if code != 0:
            message = (work / "stderr").read_text().strip().splitlines()
            reason = message[-1] if message else f"exit {code}"
            raise SystemExit(f"{command.name} failed: {reason}")
        if command.cache is not None and not command.cold and command.miss is None:
            _run(command, out, work / "stderr", warm)
            if "(cached)" not in (work / "stderr").read_text():  # a chart that renders differently each time
                command.skipped = "the render cache keeps no entry for this app (a nondeterministic chart)"
                print(f"SKIPPED {command.name}: {command.skipped}", file=sys.stderr)
                continue
        command.output_bytes = out.stat().st_size
        command.documents = sum(1 for line in out.open() if line.startswith("kind: "))
    live = [command for command in commands if not command.skipped]
    rng = random.Random(args.seed)
    for round_ in range(args.rounds + 1):
        order = live[:]
        rng.shuffle(order)
        for command in order:
            _, wall, rss = _run(command, out, work / "stderr", warm)
            if round_:  # round 0 warms the page cache and pyc files
                command.wall.append(wall)
                command.rss_kb.append(rss)
        print(f"round {round_}/{args.rounds}", file=sys.stderr)
    for command in live:
        if command.baseline is not None:
            command.self_rss_kb = _self_rss(command, out, work / "stderr")

    if warm is not None:
        _stop_warm(warm)
    result = _report(commands, by_name, helm, args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.json}", file=sys.stderr)
    return 0


def _stop_warm(runtime: Path) -> None:
    """Stop the warm processes serving from the bench's runtime folder."""
    for pid in _warm_processes(runtime):
        with contextlib.suppress(OSError):
            os.kill(pid, 15)


def _install(work: Path) -> str:
    """A clean venv with chartshare installed from this tree, as the image has it (no editable finder, its
    own launcher)."""
    venv = work / "venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    print("installing chartshare into the bench venv ...", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet", str(ROOT)],
        check=True,
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--force-reinstall",
            "--no-deps",
            str(ROOT),
        ],
        check=True,
    )
    program = venv / "bin" / "chartshare"
    subprocess.run([str(venv / "bin" / "python"), "-I", "-m", "cmp.warm.launcher", str(program)], check=True)
    return str(program)


def _commands(helm: str, chartshare: str, work: Path) -> list[Command]:
    chart = work / "chart"
    commands: list[Command] = []
    for case, app_dir, app in (
        ("owner", "owner", "bench-owner"),
        ("other", "other", "bench-other"),
        ("other-strip", "other-strip", "bench-other"),
    ):
        raw = f"helm ({app})"
        if not any(c.name == raw for c in commands):
            commands.append(
                Command(
                    raw, [helm, "template", ".", f"--name-template={app}", "--namespace=bench", "--include-crds"], chart
                )
            )
        generate = [chartshare, "generate", str(work / "apps" / app_dir), "--app", app, "-n", "bench"]
        commands += _variants(
            f"chartshare {case}", [*generate, "--repo-root", str(work), "--helm", helm], work, raw, work, work
        )
    commands += _operator_commands(helm, chartshare, work)
    app = "dev-shoong-notification"
    values = [EXAMPLE / "values" / "common.yaml", EXAMPLE / "values" / "notification.yaml"]
    commands.append(
        Command(
            "helm (small)",
            [
                helm,
                "template",
                ".",
                f"--name-template={app}",
                "--namespace=shoong",
                *[f"--values={path}" for path in values],
                "--include-crds",
            ],
            EXAMPLE / "charts" / "shoong-app",
        )
    )
    generate = [chartshare, "generate", str(EXAMPLE / "apps" / "dev" / "notification"), "--app", app, "-n", "shoong"]
    generate += [arg for path in values for arg in ("-f", "/" + str(path.relative_to(ROOT)))]
    commands += _variants(
        "chartshare small", [*generate, "--repo-root", str(ROOT), "--helm", helm], ROOT, "helm (small)", work, ROOT
    )
    return commands


def _operator_commands(helm: str, chartshare: str, work: Path) -> list[Command]:
    """The operator bundle (chart.py's write_operator): its CRDs from a subchart's crds/ folder, next to
    ConfigMaps of JSON dashboards; the owner keeps everything, the other app strips the CRDs and labels
    every ConfigMap."""
    commands: list[Command] = []
    for case, app, folder in (
        ("operator", "bench-owner", "operator-owner"),
        ("operator-other", "bench-other", "operator-other"),
    ):
        raw = f"helm (operator, {app})"
        argv = [helm, "template", ".", f"--name-template={app}", "--namespace=bench", "--include-crds"]
        commands.append(Command(raw, argv, work / "operator"))
        generate = [chartshare, "generate", str(work / "apps" / folder), "--app", app, "-n", "bench"]
        generate += ["--repo-root", str(work), "--helm", helm]
        commands += _variants(f"chartshare {case}", generate, work, raw, work, work)
    return commands


# The non-owner accepts the owner's bindings (it would otherwise refuse to strip those of its own account).
_CHART_APPS = {
    "owner": ("app-a", "owner: app-a\n"),
    "other": (
        "app-b",
        "owner: app-a\nrules:\n  - match: {kind: ClusterRoleBinding}\n    owner: app-a\n    others: strip\n",
    ),
    # the owner's app with kustomize's post-render fields: labels and annotations touch every document
    "patched": (
        "app-a",
        "owner: app-a\nlabels: [{pairs: {team: platform}, includeTemplates: true}]\n"
        "commonAnnotations: {owner: platform}\npatches:\n  - target: {kind: Deployment}\n"
        '    patch: \'[{"op": "add", "path": "/spec/revisionHistoryLimit", "value": 3}]\'\n',
    ),
}


def _chart_commands(helm: str, chartshare: str, work: Path, folder: Path) -> list[Command]:
    """Raw helm and the two apps for every chart of a realcharts folder, untarred afresh under `work`."""
    import tarfile

    import yaml  # the bench's own environment has it (chartshare's dev install)

    if work.exists():
        shutil.rmtree(work)
    (work / "charts").mkdir(parents=True)
    (work / "values").mkdir()
    commands: list[Command] = []
    for chart in yaml.safe_load((folder / "index.yaml").read_text())["charts"]:
        name, release, namespace, values = chart["name"], chart["release"], chart["namespace"], chart["values"]
        with tarfile.open(folder / chart["file"]) as archive:
            archive.extractall(work / "charts", filter="data")
        helm_values, app_values = [], []
        if values:
            shutil.copy(folder / values, work / "values" / values)
            helm_values, app_values = [f"--values={work / 'values' / values}"], ["-f", f"/values/{values}"]
        raw = f"helm ({name})"
        argv = [helm, "template", ".", f"--name-template={release}", f"--namespace={namespace}", *helm_values]
        commands.append(Command(raw, [*argv, "--include-crds"], work / "charts" / name))
        for case, (app, rules) in _CHART_APPS.items():
            app_dir = work / "apps" / f"{name}-{case}"
            app_dir.mkdir(parents=True)
            header = f"apiVersion: chartshare/v1\nkind: ChartShare\nchart: ../../charts/{name}\nallowEmpty: true\n"
            (app_dir / "chartshare.yaml").write_text(header + rules)
            generate = [chartshare, "generate", str(app_dir), "--app", app, "-n", namespace]
            generate += ["--release-name", release, *app_values, "--repo-root", str(work), "--helm", helm]
            commands += _variants(f"chartshare {name} {case}", generate, work, raw, work.parent, work, case)
    return commands


def _prepare(command: Command) -> None:
    """Before a run: a cold command's cache folder emptied, a miss's values file given new bytes."""
    if command.cold and command.cache is not None:
        shutil.rmtree(command.cache, ignore_errors=True)
    if command.miss is not None:
        command.runs += 1
        command.miss.parent.mkdir(parents=True, exist_ok=True)
        command.miss.write_text(f"# bench run {command.runs}: the render cache misses, the documents are the same\n")


def _run(command: Command, out: Path, err: Path, warm: Path | None) -> tuple[int, float, int]:
    """Exit status, wall seconds and peak RSS (KB, the process and its children) of one run."""
    _prepare(command)
    with out.open("wb") as stdout, err.open("wb") as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(
            command.argv,
            cwd=command.cwd,
            env=command.environment(warm),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if warm is not None:
        _settled(warm)
    return process.returncode, wall, usage.ru_maxrss


def _settled(runtime: Path, within: float = 5.0) -> None:
    """Wait, untimed, until the warm process serving from `runtime` has no child left but its spare (the
    child forked for the next request): a served render answers before it writes its cache entries, and
    those writes belong to its request, not to whatever the bench runs next."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and len(_warm_processes(runtime)) > 2:  # itself and its spare child
        time.sleep(0.002)


def _warm_processes(runtime: Path) -> list[int]:
    """The warm process serving from `runtime` and its children (forked: the same command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(runtime) in (entry / "cmdline").read_text():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _self_rss(command: Command, out: Path, err: Path) -> int:
    """chartshare's own peak RSS (KB), without helm's: the console script run under a reporting shim."""
    script, *rest = command.argv
    report = out.with_name("self-rss")
    report.unlink(missing_ok=True)  # never report an earlier run's figure
    _prepare(command)
    with out.open("wb") as stdout, err.open("wb") as stderr:
        subprocess.run(
            [str(Path(script).parent / "python"), "-c", _SELF_RSS, str(report), script, *rest],
            cwd=command.cwd,
            env=command.environment(),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            check=True,
        )
    return int(report.read_text())


_VARIANTS = ("", " miss", " cached")


def _columns(commands: list[Command], rows: list[dict]) -> None:
    """Each case's three figures side by side: its ratio to helm (and ms over it) cold, miss and cached."""
    found = {row["name"]: row for row in rows if "ratio" in row}
    cases = [command.name for command in commands if command.cold]
    if not cases:
        return
    width = max(len(name) for name in cases)
    print(f"\n{'case':<{width}} {'cold':>16} {'miss':>16} {'cached':>16}")
    for name in cases:
        cells = []
        for variant in _VARIANTS:
            row = found.get(name + variant)
            cells.append(f"{row['ratio']:.2f}x {row['overhead_ms']:+6.0f}ms" if row else "-")
        print(f"{name:<{width}} " + " ".join(f"{cell:>16}" for cell in cells))
    print()


def _report(commands: list[Command], by_name: dict[str, Command], helm: str, args: argparse.Namespace) -> dict:
    version = subprocess.run([helm, "version", "--short"], capture_output=True, text=True).stdout.strip()
    print(
        f"\nhelm {version}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{args.rounds} interleaved rounds, medians\n"
    )
    width = max(24, *(len(command.name) for command in commands))
    header = (
        f"{'command':<{width}} {'docs':>5} {'MB out':>7} {'wall ms':>8} {'vs helm':>8} {'+ms':>6} {'RSS MB':>7} "
        f"{'own RSS':>8}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    for command in commands:
        if command.skipped:
            print(f"{command.name:<{width}} skipped: {command.skipped}")
            rows.append({"name": command.name, "skipped": command.skipped})
            continue
        median = statistics.median(command.wall)
        row = {
            "name": command.name,
            "argv": command.argv,
            "documents": command.documents,
            "output_bytes": command.output_bytes,
            "wall_ms": {
                "median": round(median * 1000, 1),
                "min": round(min(command.wall) * 1000, 1),
                "max": round(max(command.wall) * 1000, 1),
                "samples": [round(w * 1000, 1) for w in command.wall],
            },
            "peak_rss_mb": round(max(command.rss_kb) / 1024, 1),
        }
        ratio = overhead = ""
        if command.baseline is not None:
            base = statistics.median(by_name[command.baseline].wall)
            row["baseline"] = command.baseline
            row["ratio"] = round(median / base, 3)
            row["overhead_ms"] = round((median - base) * 1000, 1)
            row["own_peak_rss_mb"] = round(command.self_rss_kb / 1024, 1)
            ratio, overhead = f"{row['ratio']:.3f}x", f"{row['overhead_ms']:+.0f}"
        own = f"{row.get('own_peak_rss_mb', '')}"
        print(
            f"{command.name:<{width}} {command.documents:>5} {command.output_bytes / 1e6:>7.2f} {median * 1000:>8.0f} "
            f"{ratio:>8} {overhead:>6} {row['peak_rss_mb']:>7} {own:>8}"
        )
        rows.append(row)
    _columns(commands, rows)
    for case in (f"{case}{variant}" for variant in _VARIANTS for case in _CHART_APPS):
        ratios = [
            row["ratio"] for row, command in zip(rows, commands, strict=True) if command.case == case and "ratio" in row
        ]
        if ratios:
            print(f"real charts, {case}: median ratio {statistics.median(ratios):.3f}x over {len(ratios)} charts")
    return {
        "helm": version,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "rounds": args.rounds,
        "commands": rows,
        "limits": {
            "cold_ratio": 1.30,
            "miss_ratio": 1.20,
            "cold_real_charts_median_ratio": 1.35,
            "cold_real_chart_max_ratio": 1.6,
            "cold_real_chart_max_ratio_unless_within_ms": 100,
            "cold_small_overhead_ms": 40,
            "cached_ratio": 0.10,
            "cached_small_wall_ms": 30,
            "own_peak_rss_mb": 150,
        },
    }


if __name__ == "__main__":
    raise SystemExit(main())
