"""`generate` through the render cache, run as Argo CD runs it: the real CLI, real helm, a real cache folder.

A hit prints what the cold render printed (its summary line saying `(cached)`) without starting helm; what
may not be kept (a failure, a nondeterministic chart under `cache: auto`, `cache: never`) is not; the switches
turn the cache off; two checkouts of one app share entries; two concurrent renders of one key both succeed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from archives import bomb

from cmp.cache.store import Entry, Store
from conftest import ROOT, TESTS, Result, clean_env, run_cli

CHART = TESTS / "charts" / "shared"
CONFIG = "apiVersion: chartshare/v1\nkind: ChartShare\nchart: ../chart\nowner: dev-a\n"


def _repo(base: Path, config: str = CONFIG) -> Path:
    repo = base / "repo"
    shutil.copytree(CHART, repo / "chart")
    (repo / "app").mkdir()
    (repo / "app" / "chartshare.yaml").write_text(config)
    return repo


def _logging_helm(base: Path, helm: str) -> Path:
    """helm behind a script that notes each start, so a test can tell whether helm ran."""
    wrapper = base / "bin" / "helm"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(f'#!/bin/sh\necho started >> {base}/helm.log\nexec {helm} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def _helm_starts(base: Path) -> int:
    log = base / "helm.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _generate(repo: Path, helm: str | Path, cache: Path, *extra: str, env: dict[str, str] | None = None) -> Result:
    return run_cli(
        ["generate", str(repo / "app"), "--repo-root", str(repo), "--app", "dev-a", *extra],
        env={
            "CHARTSHARE_HELM": str(helm),
            "CHARTSHARE_CACHE": str(cache),
            "CHARTSHARE_RENDER_CACHE": "on",
            **(env or {}),
        },
    )


def _entries(cache: Path) -> list[str]:
    return os.listdir(cache / "renders") if (cache / "renders").is_dir() else []


def _uncached(stderr: str) -> str:
    first, _, rest = stderr.partition("\n")
    return first.removesuffix(" (cached)") + "\n" + rest


def test_a_hit_prints_the_cold_render_without_starting_helm(helm: str, tmp_path: Path) -> None:
    repo, wrapper = _repo(tmp_path), _logging_helm(tmp_path, helm)
    cold = _generate(repo, wrapper, tmp_path / "cache")
    hit = _generate(repo, wrapper, tmp_path / "cache")
    assert cold.exit_code == hit.exit_code == 0, cold.stderr
    assert hit.stdout == cold.stdout
    assert hit.stderr.splitlines()[0] == cold.stderr.splitlines()[0] + " (cached)"
    assert _uncached(hit.stderr) == cold.stderr
    assert _helm_starts(tmp_path) == 1


def test_the_typer_path_looks_up_too(helm: str, tmp_path: Path) -> None:
    """`--` sends the line to typer: the fast reader declines it."""
    repo = _repo(tmp_path)
    cold = _generate(repo, helm, tmp_path / "cache")
    hit = run_cli(
        ["generate", "--repo-root", str(repo), "--app", "dev-a", "--", str(repo / "app")],
        env={"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache"), "CHARTSHARE_RENDER_CACHE": "on"},
    )
    assert hit.exit_code == 0, hit.stderr
    assert (hit.stdout, _uncached(hit.stderr)) == (cold.stdout, cold.stderr)
    assert "(cached)" in hit.stderr.splitlines()[0]


def test_two_checkouts_of_one_app_share_entries(helm: str, tmp_path: Path) -> None:
    """Argo CD unpacks each request into a fresh folder."""
    first, second = _repo(tmp_path / "request-1"), _repo(tmp_path / "request-2")
    cold = _generate(first, helm, tmp_path / "cache")
    hit = _generate(second, helm, tmp_path / "cache")
    assert hit.stdout == cold.stdout
    assert "(cached)" in hit.stderr.splitlines()[0]


def test_a_failed_render_is_not_kept(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "chart" / "templates" / "broken.yaml").write_text('{{ fail "the chart says no" }}\n')
    for _ in range(2):
        result = _generate(repo, helm, tmp_path / "cache")
        assert result.exit_code != 0
        assert "the chart says no" in result.stderr
    assert _entries(tmp_path / "cache") == []


RANDOM = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\nstringData:\n  token: {{ randAlphaNum 24 | quote }}\n"


def test_a_nondeterministic_chart_is_not_kept_by_default(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "chart" / "templates" / "token.yaml").write_text(RANDOM)
    first, second = _generate(repo, helm, tmp_path / "cache"), _generate(repo, helm, tmp_path / "cache")
    assert first.exit_code == second.exit_code == 0, first.stderr
    assert first.stdout != second.stdout
    assert "(cached)" not in second.stderr
    assert _entries(tmp_path / "cache") == []


def test_cache_always_keeps_a_nondeterministic_chart_and_its_first_values(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path, CONFIG + "cache: always\n")
    (repo / "chart" / "templates" / "token.yaml").write_text(RANDOM)
    first, second = _generate(repo, helm, tmp_path / "cache"), _generate(repo, helm, tmp_path / "cache")
    assert second.stdout == first.stdout
    assert "(cached)" in second.stderr.splitlines()[0]


def test_cache_never_keeps_nothing(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path, CONFIG + "cache: never\n")
    _generate(repo, helm, tmp_path / "cache")
    assert "(cached)" not in _generate(repo, helm, tmp_path / "cache").stderr
    assert _entries(tmp_path / "cache") == []


@pytest.mark.parametrize(("flags", "env"), [(("--no-cache",), {}), ((), {"CHARTSHARE_RENDER_CACHE": "off"})])
def test_the_switches_leave_the_cache_alone(
    helm: str, tmp_path: Path, flags: tuple[str, ...], env: dict[str, str]
) -> None:
    repo = _repo(tmp_path)
    _generate(repo, helm, tmp_path / "cache")
    kept = _entries(tmp_path / "cache")
    (tmp_path / "other").mkdir()
    for _ in range(2):
        result = _generate(repo, helm, tmp_path / "other" / "cache", *flags, env=env)
        assert result.exit_code == 0
        assert "(cached)" not in result.stderr
    result = _generate(repo, helm, tmp_path / "cache", *flags, env=env)
    assert "(cached)" not in result.stderr
    assert _entries(tmp_path / "cache") == kept
    assert _entries(tmp_path / "other" / "cache") == []


def test_two_concurrent_generates_of_one_key_both_succeed(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    argv = [sys.executable, "-m", "cmp", "generate", str(repo / "app"), "--repo-root", str(repo), "--app", "dev-a"]
    env = clean_env(
        {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache"), "CHARTSHARE_RENDER_CACHE": "on"}
    )
    running = [
        subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [process.communicate(timeout=120) for process in running]
    assert [process.returncode for process in running] == [0, 0], results
    assert results[0][0] == results[1][0]
    hit = _generate(repo, helm, tmp_path / "cache")
    assert hit.stdout == results[0][0]
    assert "(cached)" in hit.stderr.splitlines()[0]
    assert len(_entries(tmp_path / "cache")) == 3  # what the rules made of helm's output, the render's alias, the mark


def _mark(cache: Path) -> Path:
    """The mark kept beside a render: an entry of nothing under the key of its settings alone."""
    store = Store(str(cache / "renders"), 1 << 30)
    (found,) = [key for key in _entries(cache) if store.get(key) == Entry(b"", ())]
    return cache / "renders" / found


def test_a_hit_whose_mark_is_gone_is_found_once_helm_started_and_printed_as_a_hit(helm: str, tmp_path: Path) -> None:
    """Settings with no mark (their first render, a values change) cannot hit: helm starts before the key's
    walk of the chart. A mark evicted before its render only means the hit is found then: printed, its helm
    killed, and the mark kept again, so the next run looks before helm."""
    repo, wrapper, cache = _repo(tmp_path), _logging_helm(tmp_path, helm), tmp_path / "cache"
    cold = _generate(repo, wrapper, cache)
    assert cold.exit_code == 0 and _helm_starts(tmp_path) == 1
    _mark(cache).unlink()
    hit = _generate(repo, wrapper, cache)
    assert (hit.exit_code, hit.stdout, _uncached(hit.stderr)) == (0, cold.stdout, cold.stderr)
    assert "(cached)" in hit.stderr.splitlines()[0]
    assert _helm_starts(tmp_path) == 1 + 1  # started, then killed
    assert _mark(cache).exists()
    again = _generate(repo, wrapper, cache)
    assert (again.stdout, again.stderr) == (hit.stdout, hit.stderr)
    assert _helm_starts(tmp_path) == 2  # looked up first: helm never started


def test_a_chart_edit_misses(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    cold = _generate(repo, helm, tmp_path / "cache")
    values = repo / "chart" / "values.yaml"
    values.write_text(values.read_text() + "\n# a comment changes the bytes\n")
    again = _generate(repo, helm, tmp_path / "cache")
    assert "(cached)" not in again.stderr
    assert again.stdout == cold.stdout


def test_a_chart_edit_helm_does_not_print_finds_what_the_rules_made_of_its_output(helm: str, tmp_path: Path) -> None:
    """helm runs (the render key changed), prints what it printed before, and what the rules made of that
    is printed as a fresh render prints it: no `(cached)` (the next test shows it is read, not made)."""
    repo, wrapper, cache = _repo(tmp_path), _logging_helm(tmp_path, helm), tmp_path / "cache"
    cold = _generate(repo, wrapper, cache)
    assert cold.exit_code == 0, cold.stderr
    assert len(_entries(cache)) == 3
    (repo / "chart" / "README.md").write_text("docs that helm does not render\n")
    again = _generate(repo, wrapper, cache)
    assert (again.exit_code, again.stdout, again.stderr) == (0, cold.stdout, cold.stderr)
    assert _helm_starts(tmp_path) == 2
    assert len(_entries(cache)) == 4  # the new render's key: an alias of the entry read


def test_what_the_rules_made_of_an_output_is_read_back_not_made_again(helm: str, tmp_path: Path) -> None:
    """The entries replaced by a marker: a render whose key changed and whose helm output did not prints
    the marker, so the rules did not run."""
    repo, cache = _repo(tmp_path), tmp_path / "cache"
    assert _generate(repo, helm, cache).exit_code == 0
    store = Store(str(cache / "renders"), 1 << 30)
    for key in _entries(cache):
        store.put(key, Entry(b"kind: Marker\n", ("dev-a: marker",)))
    (repo / "chart" / "README.md").write_text("docs that helm does not render\n")
    again = _generate(repo, helm, cache)
    assert (again.exit_code, again.stdout) == (0, "kind: Marker\n"), again.stderr
    (repo / "app" / "values.yaml").write_text("replicas: 7\n")
    changed = _generate(repo, helm, cache, "-f", "/app/values.yaml")
    assert changed.exit_code == 0 and "Marker" not in changed.stdout, changed.stderr


def test_a_corrupt_entry_of_what_the_rules_made_is_rendered_afresh_and_replaced(helm: str, tmp_path: Path) -> None:
    repo, cache = _repo(tmp_path), tmp_path / "cache"
    cold = _generate(repo, helm, cache)
    for key in _entries(cache):
        entry = cache / "renders" / key
        entry.write_bytes(entry.read_bytes()[:-3] + b"xx\n")
    (repo / "chart" / "README.md").write_text("docs that helm does not render\n")
    again = _generate(repo, helm, cache)
    assert (again.exit_code, again.stdout) == (0, cold.stdout)
    notices = [line for line in again.stderr.splitlines() if "render cache" in line]
    assert len(notices) == 1 and "truncated or corrupt" in notices[0], again.stderr
    (repo / "chart" / "README.md").write_text("docs, edited again\n")
    replaced = _generate(repo, helm, cache)  # the entry replaced: read back whole, without a notice
    assert (replaced.exit_code, replaced.stdout, replaced.stderr) == (0, cold.stdout, cold.stderr)


def test_a_hit_loads_neither_yaml_nor_the_pipeline_nor_subprocess(helm: str, tmp_path: Path) -> None:
    """A hit is read, not rendered: what a miss needs (YAML, the rules, helm's process) stays unloaded."""
    repo = _repo(tmp_path)
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache"), "CHARTSHARE_RENDER_CACHE": "on"}
    args = ["generate", str(repo / "app"), "--repo-root", str(repo), "--app", "dev-a"]
    assert run_cli(args, env=env).exit_code == 0
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "cmp", *args], env=clean_env(env), capture_output=True, text=True
    )
    loaded = {line.rpartition("|")[2].strip() for line in traced.stderr.splitlines() if line.startswith("import time:")}
    assert "(cached)" in traced.stderr
    heavy = {"yaml", "json", "typer", "click", "subprocess", "tarfile", "cmp.manifests", "cmp.ownership.rules"}
    assert heavy & loaded == set()


def test_a_miss_of_a_chart_seen_before_prints_what_a_fresh_render_prints(helm: str, tmp_path: Path) -> None:
    """The second render (its values changed) takes what the scan found in the documents seen from the
    identities kept beside the render cache, in another checkout too; what it prints is what a render
    without any cache prints."""
    first, second = _repo(tmp_path / "request-1"), _repo(tmp_path / "request-2")
    for repo, replicas in ((first, 2), (second, 3)):
        (repo / "app" / "values.yaml").write_text(f"replicas: {replicas}\n")
    cold = _generate(first, helm, tmp_path / "cache", "-f", "/app/values.yaml")
    kept = os.listdir(tmp_path / "cache" / "identities")
    miss = _generate(second, helm, tmp_path / "cache", "-f", "/app/values.yaml")
    fresh = _generate(second, helm, tmp_path / "other", "-f", "/app/values.yaml", "--no-cache")
    assert cold.exit_code == miss.exit_code == fresh.exit_code == 0, miss.stderr
    assert "(cached)" not in miss.stderr
    assert (miss.stdout, miss.stderr) == (fresh.stdout, fresh.stderr)
    assert len(kept) == 1 and os.listdir(tmp_path / "cache" / "identities") == kept
    assert not (tmp_path / "other" / "identities").exists()


def test_a_patch_file_edit_misses(helm: str, tmp_path: Path) -> None:
    """A file a post-render `path:` names counts in the key, as chartshare.yaml does."""
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dev-a-config}\ndata: {patched: one}\n"
    repo = _repo(tmp_path, CONFIG + "patches:\n  - path: patch.yaml\n")
    (repo / "app" / "patch.yaml").write_text(patch)
    cold = _generate(repo, helm, tmp_path / "cache")
    assert cold.exit_code == 0, cold.stderr
    assert "patched: one" in cold.stdout
    assert "(cached)" in _generate(repo, helm, tmp_path / "cache").stderr
    (repo / "app" / "patch.yaml").write_text(patch.replace("one", "two"))
    again = _generate(repo, helm, tmp_path / "cache")
    assert "(cached)" not in again.stderr
    assert "patched: two" in again.stdout


ESCAPED_PATH = CONFIG + 'patches:\n  - "p\\x61th": patch.yaml\n'  # `path` to YAML, not to a byte search


def test_a_patch_file_named_by_an_escaped_key_counts_for_every_tenant(helm: str, tmp_path: Path) -> None:
    """Two tenants' repositories, one app name, one chart, one chartshare.yaml naming its patch with an
    escaped key: the second is never served the first's output, and an edit of the patch misses."""
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dev-a-config}\ndata: {patched: %s}\n"
    tenant_a, tenant_b = _repo(tmp_path / "a", ESCAPED_PATH), _repo(tmp_path / "b", ESCAPED_PATH)
    (tenant_a / "app" / "patch.yaml").write_text(patch % "by-a")
    (tenant_b / "app" / "patch.yaml").write_text(patch % "by-b")
    first = _generate(tenant_a, helm, tmp_path / "cache")
    assert first.exit_code == 0, first.stderr
    assert "patched: by-a" in first.stdout
    assert "(cached)" in _generate(tenant_a, helm, tmp_path / "cache").stderr
    second = _generate(tenant_b, helm, tmp_path / "cache")
    assert second.exit_code == 0, second.stderr
    assert "(cached)" not in second.stderr
    assert "patched: by-b" in second.stdout and "by-a" not in second.stdout
    assert "patched: by-a" in _generate(tenant_a, helm, tmp_path / "cache").stdout  # both kept, each its own
    (tenant_a / "app" / "patch.yaml").write_text(patch % "edited")
    edited = _generate(tenant_a, helm, tmp_path / "cache")
    assert "(cached)" not in edited.stderr and "patched: edited" in edited.stdout


def test_a_patch_reached_through_a_link_counts_where_the_link_leads(helm: str, tmp_path: Path) -> None:
    """chartshare.yaml unchanged, its patch a link moved to another file: a miss, not the old output."""
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dev-a-config}\ndata: {patched: %s}\n"
    repo = _repo(tmp_path, ESCAPED_PATH)
    (repo / "patches").mkdir()
    for name in ("one", "two"):
        (repo / "patches" / f"{name}.yaml").write_text(patch % name)
    (repo / "app" / "patch.yaml").symlink_to(Path("../patches/one.yaml"))
    assert "patched: one" in _generate(repo, helm, tmp_path / "cache").stdout
    assert "(cached)" in _generate(repo, helm, tmp_path / "cache").stderr
    (repo / "app" / "patch.yaml").unlink()
    (repo / "app" / "patch.yaml").symlink_to(Path("../patches/two.yaml"))
    moved = _generate(repo, helm, tmp_path / "cache")
    assert "(cached)" not in moved.stderr and "patched: two" in moved.stdout


BOMB_TIMEOUT = 5
MEASURED = """import resource, subprocess, sys, time
started = time.monotonic()
status = subprocess.run(sys.argv[1:], capture_output=True).returncode
print(status, time.monotonic() - started, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10)
"""


def _measured(repo: Path, helm: str, cache: Path, *extra: str) -> tuple[int, float, int]:
    """A real `generate --timeout 5` with the cache on: its exit status, wall time, and the peak RSS of
    the largest process of its tree (chartshare, or the helm it ran), measured by a parent of its own."""
    command = ["generate", str(repo / "app"), "--repo-root", str(repo), "--app", "dev-a", *extra]
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(cache), "CHARTSHARE_RENDER_CACHE": "on"}
    completed = subprocess.run(
        [sys.executable, "-c", MEASURED, sys.executable, "-m", "cmp", *command, "--timeout", str(BOMB_TIMEOUT)],
        env=clean_env(env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    status, seconds, peak = completed.stdout.split()
    return int(status), float(seconds), int(peak)


@pytest.mark.parametrize("skip", [(), ("--skip-schema-validation",)], ids=["schemas-checked", "schemas-skipped"])
def test_a_decompression_bomb_in_a_packed_subchart_ends_within_the_deadline_in_bounded_memory(
    helm: str, tmp_path: Path, skip: tuple[str, ...]
) -> None:
    """4 MB of gzip holding 256 files of 16 MiB zeros: the schema check refuses it by name before helm
    starts, or, schemas skipped, helm refuses it while the render cache's key walk and scan read it; each
    reads no further than helm's bounds allow, within the deadline, never holding a file whole."""
    repo = _repo(tmp_path)
    (repo / "chart" / "charts").mkdir(exist_ok=True)
    (repo / "chart" / "charts" / "sub.tgz").write_bytes(bomb())
    status, seconds, peak = _measured(repo, helm, tmp_path / "cache", *skip)
    print(f"bomb: exit {status}, {seconds:.2f} s, peak RSS {peak / (1 << 20):.0f} MiB")
    assert status == 1  # helm would refuse it too
    assert seconds < BOMB_TIMEOUT + 10  # generous: the bound is the deadline's, not this machine's speed
    assert peak < 1 << 30
    assert _entries(tmp_path / "cache") == []


def test_a_packed_chart_helm_ignores_past_the_bounds_is_refused_unless_schemas_are_skipped(
    helm: str, tmp_path: Path
) -> None:
    """.helmignore leaves the bomb out of helm's load. The schema check cannot read it within helm's bounds,
    so it refuses the chart (it cannot tell what helm would fetch); with skip-schema-validation helm renders
    it, and the scan, which could not read it either, keeps nothing, and says why."""
    repo = _repo(tmp_path)
    (repo / "chart" / "charts").mkdir(exist_ok=True)
    (repo / "chart" / "charts" / "sub.tgz").write_bytes(bomb(files=4))
    (repo / "chart" / ".helmignore").write_text("charts/sub.tgz\n")
    member = "member 'sub/templates/z0.yaml' is 16.0 MiB, over the 5 MiB helm loads"
    refused = _generate(repo, helm, tmp_path / "cache")
    assert refused.exit_code == 1 and refused.stdout == ""
    assert refused.stderr == (
        f"chartshare: error: chart chart: charts/sub.tgz cannot be checked for schema references: {member}\n"
    )
    first = _generate(repo, helm, tmp_path / "cache", "--skip-schema-validation")
    assert first.exit_code == 0, first.stderr
    notice = f"chartshare: notice: render cache: this render was not kept: charts/sub.tgz: {member}"
    assert notice in first.stderr.splitlines()
    again = _generate(repo, helm, tmp_path / "cache", "--skip-schema-validation")
    assert "(cached)" not in again.stderr and again.stdout == first.stdout
