"""The warm chartshare process: everything imported once, one forked child per request (see caller.py).

    python -m cmp.warm.server SOCKET [LOCK-FD]

It holds the lock beside SOCKET (handed over by the caller that started it, else taken here) for as long
as it lives, listens on SOCKET (in a folder only its user may enter), reads each request without blocking
(a caller that does not send it within READ seconds, or sends what does not decode, is refused) and
hands it to a child forked ahead of it (a spare, which waits for its request holding no descriptor of this
process's: a request then starts without waiting for the fork of a loaded process, 1.5 ms), or forks one
for it, and forgets it: the child starts a session of its own, takes the caller's stdin, folder, umask
and environment, runs the command as the console entry point would into buffers of its own, and sends
the caller its status and the two buffers' lengths in one answer that carries the buffers as descriptors.
So a warm process that dies does not take the requests in flight along: their children answer all the
same. A caller that goes away (Argo CD's deadline kills it) has its child stopped the way Argo CD stops a
command: SIGTERM (chartshare then kills helm's process group), then SIGKILL 5 s later.

The loop reacts to each event of one `select` on its own (a child that ended, a caller that left, a
request that arrived, in any order): an event of a request already over is ignored, and an event that
fails ends that request only. Out of descriptors, the listener rests (REST seconds at a time) rather than
spin on callers it cannot accept. The process's own events go to a log beside the socket (LOG_BYTES at
most, one older generation kept). It ends after CHARTSHARE_WARM_IDLE seconds (600) without a request, or as soon
as its socket is replaced or removed, or its installation is gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterable

from cmp.warm import protocol
from cmp.warm.child import Run, reap, run, signal_group
from cmp.warm.protocol import LENGTH_SIZE, NOT_TAKEN, Request, log_path, status_bytes, take_lock
from cmp.warm.spare import Spare

IDLE = "CHARTSHARE_WARM_IDLE"
GRACE = 5.0  # seconds between SIGTERM and SIGKILL, as Argo CD gives a command's process group
READ = 0.5  # seconds a caller may take to send its request (its own hand-over gives up at protocol.HAND_OVER)
REST = 0.5  # seconds the listener rests when there is no descriptor (or memory) to accept a caller with
_OUT_OF = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})  # what a rest may cure
LOG_BYTES = 256 << 10
_LARGEST_REQUEST = 16 << 20  # a command line and environment never come near it


def preload() -> None:
    """Import what any request may need, so a child starts with it loaded: generate's pipeline, and the
    typer CLI (Argo CD runs init before every generate) with its click command built. What click and typer
    read of the terminal and the environment they read when a command runs, in the child; rich, where it
    is installed, is imported only then too."""
    import ctypes  # noqa: F401  # (helm's PR_SET_PDEATHSIG)

    import jsonpatch  # noqa: F401
    import yaml  # noqa: F401

    from cmp.cli import app, exits, launch  # noqa: F401
    from cmp.generate import cached, command  # noqa: F401
    from cmp.helm import nondeterminism  # noqa: F401  # (a render cache miss)
    from cmp.init import command as init  # noqa: F401
    from cmp.manifests import emit, textpatch  # noqa: F401
    from cmp.ownership import process, reference_fields  # noqa: F401
    from cmp.ownership.rewrite import apply, references  # noqa: F401
    from cmp.parameters import announcement  # noqa: F401
    from cmp.render import pipeline  # noqa: F401

    app.click_command()


class Log:
    """The warm process's own events, one line each, in a file that never outgrows LOG_BYTES (twice, with
    the older generation beside it); a log that cannot be written is no reason to stop serving. It keeps a
    descriptor in reserve, so that running out of them is logged too."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.reserve = _reserve()

    def __call__(self, line: str) -> None:
        with contextlib.suppress(OSError):
            if os.path.getsize(self.path) > LOG_BYTES:
                os.replace(self.path, self.path + ".1")
        try:
            self._write(line)
        except OSError as error:
            if error.errno not in (errno.EMFILE, errno.ENFILE) or self.reserve is None:
                return
            os.close(self.reserve)
            with contextlib.suppress(OSError):
                self._write(line)
            self.reserve = _reserve()

    def _write(self, line: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with open(fd, "a", encoding="utf-8") as log:
            log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.getpid()} {line}\n")


def _reserve() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


class Tenant:
    """One request: being read, then run by a child, then over."""

    def __init__(self, caller: socket.socket, until: float) -> None:
        self.caller = caller
        self.until = until  # when its request must have been read
        self.header = b""
        self.body = bytearray()
        self.fds: list[int] = []
        self.pid: int | None = None
        self.done: int | None = None  # the child's pidfd, readable once it ended
        self.stopped_at: float | None = None  # SIGTERM sent (the caller left)
        self.killed = False
        self.over = False


Event = tuple[str, "Tenant | None"]  # what a registration stands for: listener, request, done or caller


class Loop:
    """The tenants of one warm process and what each event does to them."""

    def __init__(
        self,
        listener: socket.socket,
        selector: selectors.BaseSelector,
        log: Callable[[str], None],
        run: Run,
        *,
        spares: bool = False,
    ) -> None:
        self.listener = listener
        self.selector = selector
        self.log = log
        self.run = run  # in a forked child: run the request and answer its caller; never returns
        self.tenants: set[Tenant] = set()
        self.unreaped: set[int] = set()
        self.last = time.monotonic()
        self.spares = spares  # keep a child forked ahead of the next request
        self.spare: Spare | None = None
        self.resting_until: float | None = None  # the listener rests (out of descriptors) until then
        self.short = False  # out of descriptors since the backlog was last emptied (said once in the log)
        selector.register(listener, selectors.EVENT_READ, ("listener", None))
        self.fork_spare()

    def dispatch(self, events: Iterable[Event]) -> None:
        """Each event on its own: one that fails ends its request only, and one of a request already over
        (a child that ended and a caller that left in the same batch) does nothing."""
        for kind, tenant in events:
            try:
                if kind == "listener":
                    self.accept()
                elif tenant is None or tenant.over:
                    continue
                elif kind == "request":
                    self.read(tenant)
                elif kind == "done":
                    self.finish(tenant)
                elif kind == "caller":
                    self.stop(tenant)
            except Exception as error:  # one tenant's trouble is never the others'
                self.log(f"request failed in the warm process ({type(error).__name__}: {error})")
                if tenant is not None:
                    self.drop(tenant)

    def tick(self, now: float) -> None:
        """Refuse requests not read in time, SIGKILL children whose grace ran out, reap the abandoned, and
        listen again after a rest."""
        if self.resting_until is not None and now >= self.resting_until:
            self.resting_until = None
            self.selector.register(self.listener, selectors.EVENT_READ, ("listener", None))
        for tenant in list(self.tenants):
            try:
                if tenant.pid is None and now > tenant.until:
                    self.refuse(tenant, "its request did not arrive in time")
                elif tenant.stopped_at is not None and not tenant.killed and now - tenant.stopped_at > GRACE:
                    tenant.killed = True
                    signal_group(tenant.pid, signal.SIGKILL)
            except Exception as error:
                self.log(f"request failed in the warm process ({type(error).__name__}: {error})")
                self.drop(tenant)
        for pid in list(self.unreaped):
            with contextlib.suppress(ChildProcessError):
                if reap(pid, os.WNOHANG) is None:
                    continue
            self.unreaped.discard(pid)

    def accept(self) -> None:
        """Every caller waiting in the backlog, each to be read as its bytes arrive; out of descriptors, the
        listener rests (see `rest`)."""
        while True:
            try:
                caller, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                self.short = False  # every caller waiting was accepted
                return
            except OSError as error:
                if error.errno not in _OUT_OF:
                    raise
                self.rest(error)
                return
            self.last = time.monotonic()
            tenant = Tenant(caller, self.last + READ)
            self.tenants.add(tenant)
            caller.setblocking(False)
            if _peer_uid(caller) != os.getuid():
                self.refuse(tenant, "it came from another user")
                continue
            self.selector.register(caller, selectors.EVENT_READ, ("request", tenant))

    def rest(self, error: OSError) -> None:
        """No descriptor (or memory) to accept a caller with: the listener stays readable while its callers
        wait in the backlog, so stop listening for REST seconds rather than spin, and say so once until the
        backlog is emptied again. The callers wait, or run their command themselves after their hand-over."""
        self.selector.unregister(self.listener)
        self.resting_until = time.monotonic() + REST
        if not self.short:
            self.short = True
            self.log(f"cannot accept requests ({error.strerror}): listening again every {REST:g} s until it can")

    def read(self, tenant: Tenant) -> None:
        """What of the request has arrived, without waiting; the child is forked once it is whole."""
        caller = tenant.caller
        try:
            if len(tenant.header) < LENGTH_SIZE:
                data, fds, _, _ = socket.recv_fds(caller, LENGTH_SIZE - len(tenant.header), 1)
                tenant.fds += fds
                tenant.header += data
            else:
                data = caller.recv(int.from_bytes(tenant.header, "big") - len(tenant.body))
                tenant.body += data
        except (BlockingIOError, InterruptedError):
            return
        if not data:
            self.drop(tenant)  # the caller gave up first: nothing started, it runs the command itself
            return
        if len(tenant.header) < LENGTH_SIZE:
            return
        wanted = int.from_bytes(tenant.header, "big")
        if wanted > _LARGEST_REQUEST:
            self.refuse(tenant, f"it announced {wanted} bytes, over {_LARGEST_REQUEST}")
        elif len(tenant.body) < wanted:
            return
        elif len(tenant.fds) != 1:
            self.refuse(tenant, "it did not come with the caller's stdin")
        else:
            self.start(tenant, bytes(tenant.body))

    def start(self, tenant: Tenant, body: bytes) -> None:
        """Run the request in the spare, or in a child forked for it when there is none (or it is gone).
        A request that does not decode is refused here, before any child sees it (so the spare is kept)."""
        try:
            request = Request.decode(body)
        except ValueError as error:
            self.refuse(tenant, f"it is malformed ({error})")
            return
        spare, self.spare = self.spare, None
        if spare is not None and spare.take(body, tenant.fds[0], tenant.caller):
            pid = tenant.pid = spare.pid  # (the spare decodes the same bytes)
            tenant.done = spare.done
        else:
            if spare is not None:
                spare.end()
            pid = os.fork()
            if pid == 0:
                try:
                    self.run(request, tenant.fds[0], tenant.caller)  # never returns
                finally:
                    os._exit(1)
            tenant.pid = pid  # from here on, whatever fails, `drop` kills and reaps it
            tenant.done = os.pidfd_open(pid)
        for fd in tenant.fds:
            os.close(fd)
        tenant.fds = []
        self.selector.register(tenant.done, selectors.EVENT_READ, ("done", tenant))
        self.selector.modify(tenant.caller, selectors.EVENT_READ, ("caller", tenant))
        self.log(f"child {pid}: {request.command}")
        self.fork_spare()

    def fork_spare(self) -> None:
        """A child for the next request, forked now, while no request waits for it."""
        if self.spares and self.spare is None:
            try:
                self.spare = Spare.fork(self.run)
            except OSError as error:  # out of processes or memory: requests fork as they come
                self.log(f"no spare child ({error.strerror})")

    def end_spare(self) -> None:
        spare, self.spare = self.spare, None
        if spare is not None:
            spare.end()

    def finish(self, tenant: Tenant) -> None:
        """The child ended (it answered its caller itself, or died, and the caller runs the command)."""
        assert tenant.pid is not None
        raw = reap(tenant.pid)
        assert raw is not None  # (waited for)
        tenant.pid = None
        code = os.waitstatus_to_exitcode(raw)
        if code < 0:
            self.log(f"a child ended by signal {-code}")
        self.drop(tenant)

    def stop(self, tenant: Tenant) -> None:
        """The caller went away: stop its child as Argo CD stops a command (once: an event repeated in one
        batch finds it stopped)."""
        if tenant.stopped_at is not None:
            return
        self.selector.unregister(tenant.caller)
        tenant.stopped_at = time.monotonic()
        signal_group(tenant.pid, signal.SIGTERM)

    def refuse(self, tenant: Tenant, why: str) -> None:
        """Tell the caller to run the command itself."""
        self.log(f"request refused: {why}")
        with contextlib.suppress(OSError):
            tenant.caller.send(status_bytes(NOT_TAKEN))
        self.drop(tenant)

    def drop(self, tenant: Tenant) -> None:
        """The request is over here: every registration and descriptor of it released, a child still
        running killed and reaped later."""
        tenant.over = True
        self.tenants.discard(tenant)
        for fileobj in (tenant.caller, tenant.done):
            if fileobj is not None:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self.selector.unregister(fileobj)
        with contextlib.suppress(OSError):
            tenant.caller.close()
        for fd in (*tenant.fds, *([tenant.done] if tenant.done is not None else [])):
            with contextlib.suppress(OSError):
                os.close(fd)
        tenant.fds, tenant.done = [], None
        if tenant.pid is not None:
            signal_group(tenant.pid, signal.SIGKILL)
            self.unreaped.add(tenant.pid)
            tenant.pid = None


def serve(path: str, lock: int | None = None) -> None:
    log = Log(log_path(path))
    if lock is None and (lock := take_lock(path)) is None:
        return  # another warm process holds it
    idle = float(os.environ.get(IDLE, "600"))
    try:
        os.close(os.pidfd_open(os.getpid()))  # how a child's end is waited for (Linux 5.3 and later)
    except (AttributeError, OSError):
        log("not started: this system has no pidfd_open (Linux 5.3 and later)")
        return
    preload()
    listener = _listen(path)
    if listener is None:
        log(f"not started: cannot listen on {path}")
        return
    log(f"started on {path}")
    inode = os.stat(path).st_ino
    loop = Loop(listener, selectors.DefaultSelector(), log, run, spares=True)
    why = "ended"
    try:
        while True:
            waiting = loop.resting_until is not None or any(
                tenant.pid is None or tenant.stopped_at for tenant in loop.tenants
            )
            loop.dispatch(key.data for key, _ in loop.selector.select(timeout=0.1 if waiting else 1.0))
            now = time.monotonic()
            loop.tick(now)
            if not loop.tenants:
                if now - loop.last > idle:
                    why = "ended: idle"
                elif not _still_ours(path, inode):
                    why = "ended: its socket was replaced or removed"
                elif not _installed():
                    why = "ended: its installation is gone"
                else:
                    continue
                return
    except BaseException as error:
        why = f"ended by {type(error).__name__}"
        raise
    finally:
        log(why)  # the children in flight answer their callers all the same
        loop.end_spare()
        with contextlib.suppress(OSError):
            if _still_ours(path, inode):
                os.unlink(path)


def _listen(path: str) -> socket.socket | None:
    """A socket bound under a name of its own and then moved to `path`, so that a caller never meets a
    half-made one; None when it cannot be had."""
    staging = f"{path}.{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        old = os.umask(0o177)
        try:
            listener.bind(staging)
        finally:
            os.umask(old)
        listener.listen(64)
        listener.setblocking(False)
        os.rename(staging, path)
    except OSError:
        listener.close()
        return None
    return listener


def _installed() -> bool:
    """Whether the installation this process runs is still there (a removed or replaced one is not served)."""
    return os.path.exists(sys.executable) and os.path.exists(protocol.__file__)


def _still_ours(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _peer_uid(caller: socket.socket) -> int:
    import struct

    credentials = caller.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", credentials)
    return int(uid)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit("usage: python -m cmp.warm.server SOCKET [LOCK-FD]")
    serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else None)
