"""Reading a packed chart: what helm loads comes out file by file; every bomb and broken archive stops at
its first bound, named, within the budget and in bounded memory."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import time

import pytest
from archives import bomb, good_members, hostile, member, tgz

from cmp import packed
from conftest import ROOT


def _files(data: bytes, seconds: float = 30) -> list[tuple[str, int]]:
    return [(name, len(content)) for name, content in packed.chart_files(io.BytesIO(data), _budget(seconds))]


def _budget(seconds: float) -> packed.Budget:
    return packed.Budget(time.monotonic() + seconds)


def _refusal(data: bytes) -> str:
    with pytest.raises(packed.Unreadable) as refused:
        _files(data)
    return str(refused.value)


def test_a_chart_comes_out_as_helm_names_its_files_and_nested_packed_charts_in_their_place() -> None:
    inner = tgz(good_members("inner"))
    outer = tgz([*good_members(), member("evil/charts/inner-1.0.0.tgz", inner), member("evil/files/data.tgz", inner)])
    assert _files(outer) == [
        ("Chart.yaml", 41),
        ("templates/configmap.yaml", 74),
        ("charts/inner-1.0.0.tgz/Chart.yaml", 41),
        ("charts/inner-1.0.0.tgz/templates/configmap.yaml", 74),
        ("files/data.tgz", len(inner)),  # a .tgz outside charts/ is data, as helm reads it
    ]


REFUSALS = {
    "big-file": "member 'evil/files/big.bin' is 5.0 MiB, over the 5 MiB helm loads",
    "too-large": "it unpacks to more than 100 MiB, more than helm loads",
    "too-many": "it holds more than 10000 files and folders",
    "not-gzip": "not a gzip-compressed tar (Not a gzipped file",
    "truncated": "not a gzip-compressed tar (Compressed file ended before the end-of-stream marker",
    "not-tar": "not a gzip-compressed tar (invalid header)",
}


@pytest.mark.parametrize("kind", sorted(REFUSALS))
def test_an_archive_past_helm_s_bounds_or_broken_is_unreadable_with_the_reason(kind: str) -> None:
    assert _refusal(hostile(kind)).startswith(REFUSALS[kind])


def test_a_bomb_stops_at_its_first_file_s_header() -> None:
    assert _refusal(bomb()) == "member 'sub/templates/z0.yaml' is 16.0 MiB, over the 5 MiB helm loads"


def test_a_header_longer_than_go_s_tar_reader_allows_is_never_held_whole() -> None:
    info, data = member("evil/a.yaml", b"x")
    info.pax_headers = {"comment": "x" * (2 << 20)}
    assert _refusal(tgz([*good_members(), (info, data)], level=9)) == (
        "a header is longer than the 1 MiB Go's tar reader allows"
    )


def test_packed_charts_nest_at_most_max_depth_deep() -> None:
    data = tgz(good_members("c0"))
    for depth in range(1, packed.MAX_DEPTH + 2):
        data = tgz([*good_members(f"c{depth}"), member(f"c{depth}/charts/x.tgz", data)])
    assert _refusal(data).endswith(f"charts/x.tgz is a packed chart more than {packed.MAX_DEPTH} deep")


def test_a_chart_s_packed_charts_share_one_budget_of_bytes() -> None:
    """Each of three archives is within helm's 100 MiB; together they are past the budget given."""
    one = tgz([*good_members("s"), *(member(f"s/files/{n}.bin", bytes(4 << 20)) for n in range(10))], level=1)
    chart = tgz([*good_members(), *(member(f"evil/charts/s{n}.tgz", one) for n in range(3))], level=1)
    budget = packed.Budget(time.monotonic() + 30, size=100 << 20)
    with pytest.raises(packed.Unreadable, match="packed charts unpack to more than 100 MiB"):
        list(packed.chart_files(io.BytesIO(chart), budget))


def test_the_deadline_stops_the_reading() -> None:
    many = tgz([*good_members(), *(member(f"evil/files/{n}.txt", b"x") for n in range(50))])
    assert _refusal_within(many, seconds=-1) == "reading it took longer than its share of the deadline"


def _refusal_within(data: bytes, seconds: float) -> str:
    with pytest.raises(packed.Unreadable) as refused:
        _files(data, seconds)
    return str(refused.value)


def test_folders_by_the_thousand_each_get_their_header_s_allowance() -> None:
    folders = [member(f"evil/d{n}/", kind=tarfile.DIRTYPE) for n in range(5000)]
    assert _files(tgz([*good_members(), *folders])) == [("Chart.yaml", 41), ("templates/configmap.yaml", 74)]


READ_THE_BOMB = """import io, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
from archives import bomb
from cmp import packed
data = bomb(files=64, size=4 << 20)  # each file within helm's 5 MiB: the archive's total is the bound
try:
    for name, content in packed.chart_files(io.BytesIO(data), packed.Budget(time.monotonic() + 60)):
        pass  # each file let go as the next is read
except packed.Unreadable as error:
    print(error)
status = open("/proc/self/status").read()  # this program's own peak (getrusage's counts its parent's at fork)
print(int(status.split("VmHWM:")[1].split()[0]) << 10)
"""


def test_reading_files_within_helm_s_bounds_up_to_the_archive_s_bound_holds_one_at_a_time() -> None:
    """64 files of 4 MiB: 100 MiB are read (one file at a time) before the archive's bound; the process's
    peak is a few files, not the archive."""
    done = subprocess.run(
        [sys.executable, "-c", READ_THE_BOMB, str(ROOT)], capture_output=True, text=True, check=True, timeout=120
    )
    reason, peak = done.stdout.splitlines()
    assert reason == "it unpacks to more than 100 MiB, more than helm loads"
    assert int(peak) < 128 << 20  # generous: Python itself and one or two files
