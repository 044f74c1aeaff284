"""Fuzz the three parsers that read untrusted text: chartshare.yaml, helm's output stream, and the
Application parameters (ARGOCD_APP_PARAMETERS, PARAM_*, ARGOCD_ENV_CHARTSHARE_*); the pure pipeline
behind them (decide, strip, rename with reference fixing, JSON Patch, protect) on any stream;
`check`'s reader of Application and ApplicationSet manifests; the readers of a chart's own files that
run before helm: values.schema.json's references, packed charts, and its metadata (Chart.yaml, read by
init and check through the bounded tenant YAML reader); and check's glob dialects, matched by automata.

A finding is any exception other than the parser's own ChartShareError: those would reach the user as
"internal error", the one outcome chartshare promises never to have. Each finding becomes a row of
tests/corpus/errors.yaml (or a unit test) with its fix.

    python fuzz/fuzz.py                      # every target, 60 s each
    python fuzz/fuzz.py --seconds 600 config # one target, longer
    FUZZ_SECONDS=3600 make fuzz              # the same through make

Coverage-guided with atheris (libFuzzer) when it is installed; otherwise hypothesis generates inputs for
the same time budget. Each target runs in its own process (libFuzzer allows one per process). Prints, per
target, the executions and seconds, and exits 1 with the crashing input's path on the first finding.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
TARGETS = ("config", "manifests", "params", "pipeline", "applications", "schemas", "packed", "metadata", "globs")
# The rules the pipeline target applies: every action, JSON Patch, and a user reference, for two apps.
PIPELINE_RULES = """apiVersion: chartshare/v1
kind: ChartShare
owner: dev-a
unowned: keep
allowEmpty: true
rules:
  - match: {kind: Namespace}
    owner: dev-a
  - match: {kind: "Cluster*"}
    others: rename
    renameTo: "{app}-{name}"
    patch: [{op: add, path: /metadata/labels, value: {team: x}}]
  - match: {kind: ServiceAccount}
    others: rename
  - match: {kind: ConfigMap}
    patch: [{op: replace, path: /data/mode, value: "off"}, {op: remove, path: /data/x}]
  - match: {kind: PriorityClass}
    owner: dev-b
    others: fail
references:
  - {kind: ClusterRole, from: {group: example.io, kind: Widget}, path: /spec/roleName}
"""


def _load_targets() -> dict[str, Callable[[bytes], None]]:
    """The targets, importing cmp instrumented when atheris is there."""
    try:
        import atheris
    except ImportError:
        return _targets()
    with atheris.instrument_imports(include=["cmp"]):
        return _targets()


def _targets() -> dict[str, Callable[[bytes], None]]:
    from cmp import manifests, packed
    from cmp.check.fleet import globs, inventory
    from cmp.check.fleet.repos import Repositories
    from cmp.errors import ChartShareError
    from cmp.helm import schemas
    from cmp.inputs import config
    from cmp.inputs import parameters as params
    from cmp.model import App
    from cmp.ownership import rules
    from cmp.ownership.process import process
    from cmp.ownership.report import summary
    from cmp.remote import dependencies

    ownership = rules.parse(PIPELINE_RULES, Path("chartshare.yaml"), "chartshare.yaml")

    def fuzz_config(data: bytes) -> None:
        text = data.decode("utf-8", errors="replace")
        with contextlib.suppress(ChartShareError):
            rules.parse(text, Path("chartshare.yaml"), "chartshare.yaml")

    def fuzz_manifests(data: bytes) -> None:
        stream = data.decode("utf-8", errors="replace")
        chunks = list(manifests.split(stream))
        assert all(chunk.text.strip() for chunk in chunks), "split yielded a blank document"
        try:
            resources = manifests.parse(stream)
            manifests.emit_yaml(resources)
            manifests.emit_json(resources)
            for resource in resources:  # what a rule changes is re-serialised: that path must hold too
                resource.mark_changed()
            manifests.emit_yaml(resources)
        except ChartShareError:
            pass

    def fuzz_params(data: bytes) -> None:
        text = data.decode("utf-8", errors="surrogateescape")  # as os.environ decodes the environment
        env = dict(line.partition("=")[::2] for line in text.split("\0") if line)
        for decode in (
            lambda: params.from_app_parameters(text),
            lambda: config.merged({}, env),
            lambda: config.merged({}, {"ARGOCD_APP_PARAMETERS": text}),
        ):
            with contextlib.suppress(ChartShareError):
                decode()

    def fuzz_pipeline(data: bytes) -> None:
        """The whole pure pipeline (decide, strip, rename with references, patch, protect) on any stream."""
        stream = data.decode("utf-8", errors="replace")
        for app in (App("dev-a", "web", "shoong"), App("team_dev-b", "web", "shoong")):
            with contextlib.suppress(ChartShareError):
                outcome = process(manifests.parse(stream), ownership, app)
                manifests.emit_yaml(outcome.resources)
                manifests.emit_json(outcome.resources)
                summary(outcome)

    scratch = Path(tempfile.mkdtemp(prefix="chartshare-fuzz-apps-")) / "apps.yaml"

    def fuzz_applications(data: bytes) -> None:
        """`check`'s reader of Application and ApplicationSet manifests: it collects errors, never raises."""
        scratch.write_bytes(data)
        inventory.load([scratch], "argocd", Repositories(scratch.parent), clusters=())

    chart = Path(tempfile.mkdtemp(prefix="chartshare-fuzz-chart-"))

    def fuzz_schemas(data: bytes) -> None:
        """The schema check before helm: any bytes are a schema it accepts or refuses by name."""
        (chart / "values.schema.json").write_bytes(data)
        with contextlib.suppress(ChartShareError):
            schemas.refuse_remote_references(chart, 10)

    def fuzz_packed(data: bytes) -> None:
        """A packed chart read file by file: any bytes are files, or unreadable with the reason."""
        with contextlib.suppress(packed.Unreadable):
            for _ in packed.chart_files(io.BytesIO(data), packed.Budget(time.monotonic() + 10)):
                pass

    metadata = Path(tempfile.mkdtemp(prefix="chartshare-fuzz-metadata-"))

    def fuzz_metadata(data: bytes) -> None:
        """A chart's Chart.yaml as init and check read it: dependencies, or one error naming file and line."""
        (metadata / "Chart.yaml").write_bytes(data)
        with contextlib.suppress(ChartShareError):
            for dependency in dependencies.read(metadata):
                assert dependency.label and dependencies.present(metadata, dependency) in (True, False)

    def fuzz_globs(data: bytes) -> None:
        """A pattern and a name (split at the first newline) in each of check's glob dialects: a verdict in
        time linear in the name, or BadPattern."""
        pattern, _, name = data.decode("utf-8", errors="replace").partition("\n")
        for match in (globs.gobwas_match, globs.path_match, globs.pathspec_match):
            with contextlib.suppress(globs.BadPattern):
                assert match(pattern, name) in (True, False)

    return {
        "applications": fuzz_applications,
        "metadata": fuzz_metadata,
        "globs": fuzz_globs,
        "config": fuzz_config,
        "manifests": fuzz_manifests,
        "params": fuzz_params,
        "pipeline": fuzz_pipeline,
        "schemas": fuzz_schemas,
        "packed": fuzz_packed,
    }


def run_one(target: str, libfuzzer_args: list[str]) -> None:
    """Inside the child process: fuzz one target until libFuzzer's -max_total_time."""
    function = _load_targets()[target]
    try:
        import atheris
    except ImportError:
        _hypothesis_loop(function, target, libfuzzer_args)
        return
    atheris.Setup([sys.argv[0], *libfuzzer_args], function)
    atheris.Fuzz()


def _hypothesis_loop(function: Callable[[bytes], None], target: str, args: list[str]) -> None:
    """No atheris: hypothesis in a loop for the same budget, seeded with the seed files, same output line."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    seconds = next((int(arg.split("=", 1)[1]) for arg in args if arg.startswith("-max_total_time=")), 60)
    seeds = [path.read_bytes() for path in sorted((HERE / "seeds" / target).iterdir())]
    mutated = st.sampled_from(seeds).flatmap(
        lambda seed: st.tuples(st.integers(0, len(seed)), st.integers(0, 64), st.binary(max_size=64)).map(
            lambda cut: seed[: cut[0]] + cut[2] + seed[cut[0] + cut[1] :]
        )
    )
    runs = 0

    @settings(max_examples=500, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(st.binary(max_size=4096), mutated))
    def check(data: bytes) -> None:
        nonlocal runs
        runs += 1
        function(data)

    started = time.monotonic()
    while time.monotonic() - started < seconds:
        check()
    print(f"Done {runs} runs in {int(time.monotonic() - started)} second(s) (hypothesis)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help=f"any of {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("FUZZ_SECONDS", "60")))
    parser.add_argument("--crashes", type=Path, default=HERE / "crashes", help="where crashing inputs go")
    parser.add_argument("--run", choices=TARGETS, help=argparse.SUPPRESS)
    options, libfuzzer_args = parser.parse_known_args()
    if options.run:
        run_one(options.run, libfuzzer_args)
        return 0
    unknown = sorted(set(options.targets) - set(TARGETS))
    if unknown:
        parser.error(f"unknown target {unknown[0]!r}; choose from {', '.join(TARGETS)}")
    failed = False
    for target in options.targets or TARGETS:
        failed |= not _fuzz(target, options.seconds, options.crashes)
    return 1 if failed else 0


def _fuzz(target: str, seconds: int, crashes: Path) -> bool:
    """Run one target in a child process on a scratch copy of its seeds; report runs and any crash."""
    crashes.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"chartshare-fuzz-{target}-") as scratch:
        corpus = Path(scratch) / "corpus"
        shutil.copytree(HERE / "seeds" / target, corpus)
        argv = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--run",
            target,
            f"-max_total_time={seconds}",
            "-max_len=4096",
            "-timeout=10",
            "-rss_limit_mb=2048",
            f"-artifact_prefix={crashes}/{target}-",
            "-print_final_stats=1",
            str(corpus),
        ]
        completed = subprocess.run(  # the child's own temporary files go in the scratch folder, removed here
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=seconds + 120,
            env={**os.environ, "TMPDIR": scratch},
        )
    output = completed.stdout + completed.stderr
    done = re.search(r"Done (\d+) runs in (\d+) second", output)
    progress = re.findall(r"^#(\d+)\s", output, re.M)  # libFuzzer's status lines, when it stopped early
    runs = (
        f"{done.group(1)} executions in {done.group(2)} s"
        if done
        else f"{progress[-1] if progress else '?'} executions"
    )
    if completed.returncode != 0:
        artifact = re.search(r"Test unit written to (\S+)", output)
        print(f"{target}: CRASH after {runs}; input: {artifact.group(1) if artifact else '?'}")
        print("\n".join(output.splitlines()[-40:]))
        return False
    print(f"{target}: {runs}, no crash")
    return True


if __name__ == "__main__":
    sys.exit(main())
