"""Real chart servers on 127.0.0.1 for the dependency tests: a Helm HTTP(S) repository and an OCI registry."""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

USER = "robot"
PASSWORD = "s3cret-Pa55word"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def self_signed(target: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost (it is also its own CA) and its key."""
    cert, key = target / "cert.pem", target / "key.pem"
    openssl = require("openssl", "openssl")
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def package(helm: str, chart: Path, target: Path) -> Path:
    """`helm package` into `target`; returns the archive."""
    out = subprocess.run(
        [helm, "package", str(chart), "--destination", str(target)], capture_output=True, text=True, check=True
    ).stdout
    return Path(out.strip().rsplit(": ", 1)[-1])


def library_chart(target: Path, name: str = "greeting", version: str = "0.1.0") -> Path:
    """A tiny chart whose one ConfigMap shows that the dependency was rendered."""
    chart = target / f"{name}-{version}"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: {version}\n")
    (chart / "values.yaml").write_text("message: hello\n")
    (chart / "templates" / "configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-"
        + name
        + "\ndata:\n  message: {{ .Values.message | quote }}\n  version: "
        + version
        + "\n"
    )
    return chart


Route = Callable[[http.server.BaseHTTPRequestHandler], None]


class _Handler(http.server.SimpleHTTPRequestHandler):
    auth: str | None = None
    routes: dict[str, Route]  # request path -> what answers it instead of the files
    seen: list[tuple[str, str | None]]  # (path, Authorization header) of every request

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization")))
        if self.path in self.routes:
            self.routes[self.path](self)
            return
        if self.auth is not None and self.headers.get("Authorization") != self.auth:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="charts"')
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class ChartRepository:
    """`helm repo index` + a static file server, optionally with basic auth and TLS; `routes` answer
    chosen paths otherwise (redirects, stalls), `seen` records every request."""

    url: str
    root: Path
    server: http.server.ThreadingHTTPServer
    routes: dict[str, Route]
    seen: list[tuple[str, str | None]]
    stopping: threading.Event

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def add(self, name: str, version: str, archive: bytes, url: str | None = None) -> str:
        """Serve `archive` as chart `name` `version` (listed in index.yaml, which helm did not write for it);
        returns its URL path."""
        file = f"{name}-{version}.tgz"
        (self.root / "charts" / file).write_bytes(archive)
        index_path = self.root / "charts" / "index.yaml"
        index = yaml.safe_load(index_path.read_text())
        index.setdefault("entries", {}).setdefault(name, []).append(
            {"apiVersion": "v2", "name": name, "version": version, "urls": [url or file]}
        )
        index_path.write_text(yaml.safe_dump(index))
        return f"/charts/{file}"


def redirect(to: str) -> Route:
    """A route answering 302 to `to`."""

    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", to)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


def stall(stopping: threading.Event, head: bool = False) -> Route:
    """A route that never finishes: silent, or (`head`) headers and then a byte now and then."""

    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        if head:
            handler.send_response(200)
            handler.send_header("Content-Length", "1000000")
            handler.end_headers()
        while not stopping.wait(0.5):
            if head:
                with contextlib.suppress(OSError):
                    handler.wfile.write(b"x")
                    handler.wfile.flush()

    return answer


@contextlib.contextmanager
def chart_repository(
    helm: str, root: Path, charts: list[Path], *, auth: bool = False, tls: tuple[Path, Path] | None = None
) -> Iterator[ChartRepository]:
    port = free_port()
    scheme = "https" if tls else "http"
    url = f"{scheme}://127.0.0.1:{port}/charts"
    (root / "charts").mkdir(parents=True)
    for chart in charts:
        package(helm, chart, root / "charts")
    subprocess.run([helm, "repo", "index", str(root / "charts"), "--url", url], check=True, capture_output=True)
    routes: dict[str, Route] = {}
    seen: list[tuple[str, str | None]] = []
    handler = type("Handler", (_Handler,), {"routes": routes, "seen": seen})
    handler.auth = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode() if auth else None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(handler, directory=str(root)))
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    repository = ChartRepository(url, root, server, routes, seen, threading.Event())
    try:
        yield repository
    finally:
        with contextlib.suppress(OSError):
            repository.stop()


def require(program: str, package_name: str) -> str:
    """The path of a system program the tests need; skipped outside CI, a failure in CI."""
    found = shutil.which(program)
    if found:
        return found
    message = f"{program} is not installed: run `make system-deps` (Debian package {package_name})"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@dataclass
class OciRegistry:
    """Debian's docker-registry with an htpasswd file, plain HTTP on 127.0.0.1."""

    host: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextlib.contextmanager
def oci_registry(root: Path) -> Iterator[OciRegistry]:
    registry = require("docker-registry", "docker-registry")
    htpasswd = require("htpasswd", "apache2-utils")
    root.mkdir(parents=True, exist_ok=True)
    users = subprocess.run([htpasswd, "-Bbn", USER, PASSWORD], capture_output=True, text=True, check=True).stdout
    (root / "htpasswd").write_text(users)
    port = free_port()
    (root / "config.yml").write_text(
        "version: 0.1\nlog:\n  level: error\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
        f"auth:\n  htpasswd:\n    realm: charts\n    path: {root / 'htpasswd'}\n"
    )
    log = (root / "registry.log").open("wb")
    process = subprocess.Popen([registry, "serve", str(root / "config.yml")], stdout=log, stderr=subprocess.STDOUT)
    instance = OciRegistry(f"127.0.0.1:{port}", process)
    try:
        for _ in range(100):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if process.poll() is not None:
                pytest.fail(f"docker-registry exited: {(root / 'registry.log').read_text()[-2000:]}")
            time.sleep(0.1)
        yield instance
    finally:
        instance.stop()
        log.close()


def push(helm: str, registry: OciRegistry, archive: Path, home: Path) -> None:
    """Log in and push with a throwaway helm home (the one under test never sees these credentials)."""
    env = {
        **os.environ,
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    major4 = subprocess.run([helm, "version", "--short"], capture_output=True, text=True, env=env).stdout
    plain = ["--plain-http"] if major4.startswith("v4") else []
    subprocess.run(
        [helm, "registry", "login", registry.host, "-u", USER, "--password-stdin", *plain],
        input=PASSWORD,
        text=True,
        env=env,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [helm, "push", str(archive), f"oci://{registry.host}/charts", "--plain-http"],
        env=env,
        check=True,
        capture_output=True,
    )
