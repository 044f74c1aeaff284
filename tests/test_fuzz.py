"""The fuzzing script runs in CI on a small fixed budget; `make fuzz` (FUZZ_SECONDS) runs it for longer."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

CI_SECONDS = int(os.environ.get("CHARTSHARE_CI_FUZZ_SECONDS", "4"))


def test_the_parsers_survive_a_bounded_fuzzing_run(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "fuzz" / "fuzz.py"), "--seconds", str(CI_SECONDS), "--crashes", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=CI_SECONDS * 3 + 180,
    )
    print(completed.stdout)  # executions per target, shown with pytest -s
    assert completed.returncode == 0, completed.stdout + completed.stderr
    for target in _targets():
        assert f"\n{target}: " in f"\n{completed.stdout}" and f"{target}: CRASH" not in completed.stdout, target
        assert any(
            line.startswith(f"{target}: ") and line.endswith(", no crash") for line in completed.stdout.splitlines()
        )


def _targets() -> tuple[str, ...]:
    """The fuzz targets the script declares (every one of them must have run)."""
    namespace = runpy.run_path(str(ROOT / "fuzz" / "fuzz.py"), run_name="fuzz_targets")
    targets = namespace["TARGETS"]
    assert targets, "fuzz.py declares no targets"
    return tuple(targets)
