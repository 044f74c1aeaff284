"""A Helm chart repository over HTTP(S): its index.yaml, one pinned version of one chart, that version's .tgz.

The index is read as go-yaml reads it (helm's own index is written by Go); the version must be listed
exactly (a leading `v` on either side aside, as helm's version match allows), and a version that is not
is reported with the nearest ones the index does list. The archive URL is resolved against the repository
as helm resolves it (a relative URL is relative to the repository folder), and gets the repository's
credentials when it is on the repository's own host, as helm gives them.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import yaml

from cmp import goyaml
from cmp.errors import RemoteError
from cmp.model import RemoteChart
from cmp.remote import web
from cmp.remote.archive import MAX_ARCHIVE_BYTES
from cmp.remote.credentials import Credentials
from cmp.remote.deadline import Deadline

MAX_INDEX_BYTES = 64 << 20  # the largest public indexes (every version of hundreds of charts) are tens of MiB
NEAREST = 4
_SEMVER = re.compile(r"^v?([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def download(chart: RemoteChart, target: Path, secrets: Credentials, deadline: Deadline) -> None:
    """Write the chart's .tgz to `target`; RemoteError naming the URL and the cause otherwise."""
    index_url = chart.repository.rstrip("/") + "/index.yaml"
    listed = versions(web.get(index_url, secrets, deadline, MAX_INDEX_BYTES), index_url, chart.name)
    url = archive_url(pick(listed, chart.version, f"{index_url}: chart {chart.name}"), chart, index_url)
    same_host = web.origin(url) == web.origin(index_url)  # helm sends the repository's credentials there
    entry = secrets.find(index_url) if same_host and not secrets.find(url) else None
    target.write_bytes(web.get(url, secrets, deadline, MAX_ARCHIVE_BYTES, entry))


def versions(body: bytes, index_url: str, name: str) -> list[dict[str, Any]]:
    """The index's entries for chart `name`."""
    try:
        index = goyaml.load(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise RemoteError(f"{index_url} is not UTF-8 text; is the repository URL a Helm repository?") from None
    except (yaml.YAMLError, ValueError) as error:
        mark = getattr(error, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        raise RemoteError(f"{index_url} is not valid YAML{line}; is the repository URL a Helm repository?") from None
    entries = index.get("entries") if isinstance(index, dict) else None
    if not isinstance(entries, dict):
        raise RemoteError(f"{index_url} has no `entries:`; it is not a Helm repository index")
    found = entries.get(name)
    if not isinstance(found, list) or not found:
        names = [str(key) for key in entries]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f" (it lists {len(names)} charts)"
        raise RemoteError(f"{index_url} lists no chart {name!r}{hint}")
    return [item for item in found if isinstance(item, dict)]


def pick(listed: Sequence[dict[str, Any]], version: str, what: str) -> dict[str, Any]:
    """The entry of exactly `version`; a missing one is reported with the nearest versions listed."""
    by_version = {item["version"]: item for item in listed if isinstance(item.get("version"), str)}
    if version in by_version:
        return by_version[version]
    bare = version.removeprefix("v")
    for listed_version, item in by_version.items():
        if listed_version.removeprefix("v") == bare:
            return item
    near = nearest(version, list(by_version))
    shown = f"; the nearest listed: {', '.join(near)}" if near else "; it lists no version"
    raise RemoteError(f"{what} has no version {version}{shown}")


def nearest(wanted: str, available: Sequence[str], count: int = NEAREST) -> list[str]:
    """The `count` versions closest to `wanted` in SemVer order (the newest last)."""
    ordered = sorted((key, version) for version in available if (key := semver_key(version)) is not None)
    wanted_key = semver_key(wanted)
    if not ordered or wanted_key is None:
        return sorted(available)[-count:]
    at = bisect.bisect_left([key for key, _ in ordered], wanted_key)
    start = max(0, min(at - count // 2, len(ordered) - count))
    return [version for _, version in ordered[start : start + count]]


def semver_key(version: str) -> tuple[Any, ...] | None:
    """SemVer 2 precedence: a pre-release sorts before its release, numeric identifiers numerically."""
    found = _SEMVER.match(version)
    if found is None:
        return None
    major, minor, patch, pre = found.groups()
    if pre is None:
        return (int(major), int(minor), int(patch), 1, ())
    identifiers = tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in pre.split("."))
    return (int(major), int(minor), int(patch), 0, identifiers)


def archive_url(entry: dict[str, Any], chart: RemoteChart, index_url: str) -> str:
    """The entry's first URL, relative ones resolved against the repository folder, as helm does."""
    urls = entry.get("urls")
    if not isinstance(urls, list) or not urls or not isinstance(urls[0], str) or not urls[0]:
        raise RemoteError(f"{index_url}: {chart.name} {chart.version} lists no archive URL (urls:)")
    url = urljoin(chart.repository.rstrip("/") + "/", urls[0])
    if urlsplit(url).scheme not in ("http", "https"):
        raise RemoteError(f"{index_url}: {chart.name} {chart.version} lists the archive {urls[0]}, not an http(s) URL")
    return url
