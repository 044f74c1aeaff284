"""The warm process's loop under every order of its events: children that end and callers that leave, in
one `select` batch and in any order (stale and repeated events included), never end another request, never
raise, and leave every child reaped and every descriptor closed. Real sockets, real forked children."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmp.warm import protocol
from cmp.warm import server as warm_server

FATES = ("ends", "leaves", "both", "neither")


class Harness:
    """A Loop on a real listener whose children wait for their pipe to be written, then exit."""

    def __init__(self, folder: Path) -> None:
        self.path = str(folder / "loop.sock")
        with_listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with_listener.bind(self.path)
        with_listener.listen(16)
        with_listener.setblocking(False)
        self.listener = with_listener
        self.log: list[str] = []
        self.releases: dict[str, tuple[int, int]] = {}
        self.loop = warm_server.Loop(with_listener, selectors.DefaultSelector(), self.log.append, self._child)

    def _child(self, request: protocol.Request, stdin: int, caller: socket.socket) -> None:
        try:
            os.setsid()  # as a command's child: a group of its own, which SIGTERM ends
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            release = self.releases[request.argv[1]][0]
            os.closerange(3, release)  # the test's ends of the sockets are its callers', not the child's
            os.closerange(release + 1, 1 << 16)
            os.read(release, 1)
        finally:
            os._exit(0)

    def connect(self, name: str) -> socket.socket:
        self.releases[name] = os.pipe()
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(self.path)
        request = protocol.Request(["chartshare", name], "/", 0o22, {}).encode()
        header = len(request).to_bytes(protocol.LENGTH_SIZE, "big")
        socket.send_fds(client, [header], [0])
        client.sendall(request)
        return client

    def run_until(self, done: Callable[[], bool], within: float = 10.0) -> None:
        deadline = time.monotonic() + within
        while not done() and time.monotonic() < deadline:
            self.loop.dispatch(key.data for key, _ in self.loop.selector.select(timeout=0.05))
            self.loop.tick(time.monotonic())
        assert done(), f"the loop did not get there: {self.log}"

    def close(self) -> None:
        for read, write in self.releases.values():
            os.write(write, b"x")  # no child outlives the test
            os.close(read)
            os.close(write)
        self.loop.selector.close()
        self.listener.close()
        os.unlink(self.path)


@pytest.fixture
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    made = Harness(tmp_path_factory.mktemp("loop"))
    yield made
    made.close()


def _ended(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    fates=st.lists(st.sampled_from(FATES), min_size=1, max_size=4),
    order=st.permutations(range(8)),
    stale=st.lists(st.integers(0, 7), max_size=3),
    again=st.permutations(range(8)),
)
def test_every_order_of_one_batch_leaves_each_request_to_itself(
    harness: Harness, fates: list[str], order: list[int], stale: list[int], again: list[int]
) -> None:
    names = [f"t{len(harness.releases)}-{index}" for index in range(len(fates))]
    clients = {name: harness.connect(name) for name in names}
    harness.run_until(lambda: sum(tenant.pid is not None for tenant in harness.loop.tenants) == len(names))
    pids = {line.split(": ")[1]: int(line.split()[1].rstrip(":")) for line in harness.log if line.startswith("child ")}
    for name, fate in zip(names, fates, strict=True):
        if fate in ("leaves", "both"):
            clients[name].close()
        if fate in ("ends", "both"):
            os.write(harness.releases[name][1], b"x")
    ending = [pids[name] for name, fate in zip(names, fates, strict=True) if fate in ("ends", "both")]
    deadline = time.monotonic() + 10
    while not all(_ended(pid) for pid in ending) and time.monotonic() < deadline:
        time.sleep(0.01)
    batch = [key.data for key, _ in harness.loop.selector.select(timeout=0.2)]  # at most 2 per tenant
    repeated = [batch[index % len(batch)] for index in stale] if batch else []
    harness.loop.dispatch([batch[index] for index in order if index < len(batch)] + repeated)
    harness.loop.dispatch([batch[index] for index in again if index < len(batch)])  # all stale now
    assert not [line for line in harness.log if "failed" in line], harness.log
    for name, fate in zip(names, fates, strict=True):
        if fate in ("ends", "neither"):
            clients[name].close()  # the rest of the callers leave: their children are stopped (SIGTERM)
    harness.run_until(lambda: not harness.loop.tenants and not harness.loop.unreaped)
    assert not [line for line in harness.log if "failed" in line], harness.log
    for name in names:
        with pytest.raises(ChildProcessError):
            os.waitpid(pids[name], os.WNOHANG)


def test_a_caller_that_never_sends_its_request_is_refused_and_others_are_served(harness: Harness) -> None:
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(harness.path)
    talker = harness.connect("talker")
    harness.run_until(lambda: any(tenant.pid is not None for tenant in harness.loop.tenants))
    harness.run_until(lambda: len(harness.loop.tenants) == 1, within=warm_server.READ + 5)
    assert silent.recv(protocol.STATUS_SIZE) == protocol.status_bytes(protocol.NOT_TAKEN)
    os.write(harness.releases["talker"][1], b"x")
    harness.run_until(lambda: not harness.loop.tenants and not harness.loop.unreaped)
    silent.close()
    talker.close()
