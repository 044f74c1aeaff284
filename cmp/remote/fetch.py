"""A remote chart made present in the chart store: found there, or downloaded, verified, unpacked, completed.

A hit costs one stat (and, with a repositories file, reading it: the entry this request's AppProject may
use names the entry of the store it may be served). A miss downloads the .tgz (a Helm repository over HTTP(S),
or `helm pull` from an OCI registry), checks the pinned digest, unpacks it with every member checked,
builds the chart's own missing dependencies into the folder, and publishes the entry read-only.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from cmp.errors import ChartShareError, RemoteError
from cmp.model import RemoteChart
from cmp.remote import oci, repository
from cmp.remote.archive import unpack
from cmp.remote.deadline import Deadline
from cmp.remote.dependencies import Build, ensure
from cmp.remote.store import CHART_FOLDER, Store, source_url


class Fetcher(NamedTuple):
    """Where to keep charts and what a download may use: helm (for OCI), the budget, the environment."""

    store: Store
    helm: str
    deadline: Deadline
    env: Mapping[str, str]


class Fetched(NamedTuple):
    folder: Path  # the chart folder helm renders
    lines: list[str]  # what happened, for stderr


def fetch(chart: RemoteChart, how: Fetcher) -> Fetched:
    """The chart's folder in the store, downloading it on a miss; the chart's missing dependencies are built
    into a fresh folder (its own root: a `file://` one must lie inside it) before it is published."""
    found = how.store.lookup(chart)
    if found is not None:
        return Fetched(found, [f"{chart.label}: from the cache"])
    lines: list[str] = []

    def fill(scratch: Path) -> None:
        archive = scratch / f"{chart.name}-{chart.version}.tgz"
        secrets = how.store.credentials()  # the same entries the store's key was chosen from
        try:
            if chart.oci:
                oci.download(chart, archive, secrets, how.deadline, helm=how.helm, env=how.env)
            else:
                repository.download(chart, archive, secrets, how.deadline)
        except ChartShareError as error:
            withheld = secrets.withheld(source_url(chart))
            if not withheld or withheld in str(error):
                raise
            raise type(error)(f"{error}; {withheld}") from None
        digest = digest_of(archive)
        if chart.digest and digest != chart.digest:
            raise RemoteError(
                f"the downloaded .tgz has digest {digest}, but chart.digest pins {chart.digest}; "
                "if the new archive is the one to trust, pin its digest"
            )
        until = time.monotonic() + how.deadline.left("unpacking the downloaded .tgz")
        folder = unpack(archive, scratch / CHART_FOLDER, "the downloaded .tgz", until)
        lines.append(f"{chart.label}: downloaded, {digest}{'' if chart.digest else ' (pin it as chart.digest)'}")
        lines.extend(ensure(Build(folder, folder, how.helm, how.deadline, how.env, how.store)))

    try:
        return Fetched(how.store.publish(chart, fill), lines)
    except ChartShareError as error:
        raise type(error)(f"{chart.label}: {error}") from None


def digest_of(archive: Path) -> str:
    """`sha256:<hex>` of a file, as chart.digest writes it."""
    return "sha256:" + hashlib.sha256(archive.read_bytes()).hexdigest()
