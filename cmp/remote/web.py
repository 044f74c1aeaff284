"""HTTP(S) downloads from chart repositories: TLS verified, credentials only where they belong, one deadline.

- TLS: the system's certificate authorities, plus the `caFile` of the credentials entry covering the URL.
- Basic auth: the entry covering the URL (CHARTSHARE_REPOSITORIES' longest prefix), or the one the caller
  names (a repository's, for an archive on the repository's own host, as helm sends it). A redirect keeps
  it only to the same scheme, host and port, so a repository that sends its archives elsewhere never
  hands the password over; a redirect from https to http, or to anything but http(s), is refused.
- The deadline: every connection a download opens is shut when the command's time is up, so a server that
  stalls, or trickles a byte at a time, cannot hold `init` past Argo CD's limit.
- Size: a body is read up to a limit and refused beyond it.
- Proxies: the process environment's (`https_proxy`, `no_proxy`...), as urllib reads them.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from cmp.errors import RemoteError
from cmp.remote.credentials import ENV, Credential, Credentials
from cmp.remote.deadline import Deadline

_CHUNK = 1 << 16


def origin(url: str) -> tuple[str, str]:
    """(scheme, host:port): where credentials may go."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, f"{parts.hostname}:{port}"


def get(url: str, secrets: Credentials, deadline: Deadline, limit: int, entry: Credential | None = None) -> bytes:
    """The body of `url`, with the credentials of `entry` (default: the entry covering `url`); RemoteError
    with one line naming the URL, the cause and the fix."""
    entry = entry or secrets.find(url)
    watch = _Watch(deadline.left(f"GET {url}"))
    redirects = _Redirects(url)
    opener = urllib.request.build_opener(
        _Http(watch), _Https(_tls(entry, secrets), watch), redirects, urllib.request.ProxyHandler()
    )
    request = urllib.request.Request(url, headers={"User-Agent": "chartshare"})
    if entry is not None and entry.username:
        token = base64.b64encode(f"{entry.username}:{entry.password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with watch:
            return _read(opener, request, watch, limit, url)
    except RemoteError:
        raise
    except Exception as error:
        if watch.fired or watch.over():
            raise deadline.spent(f"GET {url}") from None
        problem = _problem(error, url, redirects, entry, secrets)
        if problem is None:
            raise
        raise RemoteError(f"GET {url}: {problem}") from None


def _read(
    opener: urllib.request.OpenerDirector, request: urllib.request.Request, watch: _Watch, limit: int, url: str
) -> bytes:
    with opener.open(request, timeout=watch.seconds) as response:
        expected = response.headers.get("Content-Length")
        if expected is not None and expected.isdigit() and int(expected) > limit:
            raise RemoteError(f"GET {url}: {int(expected)} bytes is over the {limit >> 20} MiB a chart download may be")
        body = bytearray()
        while chunk := response.read1(_CHUNK):
            body += chunk
            if len(body) > limit:
                raise RemoteError(f"GET {url}: the answer is over the {limit >> 20} MiB a chart download may be")
        if watch.fired:
            raise TimeoutError
        if expected is not None and expected.isdigit() and len(body) != int(expected):
            raise RemoteError(f"GET {url}: the server closed the connection after {len(body)} of {expected} bytes")
        return bytes(body)


def _tls(entry: Credential | None, secrets: Credentials) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if entry is not None and entry.ca_file:
        try:
            context.load_verify_locations(cafile=entry.ca_file)
        except (OSError, ssl.SSLError):
            raise RemoteError(
                f"caFile {entry.ca_file} of {entry.label} in {secrets.source} is not a PEM certificate bundle"
            ) from None
    return context


def _problem(
    error: Exception, url: str, redirects: _Redirects, entry: Credential | None, secrets: Credentials
) -> str | None:
    """What went wrong, said for the person who can fix it; None for an error this module does not know."""
    where = redirects.current
    moved = f" (redirected to {where})" if where != url else ""
    if isinstance(error, urllib.error.HTTPError):
        status = f"HTTP {error.code} {error.reason}{moved}"
        if error.code in (401, 403):
            return status + "; " + _credentials_hint(url, redirects, entry, secrets)
        if error.code == 404 and url.endswith("/index.yaml"):
            return status + "; is the repository URL a Helm repository (one that serves index.yaml)?"
        return status
    reason: Any = error.reason if isinstance(error, urllib.error.URLError) else error
    host = urlsplit(where).hostname
    if isinstance(reason, ssl.SSLCertVerificationError):
        detail = reason.verify_message or str(reason)
        fix = (
            f"caFile {entry.ca_file} of {entry.label} in {secrets.source} does not vouch for {host}"
            if entry is not None and entry.ca_file
            else f"give the repository's CA as caFile in its entry of the file {ENV} names"
        )
        return f"TLS certificate of {host} not trusted ({detail}){moved}; {fix}"
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed with {host} ({reason.reason or reason}){moved}; is it an https:// server?"
    if isinstance(reason, socket.gaierror):
        return f"unknown host {host}{moved}; check the repository URL"
    if isinstance(reason, ConnectionRefusedError):
        return f"connection refused by {urlsplit(where).netloc}{moved}"
    if isinstance(reason, (http.client.HTTPException, ConnectionError)):
        return f"the server broke off the answer ({type(reason).__name__}){moved}; is it an HTTP server?"
    if isinstance(reason, OSError):
        return f"cannot connect to {urlsplit(where).netloc} ({reason.strerror or reason}){moved}"
    if isinstance(error, urllib.error.URLError):
        return f"{reason}{moved}"
    return None


def _credentials_hint(url: str, redirects: _Redirects, entry: Credential | None, secrets: Credentials) -> str:
    if redirects.dropped:
        scheme, host = origin(url)
        return f"credentials are sent only to {scheme}://{host}, never to the host a redirect names"
    if entry is not None and entry.username:
        return f"check {entry.label} in {secrets.source}"
    if withheld := secrets.withheld(url):
        return withheld
    return f"add the repository's URL with a username and password to the file {ENV} names"


class _Watch:
    """Shuts the connections of one download when its seconds are up (from a timer thread)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.fired = False
        self.ends = time.monotonic() + seconds
        self.connections: list[http.client.HTTPConnection] = []  # their socket while connecting
        self.sockets: list[socket.socket] = []  # connected (urllib forgets them in the connection)
        self.timer = threading.Timer(seconds, self._fire)
        self.timer.daemon = True

    def __enter__(self) -> _Watch:
        self.ends = time.monotonic() + self.seconds
        self.timer.start()
        return self

    def over(self) -> bool:
        """Whether the seconds are up, the timer thread told or not: a socket's own timeout (the same
        seconds) can beat it on a loaded machine, and is then the deadline too."""
        return time.monotonic() >= self.ends

    def __exit__(self, *_: object) -> None:
        self.timer.cancel()
        self.timer.join()

    def _fire(self) -> None:
        self.fired = True
        for sock in [*(connection.sock for connection in self.connections), *self.sockets]:
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def connection(self, base: type[http.client.HTTPConnection]) -> type[http.client.HTTPConnection]:
        """A connection class for urllib whose sockets the watch can shut, the TLS handshake included."""
        watch = self

        class Watched(base):  # type: ignore[valid-type,misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                watch.connections.append(self)

            def connect(self) -> None:
                super().connect()
                watch.sockets.append(self.sock)

        return Watched


class _Http(urllib.request.HTTPHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self.watch = watch

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.watch.connection(http.client.HTTPConnection), req)


class _Https(urllib.request.HTTPSHandler):
    def __init__(self, context: ssl.SSLContext, watch: _Watch) -> None:
        super().__init__(context=context)
        self.tls = context
        self.watch = watch

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        factory = self.watch.connection(http.client.HTTPSConnection)
        return self.do_open(factory, req, context=self.tls)


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects within http(s), never to http from https; credentials only within one origin."""

    def __init__(self, url: str) -> None:
        self.first = origin(url)
        self.current = url
        self.dropped = False

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        scheme = urlsplit(newurl).scheme
        if scheme not in ("http", "https"):
            raise RemoteError(f"GET {req.full_url}: redirected to {newurl}; only http(s) redirects are followed")
        if urlsplit(req.full_url).scheme == "https" and scheme != "https":
            raise RemoteError(f"GET {req.full_url}: redirected to {newurl}; a redirect from https to http is refused")
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        self.current = newurl
        if new is not None and origin(newurl) != self.first and new.has_header("Authorization"):
            new.remove_header("Authorization")
            self.dropped = True
        return new
