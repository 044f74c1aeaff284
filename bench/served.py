#!/usr/bin/env python3
"""What a request costs chartshare besides its render: the commands Argo CD runs beside every generate.

    python bench/served.py [--rounds 20] [--chartshare PATH]

Each command runs served by a warm process (CHARTSHARE_WARM=on, as the image runs it) and in a process of
its own (off), interleaved round by round in a shuffled order (after one warm-up round), medians in ms:
the interpreter's own start (`python -I -c pass`, the floor of any request), a request that does nothing
(`generate` of a folder that does not exist: its one error line), `init` and `parameters` of
examples/shoong-delivery's notification app, and `check --help`. chartshare is installed as the image has
it (bench/run.py's install: a venv of its own, its own launcher) unless --chartshare names one.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
APP = ROOT / "examples" / "shoong-delivery" / "apps" / "dev" / "notification"
sys.path.insert(0, str(BENCH))
from run import _install  # noqa: E402  # the image's install, one way for both benchmarks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--chartshare", help="an installed chartshare to measure instead of a fresh install")
    parser.add_argument("--work", type=Path, default=BENCH / ".work")
    args = parser.parse_args()
    chartshare = str(Path(args.chartshare).resolve()) if args.chartshare else _install(args.work.resolve())
    python = str(Path(chartshare).parent / "python")
    runtime = Path(tempfile.mkdtemp(prefix="chartshare-served-"))
    commands = {
        "python -I -c pass": [python, "-I", "-c", "pass"],
        "nothing (an error line)": [chartshare, "generate", str(runtime / "absent")],
        "init": [chartshare, "init", "--repo-root", str(ROOT), str(APP)],
        "parameters": [chartshare, "parameters", "--repo-root", str(ROOT), str(APP)],
        "check --help": [chartshare, "check", "--help"],
    }
    base = {"PATH": os.environ["PATH"], "HOME": str(runtime), "CHARTSHARE_CACHE": str(runtime / "cache")}
    modes = {
        "warm": {**base, "CHARTSHARE_WARM": "on", "CHARTSHARE_RUNTIME_DIR": str(runtime / "run")},
        "own process": {**base, "CHARTSHARE_WARM": "off"},
    }
    runs = [(name, mode) for name in commands for mode in modes]
    times: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    rng = random.Random(7)
    for round_ in range(args.rounds + 1):
        rng.shuffle(runs)
        for name, mode in runs:
            started = time.perf_counter()
            subprocess.run(commands[name], cwd=APP, env=modes[mode], capture_output=True, check=False)
            if round_:
                times[(name, mode)].append((time.perf_counter() - started) * 1000)
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.rounds} interleaved rounds, medians")
    print(f"{'command':26}{'warm ms':>10}{'own process ms':>16}")
    for name in commands:
        warm, own = (statistics.median(times[(name, mode)]) for mode in modes)
        print(f"{name:26}{warm:>10.1f}{own:>16.1f}")
    for server in (runtime / "run").glob("warm-*.sock"):
        server.unlink()  # the warm process ends once its socket is gone
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
