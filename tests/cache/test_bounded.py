"""The cache folder's one budget: disk use (blocks, not bytes) and entries, a running total instead of a
scan per write, the render cache and the chart store under one cap, and an entry in use never evicted."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from cmp.cache import bounded
from cmp.cache.store import Entry, Store
from cmp.model import RemoteChart
from cmp.remote.store import Store as ChartStore


def _renders(tmp_path: Path, mb: int) -> Store:
    return Store.from_env({"CHARTSHARE_CACHE": str(tmp_path / "cache"), "CHARTSHARE_CACHE_MB": str(mb)})


def _key(number: int) -> str:
    return hashlib.sha256(b"%d" % number).hexdigest()


def _disk_use(folder: Path) -> int:
    return sum(bounded.disk_use(path.lstat()) for path in folder.rglob("*"))


def test_many_small_entries_count_by_the_blocks_they_take(tmp_path: Path) -> None:
    """1,200 entries of 100 bytes are 0.1 MB of bytes but, at a block each, 5 MB of disk: a 1 MiB cap keeps
    what fits on disk."""
    store = _renders(tmp_path, 1)
    for number in range(1200):
        store.put(_key(number), Entry(b"x" * 100, ()))
    used = _disk_use(tmp_path / "cache")
    assert used <= 1 << 20
    assert len(os.listdir(store.folder)) < 300
    assert store.get(_key(1199)) is not None  # the newest stay
    assert store.notices == []


def test_a_write_charges_a_running_total_instead_of_counting_everything(tmp_path: Path) -> None:
    store = _renders(tmp_path, 64)
    store.put(_key(0), Entry(b"x", ()))  # no total yet: everything counted once
    foreign = Path(store.folder).parent / "stray"
    foreign.write_bytes(b"y" * 100_000)  # nobody charged it
    store.put(_key(1), Entry(b"x", ()))
    usage = Path(store.folder).parent / bounded.USAGE
    total, entries, writes = map(int, usage.read_text().split())
    assert total < 100_000 and entries == 2 and writes == 1  # the write did not look at the folder
    for number in range(2, bounded.FULL_COUNT_EVERY + 2):
        store.put(_key(number), Entry(b"x", ()))
    total, _, _ = map(int, usage.read_text().split())
    assert total >= 100_000  # the occasional full count found it


def _publish(store: ChartStore, name: str, size: int) -> Path:
    def fill(scratch: Path) -> None:
        (scratch / "chart").mkdir()
        (scratch / "chart" / "Chart.yaml").write_text(f"name: {name}\n")
        (scratch / "chart" / "big.bin").write_bytes(os.urandom(size))

    published = store.publish(RemoteChart("https://charts.example.com", name, "1.0.0"), fill)
    bounded.let_go()  # the publisher held it for its render; this test's process renders nothing
    return published


def test_the_chart_store_and_the_render_cache_share_one_cap(tmp_path: Path) -> None:
    charts = ChartStore(tmp_path / "cache" / "charts", 1 << 20)
    old = _publish(charts, "old", 400_000)
    os.utime(old.parent, (time.time() - 600, time.time() - 600))
    renders = _renders(tmp_path, 1)
    renders.put(_key(0), Entry(b"x" * 400_000, ()))
    renders.put(_key(1), Entry(b"x" * 400_000, ()))  # past the cap: the oldest used, the old chart, goes
    assert not old.exists()
    assert _disk_use(tmp_path / "cache") <= 1 << 20


HOLDER = """
import sys, time
from cmp.cache import bounded
assert bounded.hold(sys.argv[1])
print("held", flush=True)
time.sleep(30)
"""


def test_a_chart_in_use_is_never_evicted(tmp_path: Path) -> None:
    charts = ChartStore(tmp_path / "cache" / "charts", 1 << 20)
    used = _publish(charts, "used", 400_000)
    spare = _publish(charts, "spare", 400_000)
    for age, chart in ((900, used), (600, spare)):
        os.utime(chart.parent, (time.time() - age, time.time() - age))
    reader = subprocess.Popen([sys.executable, "-c", HOLDER, str(used.parent)], stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "held\n"
        _publish(charts, "new", 400_000)  # past the cap: the oldest is in use, so the next oldest goes
        assert used.exists() and not spare.exists()
    finally:
        reader.kill()
        reader.wait()
    assert charts.lookup(RemoteChart("https://charts.example.com", "used", "1.0.0")) == used
