"""Unpacking a chart archive: what helm packages comes out as it went in; every hostile member is refused."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from archives import good_members, hostile, member, tgz

from cmp.errors import RemoteError
from cmp.remote.archive import unpack
from conftest import ROOT

# The real charts beside the repository (or a worktree of it), or where CHARTSHARE_REALCHARTS says.
_PLACES = [Path(os.environ["CHARTSHARE_REALCHARTS"])] if os.environ.get("CHARTSHARE_REALCHARTS") else []
_PLACES += [place.parent / "shared" / "realcharts" for place in (ROOT, *ROOT.parents)]
REALCHARTS = next((place for place in _PLACES if (place / "index.yaml").is_file()), None)
INDEX = yaml.safe_load((REALCHARTS / "index.yaml").read_text())["charts"] if REALCHARTS else []

REFUSALS = {
    "absolute": r"member '/etc/evil.yaml' is an absolute path",
    "dotdot": r"member 'evil/../../outside.yaml' steps out of its folder with '..'",
    "symlink": r"member 'evil/templates/secret.yaml' is a symbolic link \(to '/etc/passwd'\)",
    "hardlink": r"member 'evil/values.yaml' is a hard link \(to 'evil/Chart.yaml'\)",
    "device": r"member 'evil/tty' is a character device",
    "fifo": r"member 'evil/pipe' is a FIFO",
    "big-file": r"member 'evil/files/big.bin' is 5.0 MiB, over the 5 MiB helm loads",
    "too-large": r"it unpacks to more than 100 MiB",
    "too-many": r"it holds more than 10000 files and folders",
    "two-folders": r"member 'other/x.yaml' is outside its one folder 'evil'",
    "top-level-file": r"member 'Chart.yaml' lies outside the chart's folder",
    "file-and-folder": r"member 'evil/Chart.yaml/x.yaml' is both a file and a folder",
    "no-chart-yaml": r"holds no Chart.yaml in its chart folder",
    "not-gzip": r"is not a chart archive \(a .tgz\): it starts with '<html><body>Not Found</body>",
    "truncated": r"is not a valid gzip-compressed tar",
    "not-tar": r"is not a valid gzip-compressed tar",
}


def _archive(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "chart.tgz"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", sorted(REFUSALS))
def test_a_hostile_or_broken_archive_is_refused_with_the_member_named(kind: str, tmp_path: Path) -> None:
    with pytest.raises(RemoteError, match=REFUSALS[kind]):
        unpack(_archive(tmp_path, hostile(kind)), tmp_path / "out", "evil.tgz")
    assert not (tmp_path / "etc").exists() and not (tmp_path / "outside.yaml").exists()


def test_nothing_is_written_when_any_member_is_refused(tmp_path: Path) -> None:
    members = [*good_members(), member("evil/a", kind=tarfile.SYMTYPE, link="/tmp"), member("evil/a/b.yaml", b"x")]
    with pytest.raises(RemoteError, match="symbolic link"):
        unpack(_archive(tmp_path, tgz(members)), tmp_path / "out", "evil.tgz")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_file_written_twice_keeps_its_later_copy_as_helm_reads_it(tmp_path: Path) -> None:
    members = [*good_members(), member("evil/values.yaml", b"a: 1\n"), member("evil/values.yaml", b"a: 2\n")]
    folder = unpack(_archive(tmp_path, tgz(members)), tmp_path / "out", "evil.tgz")
    assert (folder / "values.yaml").read_text() == "a: 2\n"


def test_a_good_archive_unpacks_without_its_top_folder(tmp_path: Path) -> None:
    folder = unpack(_archive(tmp_path, tgz(good_members())), tmp_path / "out", "evil.tgz")
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == [
        "Chart.yaml",
        "templates",
        "templates/configmap.yaml",
    ]


@pytest.mark.skipif(REALCHARTS is None, reason="no shared/realcharts beside the repository")
@pytest.mark.parametrize("entry", INDEX, ids=lambda entry: entry["file"])
def test_every_real_chart_unpacks_to_exactly_its_archive(entry: dict[str, str], tmp_path: Path) -> None:
    assert REALCHARTS is not None
    archive = REALCHARTS / entry["file"]
    folder = unpack(archive, tmp_path / "out", entry["file"])
    with tarfile.open(archive) as tar:
        files = {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
    assert {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == files


def pax_bomb(size: int = 512 << 20) -> bytes:
    """A .tgz whose first member is a PAX header that says it is `size` bytes (of zeros): half a MB of
    gzip, laid out as gzip members end to end so that it is built without compressing `size` bytes."""
    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    header.size = size
    zeros = gzip.compress(bytes(16 << 20), compresslevel=9, mtime=0)
    parts = [gzip.compress(header.tobuf(format=tarfile.USTAR_FORMAT), mtime=0)]
    parts += [zeros] * (size // (16 << 20))
    parts.append(tgz(good_members()))
    return b"".join(parts)


MEASURED_UNPACK = """import sys, time
from pathlib import Path
from cmp.errors import RemoteError
from cmp.remote.archive import unpack
started = time.monotonic()
try:
    unpack(Path(sys.argv[1]), Path(sys.argv[2]), "the downloaded .tgz")
    print("unpacked")
except RemoteError as error:
    print(error)
# this process's own peak (VmHWM): ru_maxrss would also count the test runner it was started from
peak = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:"))
print(time.monotonic() - started, int(peak.split()[1]) << 10)
"""


def test_a_pax_header_of_512_mib_is_refused_unread_within_bounds(tmp_path: Path) -> None:
    """A PAX header is held whole by tarfile's reader (512 MiB took 40 s and 550 MB): the stream stops
    at Go's 1 MiB for a header, named, in a fraction of the time and memory."""
    archive = _archive(tmp_path, pax_bomb())
    completed = subprocess.run(
        [sys.executable, "-c", MEASURED_UNPACK, str(archive), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    message, measures = completed.stdout.splitlines()
    assert message == "the downloaded .tgz is refused: a header is longer than the 1 MiB Go's tar reader allows"
    seconds, peak = measures.split()
    assert float(seconds) < 10 and int(peak) < 256 << 20, (seconds, peak)
    assert list((tmp_path / "out").iterdir()) == []
