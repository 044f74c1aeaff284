"""The warm process is shared by every team's requests: it holds no tenant's environment (the request that
started it included), each request's child runs with that request's environment only, and malformed
requests cost it nothing (no zombie, no descriptor), whatever their shape."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from warm_processes import CHARTSHARE, generate, servers, spare_child, stop_servers, wait_for_socket, warm_env

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
