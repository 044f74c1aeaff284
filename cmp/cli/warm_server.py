"""The warm chartshare process: everything imported once, one forked child per request (see warm.py).

    python -m cmp.cli.warm_server SOCKET

It listens on SOCKET (in a folder only its user may enter), takes a request's command line, environment,
working folder, umask and standard streams, forks, and answers with the child's exit status. The child
starts a session of its own, takes the caller's streams, folder, umask and environment, and runs the
command as the console entry point would. A caller that goes away (Argo CD's deadline kills it) has its
child stopped the way Argo CD stops a command: SIGTERM (chartshare then kills helm's process group), then
SIGKILL 5 s later. The process ends after CHARTSHARE_WARM_IDLE seconds (600) without a request, or as soon
as its socket is replaced (a newer one took its place) or removed, or its installation is gone.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import sys
import time

from cmp.cli import warm

IDLE = "CHARTSHARE_WARM_IDLE"
LOG = "CHARTSHARE_WARM_LOG"  # a file to which each request's child is noted (pid and arguments)
_GRACE = 5.0  # seconds between SIGTERM and SIGKILL, as Argo CD gives a command's process group
_READ = 5.0  # seconds a caller may take to send its request


def preload() -> None:
    """Import what any request may need, so a child starts with it loaded."""
    import jsonpatch  # noqa: F401
    import yaml  # noqa: F401

    from cmp.cli import exits, launch  # noqa: F401  # (not the typer CLI: rich reads the terminal when it loads)
    from cmp.generate import cached, command, render  # noqa: F401
    from cmp.manifests import emit, textpatch  # noqa: F401
    from cmp.ownership import process, reference_fields  # noqa: F401
    from cmp.ownership.rewrite import apply, references  # noqa: F401


class _Child:
    def __init__(self, pid: int, caller: socket.socket) -> None:
        self.pid = pid
        self.caller = caller
        self.done = os.pidfd_open(pid)
        self.killed_at: float | None = None


def serve(path: str) -> None:
    idle = float(os.environ.get(IDLE, "600"))
    try:
        os.close(os.pidfd_open(os.getpid()))  # how a child's end is waited for (Linux 5.3 and later)
    except (AttributeError, OSError):
        return
    preload()
    listener = _listen(path)
    if listener is None:
        return
    inode = os.stat(path).st_ino
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    children: dict[int, _Child] = {}
    last = time.monotonic()
    try:
        while True:
            for key, _ in selector.select(timeout=1.0):
                if key.data == "listener":
                    child = _take(listener, selector, children)
                    if child is not None:
                        children[child.pid] = child
                    last = time.monotonic()
                elif isinstance(key.data, tuple) and key.data[0] == "done":
                    _finish(children.pop(key.data[1]), selector)
                else:  # the caller's socket: readable only when it went away
                    _stop(children[key.data[1]], selector)
            now = time.monotonic()
            for child in children.values():
                if child.killed_at is not None and now - child.killed_at > _GRACE:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.pid, signal.SIGKILL)
            if not children and (now - last > idle or not _still_ours(path, inode) or not _installed()):
                return
    finally:
        for child in children.values():
            with contextlib.suppress(OSError):
                child.caller.sendall(warm.status_bytes(warm.DIED))
                os.killpg(child.pid, signal.SIGTERM)
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
        os.rename(staging, path)
    except OSError:
        listener.close()
        return None
    return listener


def _installed() -> bool:
    """Whether the installation this process runs is still there (a removed or replaced one is not served)."""
    return os.path.exists(sys.executable) and os.path.exists(warm.__file__)


def _still_ours(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _take(listener: socket.socket, selector: selectors.BaseSelector, children: dict[int, _Child]) -> _Child | None:
    """Read one request and fork its child; a request that cannot be read is answered NOT_TAKEN."""
    try:
        caller, _ = listener.accept()
    except OSError:
        return None
    fds: list[int] = []
    try:
        caller.settimeout(_READ)
        if _peer_uid(caller) != os.getuid():
            raise OSError("another user")
        header, fds, _, _ = socket.recv_fds(caller, warm.LENGTH_SIZE, 3)
        if len(header) != warm.LENGTH_SIZE or len(fds) != 3:
            raise OSError("a malformed request")
        length = int.from_bytes(header, "big")
        body = warm.receive(caller, length)
        if body is None:
            raise OSError("a truncated request")
        request = warm.decode(body)
        pid = os.fork()
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            caller.sendall(warm.status_bytes(warm.NOT_TAKEN))
        caller.close()
        for fd in fds:
            os.close(fd)
        return None
    if pid == 0:
        _run_child(request, fds, caller)
    for fd in fds:
        os.close(fd)
    _note(f"child {pid}: {' '.join(request[0][1:])}")
    child = _Child(pid, caller)
    caller.setblocking(False)
    selector.register(child.done, selectors.EVENT_READ, ("done", pid))
    selector.register(caller, selectors.EVENT_READ, ("caller", pid))
    return child


def _run_child(request: tuple[list[str], str, int, dict[str, str]], fds: list[int], caller: socket.socket) -> None:
    """In the child: say so to the caller (a child that cannot, runs nothing: the caller then runs the command
    itself), become the caller's command, and never return into the server's loop."""
    status = 1
    try:
        caller.sendall(warm.status_bytes(warm.STARTED))
    except OSError:
        os._exit(1)
    try:
        argv, cwd, umask, env = request
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, _open_max())  # (the warm process sets no signal handler: the child has Python's own)
        os.chdir(cwd)
        os.umask(umask)
        os.environ.clear()
        os.environ.update(env)
        import tempfile

        tempfile.tempdir = None  # found again from this request's environment
        sys.argv = argv
        main = sys.modules["__main__"]  # the console script's, not `python -m` this module's (click names
        main.__package__ = main.__spec__ = None  # the program after them in its help)
        from cmp.cli import launch

        launch.main()  # leaves through os._exit with the command's status
    except BaseException:  # nothing may unwind into the server's loop
        status = 1
    os._exit(status)


def _note(line: str) -> None:
    path = os.environ.get(LOG)
    if path:
        with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as log:
            log.write(line + "\n")


def _open_max() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 1 << 16)
    except (OSError, ValueError):
        return 1024


def _peer_uid(caller: socket.socket) -> int:
    import struct

    credentials = caller.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", credentials)
    return int(uid)


def _finish(child: _Child, selector: selectors.BaseSelector) -> None:
    """The child ended: its status to the caller (128 + the signal that ended it, as a shell says)."""
    selector.unregister(child.done)
    if child.killed_at is None:
        selector.unregister(child.caller)
    _, raw = os.waitpid(child.pid, 0)
    code = os.waitstatus_to_exitcode(raw)
    status = 128 - code if code < 0 else code
    with contextlib.suppress(OSError):
        child.caller.setblocking(True)
        child.caller.sendall(warm.status_bytes(status))
    child.caller.close()
    os.close(child.done)


def _stop(child: _Child, selector: selectors.BaseSelector) -> None:
    """The caller went away: stop its child as Argo CD stops a command."""
    selector.unregister(child.caller)
    child.killed_at = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGTERM)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m cmp.cli.warm_server SOCKET")
    serve(sys.argv[1])
