"""Reading a Helm repository's index: the chart, exactly its version, the nearest versions when it is not there."""

from __future__ import annotations

import pytest

from cmp.errors import RemoteError
from cmp.model import RemoteChart
from cmp.remote.repository import archive_url, nearest, pick, semver_key, versions

INDEX = b"""apiVersion: v1
entries:
  cert-manager:
  - {version: v1.16.2, urls: [cert-manager-v1.16.2.tgz]}
  - {version: v1.16.1, urls: [cert-manager-v1.16.1.tgz]}
  - {version: v1.15.4, urls: [https://cdn.example.com/cert-manager-v1.15.4.tgz]}
  - {version: v1.17.0-rc.1, urls: [cert-manager-v1.17.0-rc.1.tgz]}
  - {version: v1.17.0, urls: [cert-manager-v1.17.0.tgz]}
  trust-manager:
  - {version: 0.12.0, urls: [trust-manager-0.12.0.tgz]}
"""
CHART = RemoteChart("https://charts.example.com/jetstack", "cert-manager", "v1.16.2")


def test_a_listed_version_is_picked_with_or_without_its_v() -> None:
    listed = versions(INDEX, "index.yaml", "cert-manager")
    assert pick(listed, "v1.16.1", "x")["urls"] == ["cert-manager-v1.16.1.tgz"]
    assert pick(listed, "1.16.1", "x")["urls"] == ["cert-manager-v1.16.1.tgz"]


def test_a_missing_version_names_the_nearest_listed_ones() -> None:
    listed = versions(INDEX, "index.yaml", "cert-manager")
    with pytest.raises(RemoteError, match=r"x has no version v1\.16\.3; the nearest listed: v1\.16\.1, v1\.16\.2, "):
        pick(listed, "v1.16.3", "x")


def test_semver_order_puts_a_pre_release_before_its_release() -> None:
    ordered = sorted(["v1.17.0", "v1.17.0-rc.1", "v1.16.2", "v1.17.0-rc.10", "v1.17.0-rc.2"], key=semver_key)
    assert ordered == ["v1.16.2", "v1.17.0-rc.1", "v1.17.0-rc.2", "v1.17.0-rc.10", "v1.17.0"]
    assert nearest("v9.0.0", ["v1.0.0", "v2.0.0", "v3.0.0", "v4.0.0", "v5.0.0"], 2) == ["v4.0.0", "v5.0.0"]
    assert nearest("v0.0.1", ["v1.0.0", "v2.0.0", "v3.0.0"], 2) == ["v1.0.0", "v2.0.0"]


def test_a_missing_chart_suggests_the_close_names() -> None:
    with pytest.raises(RemoteError, match=r"index.yaml lists no chart 'cert-manger'; did you mean cert-manager"):
        versions(INDEX, "index.yaml", "cert-manger")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>not found</html>", "has no `entries:`; it is not a Helm repository index"),
        (b"entries: [\n", r"is not valid YAML \(line 2\)"),
        (b"\xff\xfe", "is not UTF-8 text"),
    ],
)
def test_something_that_is_no_index_is_said_to_be_none(body: bytes, message: str) -> None:
    with pytest.raises(RemoteError, match=message):
        versions(body, "index.yaml", "cert-manager")


def test_archive_urls_resolve_against_the_repository_folder_as_helm_does() -> None:
    assert archive_url({"urls": ["a.tgz"]}, CHART, "i") == "https://charts.example.com/jetstack/a.tgz"
    assert archive_url({"urls": ["../b/a.tgz"]}, CHART, "i") == "https://charts.example.com/b/a.tgz"
    assert archive_url({"urls": ["https://cdn.example.com/a.tgz"]}, CHART, "i") == "https://cdn.example.com/a.tgz"
    with pytest.raises(RemoteError, match="not an http"):
        archive_url({"urls": ["file:///etc/passwd"]}, CHART, "i")
    with pytest.raises(RemoteError, match="lists no archive URL"):
        archive_url({"urls": []}, CHART, "i")
