"""The render cache's store, on real files and real processes: entries round-trip, an entry that cannot be
trusted is a miss with a notice, writers never tear an entry, and a cache that cannot be used never fails."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmp.cache import bounded
from cmp.cache.store import DEFAULT_MB, Entry, Store
from conftest import ROOT

KEY = hashlib.sha256(b"one render").hexdigest()
OTHER_KEY = hashlib.sha256(b"another render").hexdigest()
ENTRY = Entry(b"apiVersion: v1\nkind: ConfigMap\n", ("app: 1 rendered, 1 emitted", "  naïve line", ""))
OTHER_UID = 999


def _store(tmp_path: Path, **env: str) -> Store:
    return Store.from_env({"CHARTSHARE_CACHE": str(tmp_path / "cache"), **env})


def _entry_file(store: Store, key: str = KEY) -> Path:
    return Path(store.folder) / key


def _as_other_user() -> list[str]:
    """The argv prefix that runs a command as uid 999, where root may become it; skips otherwise."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("another user's files need root (and setpriv) to be made")
    return ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups"]


# --- round trip ----------------------------------------------------------------------------------------------


def test_an_entry_reads_back_as_written(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(KEY, ENTRY)
    assert _store(tmp_path).get(KEY) == ENTRY
    assert store.notices == []


def test_an_empty_output_with_no_lines_reads_back_as_written(tmp_path: Path) -> None:
    _store(tmp_path).put(KEY, Entry(b"", ()))
    assert _store(tmp_path).get(KEY) == Entry(b"", ())


def test_a_missing_entry_is_a_quiet_miss(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.get(KEY) is None
    assert store.notices == []


def test_an_alias_reads_as_the_entry_it_names(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(KEY, ENTRY)
    store.put_alias(OTHER_KEY, KEY)
    assert _store(tmp_path).get(OTHER_KEY) == ENTRY
    assert _entry_file(store, OTHER_KEY).stat().st_size < 128  # the output is kept once
    assert store.notices == []


def test_an_alias_of_an_entry_gone_is_a_quiet_miss(tmp_path: Path) -> None:
    """As after the budget evicted the entry (the next render writes both again)."""
    store = _store(tmp_path)
    store.put_alias(OTHER_KEY, KEY)
    assert store.get(OTHER_KEY) is None
    assert store.notices == []


def test_an_alias_of_an_alias_is_ignored(tmp_path: Path) -> None:
    third = hashlib.sha256(b"a third render").hexdigest()
    store = _store(tmp_path)
    store.put(third, ENTRY)
    store.put_alias(KEY, third)
    store.put_alias(OTHER_KEY, KEY)
    assert store.get(OTHER_KEY) is None
    assert "an alias of an alias" in store.notices[0]


def test_an_alias_moved_to_another_key_or_torn_is_ignored(tmp_path: Path) -> None:
    third = hashlib.sha256(b"a third render").hexdigest()
    store = _store(tmp_path)
    store.put(KEY, ENTRY)
    store.put_alias(OTHER_KEY, KEY)
    shutil.copy(_entry_file(store, OTHER_KEY), _entry_file(store, third))
    assert store.get(third) is None
    alias = _entry_file(store, OTHER_KEY)
    alias.write_bytes(alias.read_bytes()[:-10])
    assert store.get(OTHER_KEY) is None
    assert ["truncated or corrupt" in notice for notice in store.notices] == [True, True]


def test_the_cache_folder_is_made_private(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(KEY, ENTRY)
    assert stat.S_IMODE(os.stat(store.folder).st_mode) == 0o700
    assert stat.S_IMODE(_entry_file(store).stat().st_mode) == 0o600


def test_a_cache_folder_of_ours_open_to_others_is_closed_before_use(tmp_path: Path) -> None:
    store = _store(tmp_path)
    os.makedirs(store.folder, mode=0o755)
    os.chmod(store.folder, 0o755)
    store.put(KEY, ENTRY)
    assert stat.S_IMODE(os.stat(store.folder).st_mode) == 0o700


def test_the_folder_defaults_to_xdg_cache_home_then_home(tmp_path: Path) -> None:
    assert Store.from_env({"XDG_CACHE_HOME": "/x", "HOME": "/h"}).folder == "/x/chartshare/renders"
    assert Store.from_env({"HOME": "/h"}).folder == "/h/.cache/chartshare/renders"
    assert Store.from_env({"CHARTSHARE_CACHE": "/tmp/chartshare", "HOME": "/h"}).folder == "/tmp/chartshare/renders"


def test_keys_are_digests_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="64 lower-case hex digits"):
        _store(tmp_path).get("../../etc/passwd")


# --- entries that cannot be trusted ---------------------------------------------------------------------------


def test_a_corrupt_entry_is_ignored_and_replaced_by_the_next_write(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(KEY, ENTRY)
    path = _entry_file(store)
    data = bytearray(path.read_bytes())
    data[-8] ^= 0x20
    path.write_bytes(bytes(data))
    assert store.get(KEY) is None
    assert store.notices == [f"notice: render cache: ignored entry {KEY[:12]} in {store.folder} (truncated or corrupt)"
                             "; rendering afresh"]  # fmt: skip
    store.put(KEY, ENTRY)
    assert _store(tmp_path).get(KEY) == ENTRY


def test_a_truncated_entry_is_ignored(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(KEY, Entry(b"x" * 10_000, ("line",)))
    path = _entry_file(store)
    path.write_bytes(path.read_bytes()[:5_000])
    assert store.get(KEY) is None
    assert "truncated or corrupt" in store.notices[0]


def test_an_entry_moved_to_another_key_is_not_that_keys(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(KEY, ENTRY)
    shutil.copy(_entry_file(store), _entry_file(store, OTHER_KEY))
    assert store.get(OTHER_KEY) is None


def test_a_symlinked_entry_is_ignored(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(OTHER_KEY, ENTRY)
    _entry_file(store).symlink_to(_entry_file(store, OTHER_KEY))
    assert store.get(KEY) is None
    assert "(a symlink)" in store.notices[0]


def test_an_entry_that_is_not_a_file_is_ignored(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(OTHER_KEY, ENTRY)
    os.mkfifo(_entry_file(store))
    assert store.get(KEY) is None
    assert "(not a regular file)" in store.notices[0]


def test_an_entry_owned_by_another_user_is_ignored(tmp_path: Path) -> None:
    _as_other_user()
    store = _store(tmp_path)
    store.put(KEY, ENTRY)
    os.chown(_entry_file(store), OTHER_UID, OTHER_UID)
    assert store.get(KEY) is None
    assert f"owned by uid {OTHER_UID}" in store.notices[0]


def test_a_symlinked_cache_folder_is_not_used(tmp_path: Path) -> None:
    elsewhere = _store(tmp_path / "elsewhere")
    elsewhere.put(KEY, ENTRY)
    store = _store(tmp_path)
    Path(store.folder).parent.mkdir(parents=True)
    Path(store.folder).symlink_to(elsewhere.folder)
    assert store.get(KEY) is None
    store.put(KEY, ENTRY)
    assert store.notices == [f"notice: render cache: {store.folder} is a symlink; rendering without the cache"]
    assert os.listdir(elsewhere.folder) == [KEY]


def test_a_cache_folder_of_another_user_is_not_used(tmp_path: Path) -> None:
    _as_other_user()
    store = _store(tmp_path)
    store.put(KEY, ENTRY)
    os.chown(store.folder, OTHER_UID, OTHER_UID)
    assert store.get(KEY) is None
    assert f"belongs to uid {OTHER_UID}, not to this user" in store.notices[0]


# --- writers --------------------------------------------------------------------------------------------------

_WRITER = """
import sys
from cmp.cache.store import Entry, Store
store = Store.from_env({"CHARTSHARE_CACHE": sys.argv[1]})
entry = Entry(sys.argv[2].encode() * int(sys.argv[3]), (sys.argv[2],))
for _ in range(int(sys.argv[4])):
    store.put(sys.argv[5], entry)
sys.stdout.write("\\n".join(store.notices))
"""


def _writer(base: Path, fill: str, times: int, key: str = KEY) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(base), fill, "200000", str(times), key],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_concurrent_writers_of_one_key_never_tear_an_entry(tmp_path: Path) -> None:
    base = tmp_path / "cache"
    writers = [_writer(base, "a", 150), _writer(base, "b", 150)]
    wanted = {Entry(fill.encode() * 200000, (fill,)) for fill in "ab"}
    reader, seen = Store.from_env({"CHARTSHARE_CACHE": str(base)}), set()
    while any(writer.poll() is None for writer in writers):
        entry = reader.get(KEY)
        if entry is not None:
            assert entry in wanted
            seen.add(entry.lines)
    assert [writer.communicate()[0] for writer in writers] == ["", ""]
    assert reader.notices == []
    assert reader.get(KEY) in wanted
    assert seen
    assert os.listdir(reader.folder) == [KEY]


def test_an_unwritable_cache_folder_gives_a_notice_not_an_error(tmp_path: Path) -> None:
    """As root, permissions bind nobody: the writer is then a real process of another user."""
    base = tmp_path / "cache"
    (base / "renders").mkdir(parents=True)
    prefix: list[str] = []
    if os.geteuid() == 0:
        prefix = _as_other_user()
        tmp_path.chmod(0o755)
        shutil.chown(base, OTHER_UID, OTHER_UID)
        shutil.chown(base / "renders", OTHER_UID, OTHER_UID)
    (base / "renders").chmod(0o500)
    python = shutil.which("python3", path="/usr/bin") if prefix else sys.executable
    done = subprocess.run(
        [*prefix, python or sys.executable, "-c", _WRITER, str(base), "a", "10", "1", KEY],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 and prefix and "No module named" in done.stderr:
        pytest.skip(f"uid {OTHER_UID} cannot read chartshare's source here")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"notice: render cache: {base / 'renders'} cannot be written (Permission denied); this render was not kept"
    )
    assert os.listdir(base / "renders") == []


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs: a disk that really fills up (needs the right to mount)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:  # fmt: skip
        pytest.skip("a full disk needs the right to mount a tmpfs")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_gives_a_notice_not_an_error(tiny_disk: Path) -> None:
    store = Store.from_env({"CHARTSHARE_CACHE": str(tiny_disk)})
    store.put(KEY, Entry(b"x" * (1 << 20), ()))
    assert store.notices == [f"notice: render cache: {store.folder} is full; this render was not kept"]
    assert os.listdir(store.folder) == []


# --- the cap --------------------------------------------------------------------------------------------------


def _aged(store: Store, key: str, seconds_ago: int) -> None:
    past = time.time() - seconds_ago
    os.utime(_entry_file(store, key), (past, past))


def test_a_full_cache_drops_the_oldest_used_entries_first(tmp_path: Path) -> None:
    store = _store(tmp_path, CHARTSHARE_CACHE_MB="1")
    keys = [hashlib.sha256(b"%d" % number).hexdigest() for number in range(4)]
    for age, key in zip((400, 300, 200), keys, strict=False):
        store.put(key, Entry(b"x" * 300_000, ()))
        _aged(store, key, age)
    assert store.get(keys[0]) is not None  # a use: now the newest of the three
    store.put(keys[3], Entry(b"x" * 300_000, ()))
    assert sorted(os.listdir(store.folder)) == sorted([keys[0], keys[2], keys[3]])
    assert store.notices == []


def test_a_render_larger_than_the_cap_is_not_kept(tmp_path: Path) -> None:
    store = _store(tmp_path, CHARTSHARE_CACHE_MB="1")
    store.put(OTHER_KEY, ENTRY)
    store.put(KEY, Entry(b"x" * (2 << 20), ()))
    assert store.notices == [
        "notice: render cache: this render (2.0 MiB) is larger than the cache's cap (1 MiB, CHARTSHARE_CACHE_MB) "
        "and was not kept"
    ]
    assert os.listdir(store.folder) == [OTHER_KEY]


def test_a_dead_writers_temporary_file_is_cleared(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(OTHER_KEY, ENTRY)
    dead = Path(store.folder) / f".{KEY}.1234.abcdef.tmp"
    dead.write_bytes(b"half an entry")
    os.utime(dead, (time.time() - 7200, time.time() - 7200))
    (Path(store.folder).parent / bounded.USAGE).unlink()  # no running total: the next write counts everything
    store.put(KEY, ENTRY)
    assert sorted(os.listdir(store.folder)) == sorted([KEY, OTHER_KEY])


def test_the_cap_is_read_from_the_environment(tmp_path: Path) -> None:
    assert _store(tmp_path).cap == DEFAULT_MB << 20
    assert _store(tmp_path, CHARTSHARE_CACHE_MB="64").cap == 64 << 20
    bad = _store(tmp_path, CHARTSHARE_CACHE_MB="lots")
    assert bad.cap == DEFAULT_MB << 20
    assert bad.notices == [f"notice: CHARTSHARE_CACHE_MB='lots' is not a whole number of MiB; the cap is {DEFAULT_MB}"]


# --- on and off -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "on"), [("", True), ("on", True), ("off", False), ("OFF", False)])
def test_the_switch_turns_the_cache_on_and_off(tmp_path: Path, value: str, on: bool) -> None:
    store = _store(tmp_path, CHARTSHARE_RENDER_CACHE=value)
    assert store.on is on
    assert store.notices == []


def test_an_unknown_switch_value_turns_the_cache_off_with_a_notice(tmp_path: Path) -> None:
    store = _store(tmp_path, CHARTSHARE_RENDER_CACHE="disabled")
    assert not store.on
    assert store.notices == [
        "notice: CHARTSHARE_RENDER_CACHE='disabled' is neither on nor off; rendering without the cache"
    ]


def test_a_cache_turned_off_neither_reads_nor_keeps(tmp_path: Path) -> None:
    _store(tmp_path).put(KEY, ENTRY)
    off = _store(tmp_path, CHARTSHARE_RENDER_CACHE="off")
    assert off.get(KEY) is None
    off.put(OTHER_KEY, ENTRY)
    assert os.listdir(off.folder) == [KEY]


def test_the_entry_just_written_survives_its_own_eviction(tmp_path: Path) -> None:
    """Even when the others look newer (a clock set back, timestamps one tick apart)."""
    store = _store(tmp_path, CHARTSHARE_CACHE_MB="1")
    store.put(OTHER_KEY, Entry(b"x" * 600_000, ()))
    _aged(store, OTHER_KEY, -3600)
    store.put(KEY, Entry(b"y" * 600_000, ()))
    assert os.listdir(store.folder) == [KEY]
