"""What the warm process's fault tests share: requests of the shoong example, the warm processes serving a
runtime folder, and whether a process has ended."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

from cmp.warm import protocol
from conftest import ROOT, clean_env

CHARTSHARE = str(Path(sys.executable).parent / "chartshare")
EXAMPLE = ROOT / "examples" / "shoong-delivery"
VALUES = [
    "-f",
    "/examples/shoong-delivery/values/common.yaml",
    "-f",
    "/examples/shoong-delivery/values/notification.yaml",
]


def warm_env(runtime: Path, **extra: str) -> dict[str, str]:
    return clean_env({protocol.ENABLED: "on", protocol.RUNTIME: str(runtime), "CHARTSHARE_WARM_IDLE": "30", **extra})


def generate(helm: str, *extra: str) -> list[str]:
    app = ["--app", "dev-shoong-notification", "-n", "shoong", *VALUES, "--repo-root", str(ROOT), "--helm", helm]
    return ["generate", str(EXAMPLE / "apps" / "dev" / "notification"), *app, *extra]


def servers(runtime: Path) -> list[int]:
    """The warm processes serving from `runtime` (not their children, forked with the same command line)."""
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"cmp.warm.server\0{runtime}" in (entry / "cmdline").read_text():
                found[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return [pid for pid, parent in found.items() if parent not in found]


def children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def descriptors(pid: int) -> dict[int, str]:
    return {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}


def spare_child(runtime: Path, within: float = 10) -> int:
    """The warm process's child waiting for the next request (once no request is in flight)."""
    (server,) = servers(runtime)
    deadline = time.monotonic() + within
    while len(found := children(server)) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(found) == 1, found
    return found[0]


def wait_for_socket(runtime: Path, within: float = 20) -> Path:
    """The socket of the warm process serving from `runtime`, once it accepts."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for found in runtime.glob("warm-*.sock"):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(found))
                return found
            except OSError:
                pass
            finally:
                probe.close()
        time.sleep(0.05)
    raise AssertionError(f"no warm process came up in {runtime}")


def state(pid: int) -> str | None:
    """A process's state letter (Z: a zombie), None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if state(pid) in (None, "Z"):
            return True
        time.sleep(0.05)
    return False


def stop_servers(runtime: Path) -> None:
    for pid in servers(runtime):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            continue
