"""A request's child: what runs in it (the command, into buffers of its own, and its answer to the
caller), and how the warm process signals and reaps it.

The child leads a session of its own, and helm joins it in a group of its own (cmp/helm/process.py); a
child killed before it could clean up leaves helm behind in that session, which `reap` ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable

from cmp.helm import process
from cmp.warm.protocol import STARTED, Request, answer_header, status_bytes

Run = Callable[[Request, int, socket.socket], None]  # a request, the caller's stdin, the caller: never returns


def run(request: Request, stdin: int, caller: socket.socket) -> None:
    """In the child: say so to the caller, run the command into buffers of its own and send the caller its
    answer in full. A child that cannot say so or cannot set up the request runs nothing and answers
    nothing: the caller then runs the command itself. Never returns into the server's loop."""
    try:
        caller.setblocking(True)
        caller.sendall(status_bytes(STARTED))
        os.setsid()
        os.dup2(stdin, 0)
        os.dup2(os.memfd_create("stdout"), 1)
        os.dup2(os.memfd_create("stderr"), 2)
        os.dup2(caller.fileno(), 3)
        os.closerange(4, open_max())  # (the warm process sets no signal handler: the child has Python's own)
        os.chdir(request.cwd)
        os.umask(request.umask)
        os.environ.clear()
        os.environ.update(request.env)
        import tempfile

        tempfile.tempdir = None  # found again from this request's environment
        sys.argv = request.argv
        main = sys.modules["__main__"]  # the console script's, not `python -m` this module's (click names
        main.__package__ = main.__spec__ = None  # the program after them in its help)
        from cmp.cache import deferred
        from cmp.cli import launch

        process.leave_to_the_session()  # ended by `reap` should this child be killed

        if request.argv[1:2] == ["generate"]:  # (check's render workers, forked, write as they go)
            deferred.hold()
    except BaseException:  # nothing may unwind into the server's loop
        os._exit(1)
    try:
        status = launch.run()
    except SystemExit as leaving:
        status = leaving.code if isinstance(leaving.code, int) else 1
    except BaseException:
        os._exit(1)
    try:
        # The command is over: the SIGTERM its caller's leaving brings must not cut the cache writes short
        # (each is whole or not there; the server's SIGKILL after GRACE still bounds them).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stdout.flush()
        sys.stderr.flush()
        _answer(status)
    except BaseException:
        os._exit(1)
    try:
        deferred.flush()
    finally:
        os._exit(0)


def _answer(status: int) -> None:
    """The status and stdout's and stderr's lengths onto the caller's socket (descriptor 3), with the two
    buffers themselves as descriptors: the caller copies them out, so the bytes never cross the socket and
    this child is done at once."""
    sizes = [os.fstat(fd).st_size for fd in (1, 2)]
    header = answer_header(status, *sizes)
    with socket.socket(fileno=3) as caller:
        sent = socket.send_fds(caller, [header], [1, 2])
        if sent < len(header):
            caller.sendall(header[sent:])


def open_max() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 1 << 16)
    except (OSError, ValueError):
        return 1024


def reap(pid: int, options: int = 0) -> int | None:
    """Reap a child that ended (None, with WNOHANG, while it runs), its wait status. A child killed before
    it could clean up (SIGKILL, out of memory) leaves its helm behind, in the session it led (see
    cmp/helm/process.py): what is left there is killed first, while the child's unreaped number keeps the
    session's from naming another."""
    ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | options)
    if ended is None:
        return None
    if ended.si_code != os.CLD_EXITED:
        end_session(pid)
    return os.waitpid(pid, 0)[1]


def end_session(leader: int) -> None:
    """SIGKILL every process of the session `leader` led, but the leader."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != leader:
            with contextlib.suppress(OSError):
                if os.getsid(int(entry.name)) == leader:
                    os.kill(int(entry.name), signal.SIGKILL)


def signal_group(pid: int | None, signum: int) -> None:
    """Signal a child's process group (it leads one once it has started; a child not yet reaped keeps its
    number), or the child alone when it has no group yet."""
    if pid is None:
        return
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)
    except PermissionError:
        pass
