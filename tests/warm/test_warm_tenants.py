"""The warm process is shared by every team's requests: it holds no tenant's environment (the request that
started it included), each request's child runs with that request's environment only, and malformed
requests cost it nothing (no zombie, no descriptor), whatever their shape."""

from __future__ import annotations

import os
import random
import resource
import signal
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from warm_processes import (
    CHARTSHARE,
    children,
    descriptors,
    generate,
    servers,
    spare_child,
    state,
    stop_servers,
    wait_for_socket,
    warm_env,
)

from cmp.warm import protocol
from conftest import ROOT, clean_env


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "run"
    yield folder
    stop_servers(folder)


def _run(args: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run([CHARTSHARE, *args], cwd=ROOT, env=env, capture_output=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def _tenant(name: str, app: str) -> dict[str, str]:
    """What Argo CD's sidecar adds to a request of one team's Application (cmp-server's environment)."""
    return {
        "ARGOCD_APP_NAME": app,
        "ARGOCD_APP_NAMESPACE": "shoong",
        "ARGOCD_APP_PROJECT_NAME": f"{name}-project",
        "ARGOCD_APP_REVISION": f"{name}-revision",
        "ARGOCD_APP_SOURCE_REPO_URL": f"https://git.example.com/{name}/gitops.git",
        "ARGOCD_APP_SOURCE_PATH": "examples/shoong-delivery/apps/dev/notification",
        "ARGOCD_ENV_TEAM_TOKEN": f"{name}-secret-token",
    }


def _environ(pid: int) -> dict[str, str]:
    entries = Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "surrogateescape").split("\0")
    return dict(entry.partition("=")[::2] for entry in entries if entry)


def _request_specific(environ: dict[str, str], tenant: dict[str, str]) -> list[str]:
    """What of a tenant's request (its names, its values) an environment holds."""
    values = set(tenant.values())
    return sorted(
        f"{key}={value}"
        for key, value in environ.items()
        if key.startswith(("ARGOCD_", "PARAM_", "KUBE_")) or value in values
    )


def _without_app(args: list[str]) -> list[str]:
    at = args.index("--app")
    return args[:at] + args[at + 2 :]


def test_the_warm_process_and_its_spare_hold_none_of_the_environment_of_the_request_that_started_it(
    runtime: Path, helm: str
) -> None:
    tenant_a = _tenant("tenant-a", "dev-shoong-notification")
    tenant_b = _tenant("tenant-b", "dev-shoong-order")
    args = _without_app(generate(helm))
    first = _run(args, warm_env(runtime, **tenant_a))  # runs here and starts the warm process
    assert first == _run(args, clean_env(tenant_a)) and first[0] == 0
    wait_for_socket(runtime)
    (server,) = servers(runtime)
    for pid in (server, spare_child(runtime)):
        assert _request_specific(_environ(pid), tenant_a) == [], pid

    # each request brings its own environment, and its child uses that only
    served = _run(args, warm_env(runtime, **tenant_b))
    assert served == _run(args, clean_env(tenant_b)) and b"dev-shoong-order" in served[2]
    alone = {key: value for key, value in tenant_b.items() if key != "ARGOCD_APP_NAME"}
    nameless = _run(args, warm_env(runtime, **alone))
    assert nameless == _run(args, clean_env(alone)) and nameless[0] != 0 and not nameless[1]
    for pid in (server, spare_child(runtime)):
        held = _environ(pid)
        assert _request_specific(held, tenant_a) == _request_specific(held, tenant_b) == [], pid
    os.kill(server, signal.SIGTERM)


def _malformed(kind: int, rng: random.Random) -> tuple[bytes, bool]:
    """One malformed request: what its caller sends, and whether it sends its stdin along."""
    length = protocol.LENGTH_SIZE
    garbage = rng.randbytes(rng.randrange(1, 200))
    return [
        (b"", False),  # a connection closed at once
        ((0).to_bytes(length, "big"), True),  # zero-length
        ((0).to_bytes(length, "big"), False),
        ((0xFFFFFFFF).to_bytes(length, "big"), True),  # huge length
        ((len(garbage)).to_bytes(length, "big") + garbage, True),  # garbage, whole
        ((len(garbage)).to_bytes(length, "big") + garbage, False),
        ((len(garbage) + 50).to_bytes(length, "big") + garbage, True),  # truncated, then closed
        (garbage[:3], rng.random() < 0.5),  # a header cut short
        (b"\0\0\0\x10" + b"\0" * 16, True),  # NULs only
        ((4).to_bytes(length, "big") + b"/\x000\x00", True),  # fields missing
    ][kind]


def _zombies(server: int) -> list[int]:
    return [pid for pid in children(server) if state(pid) == "Z"]


def test_a_thousand_malformed_requests_leave_the_warm_process_as_it_was_and_serving(runtime: Path, helm: str) -> None:
    env = warm_env(runtime)
    alone = _run(generate(helm), clean_env())
    _run(["check", "--help"], env)
    path = wait_for_socket(runtime)
    (server,) = servers(runtime)
    spare_child(runtime)
    before = len(descriptors(server))
    rng = random.Random(36)
    kinds: Counter[int] = Counter()
    for number in range(1000):
        if number % 100 == 99:  # a request served between them: a spare is forked again each time
            assert _run(["check", "--help"], env)[0] == 0
        kind = number % 10
        data, with_stdin = _malformed(kind, rng)
        kinds[kind] += 1
        caller = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            caller.connect(str(path))
            if data:
                socket.send_fds(caller, [data[: protocol.LENGTH_SIZE]], [0] if with_stdin else [])
                if data[protocol.LENGTH_SIZE :]:
                    caller.sendall(data[protocol.LENGTH_SIZE :])
        except OSError:
            pass  # the warm process closed it first: as good as refused
        finally:
            caller.close()
    assert _run(generate(helm), env) == alone
    assert any(line.endswith(": generate") for line in _log(runtime)), "the normal request was not served"
    deadline = time.monotonic() + 20  # each is over within READ seconds; the abandoned are reaped on a tick
    while time.monotonic() < deadline and (_zombies(server) or len(descriptors(server)) != before):
        time.sleep(0.1)
    assert state(server) not in (None, "Z")
    assert _zombies(server) == [], "malformed requests left zombies"
    assert len(descriptors(server)) == before, (descriptors(server), _log(runtime)[-5:])
    assert set(kinds) == set(range(10))


def _log(runtime: Path) -> list[str]:
    return [line for log in runtime.glob("warm-*.log") for line in log.read_text().splitlines()]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def test_a_warm_process_out_of_descriptors_rests_says_so_once_and_serves_again(runtime: Path, helm: str) -> None:
    """Out of descriptors, a listener whose callers wait in its backlog stays readable: the warm process
    stops listening for a while rather than spin, logs it once, and serves again once it has descriptors."""
    env = warm_env(runtime)
    alone = _run(generate(helm), clean_env())
    _run(["check", "--help"], env)
    path = wait_for_socket(runtime)
    (server,) = servers(runtime)
    spare_child(runtime)
    limits = resource.prlimit(server, resource.RLIMIT_NOFILE)
    held: list[socket.socket] = []
    try:
        resource.prlimit(server, resource.RLIMIT_NOFILE, (len(descriptors(server)) + 2, limits[1]))
        for _ in range(30):  # two accepted, the others waiting in the backlog, each refused in its turn
            caller = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            held.append(caller)
            caller.connect(str(path))
        deadline = time.monotonic() + 20
        while not _out_of_descriptors(runtime) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_out_of_descriptors(runtime)) == 1, _log(runtime)[-5:]
        used = _cpu_seconds(server)
        time.sleep(3)
        # a spinning loop takes what CPU it gets, a whole core on an idle machine; at rest it takes almost none
        assert _cpu_seconds(server) - used < 1.0
        assert state(server) not in (None, "Z")
    finally:
        resource.prlimit(server, resource.RLIMIT_NOFILE, limits)
        for caller in held:
            caller.close()
    assert _run(generate(helm), env) == alone
    assert _log(runtime)[-1].endswith(": generate"), _log(runtime)[-5:]  # served, not run by its caller
    assert len(_out_of_descriptors(runtime)) == 1


def _out_of_descriptors(runtime: Path) -> list[str]:
    return [line for line in _log(runtime) if "cannot accept requests (Too many open files)" in line]
