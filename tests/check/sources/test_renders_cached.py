"""check through the render cache, with real helm behind a wrapper that logs each run: a job whose inputs did
not change reuses the claims its earlier render produced and prints the same report; a changed value file,
`--raw`, another renderer or generate's entries do not count as the same; failures and (unless
chartshare.yaml says `cache: always`) nondeterministic charts are never kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleet_builders import app

from cmp.cache.store import Entry
from cmp.check.sources import cached
from cmp.check.sources.plan import Job
from conftest import make_source, run_cli

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: svc\nversion: 1.0.0\n",
    "values.yaml": "level: info\n",
    "templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: {{ .Values.level | quote }}\n"
    ),
    "templates/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shared\n",
}
RANDOM = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\nstringData:\n  token: {{ randAlphaNum 12 | quote }}\n"
APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}
  source:
    repoURL: https://git.example.com/r.git
    path: {path}
{how}
"""
PLUGIN = """\
    plugin:
      name: chartshare-v1
      parameters:
        - {{name: values-files, array: [/values/{name}.yaml]}}"""
HELM = "    helm:\n      valueFiles: [../values/{name}.yaml]"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def _repository(root: Path, *, cache: str = "auto", random: bool = False) -> Path:
    """Three chartshare apps (a, b, c) and one Helm source (d) of one chart, each with its own values."""
    _write(root, {f"chart/{name}": text for name, text in CHART.items()})
    if random:
        _write(root, {"chart/templates/secret.yaml": RANDOM})
    config = f"apiVersion: chartshare/v1\nkind: ChartShare\nchart: ../chart\ncache: {cache}\nowner: a\n"
    _write(root, {"app/chartshare.yaml": config})
    for name in "abcd":
        _write(root, {f"values/{name}.yaml": f"level: {name}\n"})
        how = (HELM if name == "d" else PLUGIN).format(name=name)
        path = "chart" if name == "d" else "app"
        _write(root, {f"argocd/{name}.yaml": APPLICATION.format(name=name, path=path, how=how)})
    return root


@pytest.fixture
def logged_helm(tmp_path: Path, helm: str) -> tuple[str, Path]:
    """The real helm behind a script that appends a line to a log for every run."""
    log = tmp_path / "helm.log"
    wrapper = tmp_path / "bin" / "helm"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {helm} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return str(wrapper), log


def _check(root: Path, helm: str, *args: str, cache: Path) -> tuple[int, str, str]:
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(cache), "CHARTSHARE_RENDER_CACHE": "on"}
    result = run_cli(["check", "argocd", *args], env=env, cwd=root)
    return result.exit_code, result.stdout, result.stderr


def _runs(log: Path) -> int:
    """helm runs logged since the last call (the log is emptied)."""
    count = len(log.read_text().splitlines()) if log.exists() else 0
    log.write_text("")
    return count


def _entries(cache: Path) -> int:
    folder = cache / "renders"
    return len(list(folder.iterdir())) if folder.is_dir() else 0


def test_an_unchanged_fleet_is_checked_again_without_helm_and_prints_the_same_report(
    tmp_path: Path, logged_helm: tuple[str, Path]
) -> None:
    helm, log = logged_helm
    root, cache = _repository(tmp_path / "repo"), tmp_path / "cache"
    cold = [_check(root, helm, "--format", form, cache=cache) for form in ("text", "json")]
    assert _runs(log) == 4  # the text run renders the four apps; the JSON run reuses them
    assert _entries(cache) == 4
    warm = [_check(root, helm, "--format", form, cache=cache) for form in ("text", "json")]
    assert _runs(log) == 0
    assert warm == cold
    assert cold[0][0] == 1 and "Namespace shared" in cold[0][1]  # d, a Helm source, emits it too


def test_a_changed_value_file_renders_that_app_alone_again(tmp_path: Path, logged_helm: tuple[str, Path]) -> None:
    helm, log = logged_helm
    root, cache = _repository(tmp_path / "repo"), tmp_path / "cache"
    _check(root, helm, "--format", "json", cache=cache)
    _runs(log)
    (root / "values" / "b.yaml").write_text("level: debug\n")
    (root / "values" / "d.yaml").write_text("level: debug\n")
    status, warm, _ = _check(root, helm, "--format", "json", cache=cache)
    assert _runs(log) == 2
    _, cold, _ = _check(root, helm, "--format", "json", "--no-cache", cache=tmp_path / "unused")
    assert warm == cold and status == 1
    assert not (tmp_path / "unused").exists(), "--no-cache neither reads nor writes the cache"


def test_raw_renders_are_kept_apart_from_the_rules_renders(tmp_path: Path, logged_helm: tuple[str, Path]) -> None:
    helm, log = logged_helm
    root, cache = _repository(tmp_path / "repo"), tmp_path / "cache"
    ruled = _check(root, helm, cache=cache)
    _runs(log)
    raw = _check(root, helm, "--raw", cache=cache)
    assert _runs(log) == 4  # --raw is in every key, the Helm source's too
    assert raw != ruled and "(--raw: chartshare.yaml rules ignored)" in raw[1]
    assert _check(root, helm, cache=cache) == ruled and _runs(log) == 0


def test_generates_entries_and_checks_never_mix(tmp_path: Path, logged_helm: tuple[str, Path]) -> None:
    helm, log = logged_helm
    root, cache = _repository(tmp_path / "repo"), tmp_path / "cache"
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(cache), "CHARTSHARE_RENDER_CACHE": "on"}
    generate = ["generate", "app", "--app", "a", "-n", "a", "-f", "/values/a.yaml", "--repo-root", str(root)]
    assert run_cli(generate, env=env, cwd=root).exit_code == 0
    assert _runs(log) == 1 and _entries(cache) == 3  # what the rules made of helm's output, its alias, the mark
    _check(root, helm, cache=cache)
    assert _runs(log) == 4 and _entries(cache) == 7
    again = run_cli(generate, env=env, cwd=root)
    assert "(cached)" in again.stderr and _runs(log) == 0


def test_a_render_that_fails_is_never_kept(tmp_path: Path, logged_helm: tuple[str, Path]) -> None:
    helm, log = logged_helm
    root, cache = _repository(tmp_path / "repo"), tmp_path / "cache"
    (root / "chart" / "templates" / "cm.yaml").write_text('{{ required "level is required" .Values.missing }}\n')
    for _ in range(2):
        status, stdout, _ = _check(root, helm, cache=cache)
        assert status == 1 and "render failed:" in stdout and "level is required" in stdout
        assert _runs(log) == 4
    assert _entries(cache) == 0


@pytest.mark.parametrize(("mode", "kept"), [("auto", False), ("never", False), ("always", True)])
def test_a_nondeterministic_chart_is_rendered_twice_every_time_unless_cache_always(
    tmp_path: Path, logged_helm: tuple[str, Path], mode: str, kept: bool
) -> None:
    helm, log = logged_helm
    root, cache = _repository(tmp_path / "repo", cache=mode, random=True), tmp_path / "cache"
    first = _check(root, helm, cache=cache)
    assert _runs(log) == 8  # every app twice: the fields that differ are named
    assert "[nondeterministic]" in first[1]
    again = _check(root, helm, cache=cache)
    assert _runs(log) == (2 if kept else 8)  # d, a Helm source, has no chartshare.yaml to say `always`
    assert _entries(cache) == (3 if kept else 0)
    assert "[nondeterministic]" in again[1]


def test_cache_never_keeps_no_render(tmp_path: Path, logged_helm: tuple[str, Path]) -> None:
    helm, log = logged_helm
    root, cache = _repository(tmp_path / "repo", cache="never"), tmp_path / "cache"
    _check(root, helm, cache=cache)
    _check(root, helm, cache=cache)
    assert _runs(log) == 8 - 1  # d, a Helm source, is kept: the chartshare.yaml is not its
    assert _entries(cache) == 1


def test_the_renderer_raw_and_the_destination_are_in_the_key(tmp_path: Path) -> None:
    root = _repository(tmp_path / "repo")
    job = Job(app("a", namespace="a"), make_source(path="app"), "chartshare", root / "app", root, False, "helm", 9)
    settings = {"level": "a"}

    def key(changed: Job) -> str:
        return cached.key(changed, root / "chart", settings).key

    base = key(job)
    assert key(Job(job.app, job.source, "helm", job.app_dir, root, False, "helm", 9)) != base
    assert key(Job(job.app, job.source, "chartshare", job.app_dir, root, True, "helm", 9)) != base
    assert (
        key(
            Job(
                app("a", cluster="https://other", namespace="a"),
                job.source,
                "chartshare",
                job.app_dir,
                root,
                False,
                "helm",
                9,
            )
        )
        != base
    )
    assert key(Job(app("a", namespace="b"), job.source, "chartshare", job.app_dir, root, False, "helm", 9)) != base
    assert key(job) == base


def test_an_entry_that_holds_no_claims_reads_as_a_miss() -> None:
    assert cached.claims(Entry(b"apiVersion: v1\nkind: ConfigMap\n", ())) is None
    assert cached.claims(Entry(b'{"emitted": [{"id": [1]}]}', ())) is None
