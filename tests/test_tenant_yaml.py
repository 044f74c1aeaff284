"""Tenant YAML within go-yaml's bounds (cmp/tenant_yaml.py): alias budgets counted, never expanded; depth
and size named by file and line; and every reader of a tenant file (Chart.yaml in init and check,
chartshare.yaml, patches) refusing a bomb by name, at once, in bounded memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cmp import goyaml, tenant_yaml
from conftest import ROOT, clean_env, realcharts, run_cli


def alias_bomb(levels: int = 8, key: str = "dependencies", width: int = 9) -> str:
    """A Chart.yaml whose last list aliases the one before it `width` times, `levels` deep: a few hundred
    bytes that a reader turning it into text expands to width**levels strings."""
    lines = ["apiVersion: v2", "name: bomb", "version: 0.1.0", "l0: &l0 [" + ", ".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    lines.append(f"{key}: [{{name: x, repository: 'https://charts.example.com', version: *l{levels - 1}}}]")
    return "\n".join(lines) + "\n"


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_an_alias_bomb_is_refused_by_its_count_as_go_yaml_refuses_it() -> None:
    with pytest.raises(tenant_yaml.Refused, match="document contains excessive aliasing") as refused:
        tenant_yaml.check(alias_bomb())
    assert refused.value.line > 4
    with pytest.raises(yaml.YAMLError, match="excessive aliasing"):
        goyaml.load(alias_bomb())  # the reader of manifests says the same


def test_a_merge_key_bomb_is_refused_too() -> None:
    lines = ["a: &a {k0: x, k1: x, k2: x, k3: x, k4: x, k5: x, k6: x, k7: x, k8: x}"]
    for level, name in enumerate("bcdefgh"):
        previous = "abcdefgh"[level]
        lines.append(f"{name}: &{name} {{<<: [" + ", ".join([f"*{previous}"] * 9) + "]}")
    with pytest.raises(tenant_yaml.Refused, match="excessive aliasing"):
        tenant_yaml.check("\n".join(lines))


def test_an_anchor_that_contains_itself_is_refused() -> None:
    with pytest.raises(tenant_yaml.Refused, match="the anchor &a contains itself") as refused:
        tenant_yaml.check("x: 1\na: &a [1, *a]\n")
    assert refused.value.line == 2


@pytest.mark.parametrize("levels", [tenant_yaml.MAX_DEPTH + 1, 5_000, 100_000])
def test_deep_nesting_is_named_with_its_line(levels: int) -> None:
    with pytest.raises(tenant_yaml.Refused, match=f"nested more than {tenant_yaml.MAX_DEPTH} levels deep") as refused:
        tenant_yaml.check(f"a: 1\nb: {deep(levels)}\n")
    assert refused.value.named("Chart.yaml").startswith("Chart.yaml:2: nested more than")


def test_what_is_within_the_bounds_passes() -> None:
    tenant_yaml.check(f"a: {deep(tenant_yaml.MAX_DEPTH - 1)}\n")  # the root mapping is a level
    tenant_yaml.check("base: &b {x: 1}\nuse: {<<: *b, y: 2}\nagain: *b\n")
    tenant_yaml.check("a: [\n")  # a syntax error is the caller's to say, in its words
    with pytest.raises(tenant_yaml.Refused, match="over the 1024 bytes"):
        tenant_yaml.check("a: " + "x" * 2000, limit=1024)


def test_real_charts_metadata_and_values_pass() -> None:
    folder = realcharts()
    if folder is None:
        pytest.skip("no shared/realcharts here")
    import tarfile

    checked = 0
    for archive in sorted(folder.glob("*.tgz"))[:40]:
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if (
                    member.isfile()
                    and member.name.count("/") == 1
                    and member.name.endswith(("Chart.yaml", "values.yaml"))
                ):
                    data = tar.extractfile(member)
                    assert data is not None
                    tenant_yaml.check(data.read().decode("utf-8"))
                    checked += 1
    assert checked > 10


MEASURED = """import resource, subprocess, sys, time
started = time.monotonic()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(done.returncode, time.monotonic() - started, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10)
print(done.stdout == "")
print(done.stderr, end="")
"""


def _git_chart(root: Path, chart_yaml: str) -> Path:
    app = root / "app"
    (app / "templates").mkdir(parents=True)
    (app / "Chart.yaml").write_text(chart_yaml)
    (app / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return app


@pytest.mark.parametrize(
    ("chart_yaml", "problem"),
    [
        (alias_bomb(9), ":7: document contains excessive aliasing"),
        (f"apiVersion: v2\nname: deep\nversion: 0.1.0\ndependencies: {deep(5_000)}\n", ":4: nested more than"),
    ],
    ids=["alias-bomb", "5000-levels"],
)
def test_init_refuses_a_chart_yaml_bomb_within_its_timeout_in_bounded_memory(
    helm: str, tmp_path: Path, chart_yaml: str, problem: str
) -> None:
    """`init --timeout 1` on a Git chart whose Chart.yaml is a few hundred bytes of aliases (9**9 strings
    once turned into text): one named error within ~3 s and under 512 MiB, measured by a parent of its own."""
    app = _git_chart(tmp_path / "repo", chart_yaml)
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "cmp", "init", str(app), "--repo-root", str(tmp_path / "repo"), "--timeout", "1"]
    completed = subprocess.run(
        [sys.executable, "-c", MEASURED, *argv],
        env=clean_env(env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    head, quiet, *stderr = completed.stdout.splitlines()
    status, seconds, peak = head.split()
    assert (int(status), quiet) == (1, "True"), stderr
    (line,) = stderr
    assert line.startswith(f"chartshare: error: {app / 'Chart.yaml'}{problem}"), line
    assert float(seconds) < 3 + 5, "within --timeout 1 and a few seconds (generous: a loaded machine)"
    assert int(peak) < 512 << 20


def test_check_reads_a_bombed_chart_yaml_within_bounds(helm: str, tmp_path: Path) -> None:
    """check's dependency pass reads the same Chart.yaml: it ends, and the app is a failed render."""
    repo = tmp_path / "repo"
    _git_chart(repo, alias_bomb(9))
    (repo / "argocd").mkdir()
    (repo / "argocd" / "app.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: bomb, namespace: argocd}\n"
        "spec:\n  source: {repoURL: https://git.example.com/r.git, path: app}\n"
        "  destination: {server: https://kubernetes.default.svc, namespace: x}\n"
    )
    env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    result = run_cli(["check", "argocd", "--format", "json"], env=env, cwd=repo)
    assert result.exit_code in (0, 1) and "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "internal error" not in result.stdout


DEEP_VALUE = "{a: " * 600 + "1" + "}" * 600  # past Python's stack, under libyaml's 1,000


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        (
            {
                "chartshare.yaml": "apiVersion: chartshare/v1\nkind: ChartShare\nrules:\n  - match: {kind: ConfigMap}\n"
                f"    patch: [{{op: add, path: /data, value: {DEEP_VALUE}}}]\n"
            },
            "chartshare: error: app/chartshare.yaml:5: nested more than",
        ),
        (
            {
                "chartshare.yaml": "apiVersion: chartshare/v1\nkind: ChartShare\npatches:\n  - path: p.yaml\n",
                "p.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n"
                + "".join(" " * level + "a:\n" for level in range(1, 600)),
            },
            "chartshare: error: app/chartshare.yaml:4: patches[0].path: app/p.yaml:",
        ),
        (
            {
                "chartshare.yaml": "apiVersion: chartshare/v1\nkind: ChartShare\npatches:\n  - patch: |\n"
                "      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: cm}\n"
                f"      data: {DEEP_VALUE}\n",
            },
            "chartshare: error: app/chartshare.yaml:4: patches[0]: the patch, line 4: nested more than",
        ),
    ],
    ids=["rule-patch-value", "patch-file", "inline-patch"],
)
def test_deep_chartshare_yaml_and_patches_are_named_never_an_internal_error(
    helm: str, tmp_path: Path, files: dict[str, str], problem: str
) -> None:
    app = _git_chart(tmp_path / "repo", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    for name, text in files.items():
        (app / name).write_text(text)
    result = run_cli(
        ["generate", str(app), "--repo-root", str(tmp_path / "repo"), "--app", "a"],
        env={"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(tmp_path / "cache")},
    )
    assert (result.exit_code, result.stdout) == (1, ""), result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(problem), line
    assert "nested more than" in line and "flatten it" in line
