"""The chart store: keyed by repository, name, version and pin; entries appear whole and read-only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from archives import good_members, tgz

from cmp.errors import RemoteError
from cmp.model import RemoteChart
from cmp.remote.archive import unpack
from cmp.remote.store import Store, remove

CHART = RemoteChart("https://charts.example.com/stable", "evil", "1.0.0")
PINNED = CHART._replace(digest="sha256:" + "a" * 64)


def _fill(scratch: Path) -> None:
    (scratch / "evil-1.0.0.tgz").write_bytes(tgz(good_members()))
    unpack(scratch / "evil-1.0.0.tgz", scratch / "chart", "evil.tgz")


def test_a_published_chart_is_found_again_and_only_under_its_own_key(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.lookup(CHART) is None
    folder = store.publish(CHART, _fill)
    assert store.lookup(CHART) == folder and (folder / "Chart.yaml").is_file()
    assert store.lookup(CHART._replace(repository="https://charts.example.com/stable/")) == folder
    for other in (PINNED, CHART._replace(version="1.0.1"), CHART._replace(repository="https://other.example.com")):
        assert store.lookup(other) is None
    assert store.entry(PINNED) != store.entry(CHART)


def test_a_published_chart_is_read_only_to_the_last_file(tmp_path: Path) -> None:
    folder = Store(tmp_path).publish(CHART, _fill)
    for path in [folder.parent, *folder.parent.rglob("*")]:
        assert stat.S_IMODE(path.stat().st_mode) & 0o222 == 0, path
    if os.geteuid() != 0:  # root writes anyway; the modes above are what protects everyone else
        with pytest.raises(PermissionError):
            (folder / "templates" / "new.yaml").write_text("x")


def test_a_failed_fill_leaves_nothing_behind(tmp_path: Path) -> None:
    def broken(scratch: Path) -> None:
        (scratch / "half").write_text("x")
        raise RemoteError("the download broke off")

    store = Store(tmp_path)
    with pytest.raises(RemoteError, match="broke off"):
        store.publish(CHART, broken)
    assert store.lookup(CHART) is None
    assert not store.entry(CHART).exists()
    assert [p for p in store.entry(CHART).parent.iterdir() if p.name.startswith(".partial-")] == []


def test_the_entry_another_process_published_first_wins(tmp_path: Path) -> None:
    store = Store(tmp_path)
    first = store.publish(CHART, _fill)

    def late(scratch: Path) -> None:
        _fill(scratch)
        (scratch / "chart" / "late.txt").write_text("mine")

    assert store.publish(CHART, late) == first
    assert not (first / "late.txt").exists()
    assert [p.name for p in store.entry(CHART).parent.iterdir() if p.name.startswith(".partial-")] == []


def test_a_link_in_place_of_an_entry_is_not_an_entry(tmp_path: Path) -> None:
    store = Store(tmp_path)
    elsewhere = Store(tmp_path / "elsewhere").publish(CHART, _fill)
    store.entry(CHART).parent.mkdir(parents=True)
    store.entry(CHART).symlink_to(elsewhere.parent)
    assert store.lookup(CHART) is None


def test_remove_deletes_a_read_only_entry(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.publish(CHART, _fill)
    remove(store.entry(CHART))
    assert not store.entry(CHART).exists()
