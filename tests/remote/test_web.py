"""Downloads from real servers on 127.0.0.1: TLS, where credentials go, redirects, stalls, sizes."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import (
    PASSWORD,
    USER,
    ChartRepository,
    chart_repository,
    free_port,
    library_chart,
    redirect,
    self_signed,
    stall,
)

import fetch_helm
from cmp.errors import RemoteError
from cmp.model import RemoteChart
from cmp.remote import repository, web
from cmp.remote.credentials import Credentials, parse
from cmp.remote.deadline import Deadline
from cmp.remote.web import get


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, tls: tuple[Path, Path]) -> Iterator[ChartRepository]:
    """An HTTPS repository with basic auth, serving greeting 0.1.0 (helm only packages it: these tests are
    about the downloads, which no helm takes part in)."""
    base = tmp_path_factory.mktemp("web")
    helm = str(fetch_helm.ensure(4))
    with chart_repository(helm, base / "web", [library_chart(base / "src")], auth=True, tls=tls) as repo:
        yield repo


@pytest.fixture
def private(server: ChartRepository) -> Iterator[ChartRepository]:
    """The repository with no special routes and an empty request log, as each test starts."""
    server.routes.clear()
    server.seen.clear()
    yield server
    server.routes.clear()


def _secrets(url: str, ca: Path | None, **extra: str) -> Credentials:
    entry = f"- url: {url}\n  username: {USER}\n  password: {PASSWORD}\n"
    entry += f"  caFile: {ca}\n" if ca else ""
    entry += "".join(f"  {key}: {value}\n" for key, value in extra.items())
    return parse(entry, "repositories.yaml")


def test_basic_auth_goes_to_the_repository_its_entry_covers(private: ChartRepository, tls: tuple[Path, Path]) -> None:
    body = get(f"{private.url}/index.yaml", _secrets(private.url, tls[0]), Deadline(20), 1 << 20)
    assert b"greeting" in body
    assert private.seen[-1][1] is not None


def test_an_entry_for_another_path_sends_nothing_and_says_where_to_add_one(
    private: ChartRepository, tls: tuple[Path, Path]
) -> None:
    entries = [f"- {{url: {private.url}, caFile: {tls[0]}}}", f"- {{url: {private.url}/x, username: a, password: b}}"]
    secrets = parse("\n".join(entries), "f")
    with pytest.raises(RemoteError, match=r"GET .*/index.yaml: HTTP 401 Unauthorized; add the repository's URL"):
        get(f"{private.url}/index.yaml", secrets, Deadline(20), 1 << 20)
    assert private.seen[-1][1] is None


def test_a_redirect_within_the_repository_keeps_the_credentials(
    private: ChartRepository, tls: tuple[Path, Path]
) -> None:
    private.routes["/charts/moved.tgz"] = redirect(f"{private.url}/greeting-0.1.0.tgz")
    assert get(f"{private.url}/moved.tgz", _secrets(private.url, tls[0]), Deadline(20), 1 << 20)[:2] == b"\x1f\x8b"


def test_credentials_never_follow_a_redirect_to_another_host(private: ChartRepository, tls: tuple[Path, Path]) -> None:
    other = private.url.replace("127.0.0.1", "localhost")
    private.routes["/charts/moved.tgz"] = redirect(f"{other}/greeting-0.1.0.tgz")
    with pytest.raises(RemoteError) as caught:
        get(f"{private.url}/moved.tgz", _secrets(private.url, tls[0]), Deadline(20), 1 << 20)
    message = str(caught.value)
    assert f"HTTP 401 Unauthorized (redirected to {other}/greeting-0.1.0.tgz)" in message
    assert "credentials are sent only to https://127.0.0.1:" in message
    assert private.seen[-1] == ("/charts/greeting-0.1.0.tgz", None), "the other host got no Authorization header"
    assert PASSWORD not in message


def test_an_archive_elsewhere_on_the_repository_s_host_gets_its_credentials_as_helm_gives_them(
    private: ChartRepository, tls: tuple[Path, Path], tmp_path: Path
) -> None:
    (private.root / "downloads").mkdir()
    shutil.copy(private.root / "charts" / "greeting-0.1.0.tgz", private.root / "downloads" / "g.tgz")
    private.add("moved", "1.0.0", b"", url=private.url.rsplit("/", 1)[0] + "/downloads/g.tgz")
    chart = RemoteChart(private.url, "moved", "1.0.0")
    repository.download(chart, tmp_path / "g.tgz", _secrets(private.url, tls[0]), Deadline(20))
    assert (tmp_path / "g.tgz").read_bytes()[:2] == b"\x1f\x8b"
    assert private.seen[-1][0] == "/downloads/g.tgz" and private.seen[-1][1] is not None


def test_a_redirect_from_https_to_http_is_refused(private: ChartRepository, tls: tuple[Path, Path]) -> None:
    private.routes["/charts/moved.tgz"] = redirect(f"http://127.0.0.1:{free_port()}/x.tgz")
    with pytest.raises(RemoteError, match="a redirect from https to http is refused"):
        get(f"{private.url}/moved.tgz", _secrets(private.url, tls[0]), Deadline(20), 1 << 20)


def test_an_untrusted_certificate_names_the_cafile_setting(private: ChartRepository) -> None:
    trust = r"TLS certificate of 127.0.0.1 not trusted \(.*\); give the repository's CA as caFile"
    with pytest.raises(RemoteError, match=trust):
        get(f"{private.url}/index.yaml", _secrets(private.url, None), Deadline(20), 1 << 20)


@pytest.mark.parametrize("head", [False, True], ids=["silent", "trickling"])
def test_a_server_that_stalls_is_cut_off_at_the_deadline(
    private: ChartRepository, tls: tuple[Path, Path], head: bool
) -> None:
    private.routes["/charts/index.yaml"] = stall(private.stopping, head=head)
    started = time.monotonic()
    with pytest.raises(RemoteError, match=r"GET .*/index.yaml: out of time \(2 s for init"):
        get(f"{private.url}/index.yaml", _secrets(private.url, tls[0]), Deadline(2), 1 << 20)
    assert time.monotonic() - started < 6


def test_a_socket_timeout_that_beats_the_watch_is_the_deadline_too(
    private: ChartRepository, tls: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine the timer thread can wake after the socket's own timeout (the same seconds)."""
    monkeypatch.setattr(web._Watch, "_fire", lambda watch: None)
    private.routes["/charts/index.yaml"] = stall(private.stopping)
    with pytest.raises(RemoteError, match=r"GET .*/index.yaml: out of time \(1 s for init"):
        get(f"{private.url}/index.yaml", _secrets(private.url, tls[0]), Deadline(1), 1 << 20)


def test_an_answer_over_the_limit_is_refused(private: ChartRepository, tls: tuple[Path, Path]) -> None:
    with pytest.raises(RemoteError, match="over the 0 MiB a chart download may be"):
        get(f"{private.url}/index.yaml", _secrets(private.url, tls[0]), Deadline(20), 100)


def test_an_unknown_host_is_named() -> None:
    with pytest.raises(RemoteError, match=r"unknown host charts\.invalid; check the repository URL"):
        get("https://charts.invalid/index.yaml", Credentials(), Deadline(20), 1 << 20)


def test_a_closed_port_is_named() -> None:
    port = free_port()
    with pytest.raises(RemoteError, match=f"connection refused by 127.0.0.1:{port}"):
        get(f"http://127.0.0.1:{port}/index.yaml", Credentials(), Deadline(20), 1 << 20)
