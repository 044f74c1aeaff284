"""The console entry point: a request handed to a warm chartshare process, when the sidecar keeps one.

Argo CD's sidecar starts a new process for every request, and Python's start with chartshare's imports
costs as much CPU as helm's render of a small chart (on a sidecar of about one core, all of it counts).
With CHARTSHARE_WARM=on (the image sets it), the first request runs as ever and starts, for the next ones,
a resident process that has everything imported (cmp/warm/server.py); a lock beside its socket lets
only one start, whatever the burst. Later requests hand it their command line, environment, working folder
and stdin over a private unix socket; it forks one child per request, which runs the command exactly as
this process would have, into buffers of its own (memfds), and hands back the exit status and the two
buffers' lengths in one answer that carries the buffers themselves as descriptors; this process copies them
out with sendfile. When the caller is killed (Argo CD's deadline), the child is stopped as Argo CD
stops a command: SIGTERM, then SIGKILL.

One answer per request, by construction: only this process writes its stdout and stderr, and only from an
answer received in full. A warm process that is absent, stalled or full (connect, sending the request and
the first answer each bounded, all within HAND_OVER seconds), or a child that ends without answering in
full, means the command runs here, its helm deadline shortened by the time the hand-over took; nothing
can have been printed before. A terminal runs the command here too (what it prints may depend on it).
This module imports only what the hand-over needs, so a served request costs the interpreter and a socket.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from _socket import (  # socket.py's imports cost 7 ms
    AF_UNIX,
    CMSG_SPACE,
    MSG_CTRUNC,
    SCM_RIGHTS,
    SOCK_STREAM,
    SOL_SOCKET,
    socket,
)

from cmp.warm.protocol import (
    ANSWER_HEADER,
    ENABLED,
    HAND_OVER,
    LENGTH_SIZE,
    OUTPUT_SIZE,
    STARTED,
    STATUS_SIZE,
    Request,
    own_environment,
    socket_path,
    status_of,
    take_lock,
)

_FD_SIZE = 4  # a descriptor in SCM_RIGHTS: a native int
_CHUNK = 1 << 20


def main() -> None:
    """Console entry point (`chartshare`)."""
    begun = time.monotonic()
    if os.environ.get(ENABLED) == "on" and not (os.isatty(1) or os.isatty(2)):
        try:
            answer = hand_over(sys.argv)
        except KeyboardInterrupt:  # the child is stopped when this end closes; nothing was printed
            sys.stderr.write("chartshare: error: interrupted\n")
            os._exit(130)  # exits.INTERRUPTED, without loading exits
        if answer is not None:
            status, (out, out_size), (err, err_size) = answer
            _copy(err, err_size, 2)
            _copy(out, out_size, 1)
            os._exit(status)
    from cmp.cli import launch

    launch.main(spent=time.monotonic() - begun)


Buffer = tuple[int, int]  # a child's memfd received here, and how many of its bytes are the answer


def hand_over(argv: list[str]) -> tuple[int, Buffer, Buffer] | None:
    """The status, stdout and stderr of the command line (`sys.argv`, the program's name first) as a warm
    process's child ran it, or None when this process must run it (then, when no warm process answered at
    all, one is started for the requests that follow)."""
    path = socket_path()
    if path is None:
        return None
    client = socket(AF_UNIX, SOCK_STREAM)
    until = time.monotonic() + HAND_OVER
    try:
        client.settimeout(HAND_OVER)  # a full backlog refuses at once rather than waiting
        try:
            client.connect(path)
        except OSError:
            _start_server(path)
            return None
        try:
            request = Request(argv, os.getcwd(), _umask(), os.environ).encode()
            stdin = (0).to_bytes(4, sys.byteorder, signed=True)
            client.sendmsg([len(request).to_bytes(LENGTH_SIZE, "big")], [(SOL_SOCKET, SCM_RIGHTS, stdin)])
            _send_by(client, request, until)
            client.settimeout(max(until - time.monotonic(), 0.001))
            first = receive(client, STATUS_SIZE)
        except OSError:
            return None  # no child has started: it starts only once it could tell this end, which listens
        if first is None or status_of(first) != STARTED:
            return None
        client.settimeout(None)  # the command's own deadline (helm's, Argo CD's) bounds it from here
        try:
            return read_answer(client)
        except OSError:
            return None
    finally:
        client.close()


def read_answer(client: socket) -> tuple[int, Buffer, Buffer] | None:
    """A child's answer, whole: its status and its two buffers (stdout, stderr), which came with the header
    as descriptors, so no byte of the output crosses the socket; None when the child ended before sending it
    (the command then runs here: nothing of it was printed)."""
    try:
        first, ancillary, flags, _ = client.recvmsg(ANSWER_HEADER, CMSG_SPACE(2 * _FD_SIZE))
    except OSError:
        return None
    fds = [
        int.from_bytes(data[start : start + _FD_SIZE], sys.byteorder)
        for level, kind, data in ancillary
        if level == SOL_SOCKET and kind == SCM_RIGHTS
        for start in range(0, len(data) - _FD_SIZE + 1, _FD_SIZE)
    ]
    rest = receive(client, ANSWER_HEADER - len(first)) if first and len(fds) == 2 else None
    header = first + rest if rest is not None and not flags & MSG_CTRUNC else b""
    sizes = [int.from_bytes(header[start : start + OUTPUT_SIZE], "big") for start in (4, 12)]
    if not header or not all(_holds(fd, size) for fd, size in zip(fds, sizes, strict=True)):
        for fd in fds:
            os.close(fd)
        return None
    return status_of(header[:STATUS_SIZE]), (fds[0], sizes[0]), (fds[1], sizes[1])


def _holds(fd: int, size: int) -> bool:
    """Whether a buffer received is a regular file of at least the bytes the header claims for it."""
    try:
        info = os.fstat(fd)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size >= size


def _send_by(client: socket, data: bytes, until: float) -> None:
    view = memoryview(data)
    while view:
        client.settimeout(max(until - time.monotonic(), 0.001))
        view = view[client.send(view) :]


def _copy(source: int, size: int, target: int) -> None:
    """The first `size` bytes of a child's buffer onto this process's stdout or stderr, in the kernel where
    it can (sendfile refuses a target opened to append: then through this process)."""
    sent = 0
    try:
        while sent < size:
            try:
                count = os.sendfile(target, source, sent, size - sent)
            except OSError as error:
                if error.errno not in (errno.EINVAL, errno.ENOSYS) or sent:
                    raise
                break
            if not count:
                return
            sent += count
        while sent < size:
            chunk = os.pread(source, min(size - sent, _CHUNK), sent)
            if not chunk:
                return
            view = memoryview(chunk)
            while view:
                view = view[os.write(target, view) :]
            sent += len(chunk)
    except BrokenPipeError:  # the reader is gone: nobody is left to tell
        os._exit(1)
    except OSError as error:  # a full disk, an I/O error: what was printed is not the whole output
        try:
            os.write(2, f"chartshare: error: cannot write the output ({error.strerror})\n".encode())
        finally:
            os._exit(1)


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def receive(client: socket, size: int) -> bytes | None:
    """Exactly `size` bytes, or None when the other end closes first."""
    data = bytearray(size)
    view, got = memoryview(data), 0
    while got < size:
        count = client.recv_into(view[got:])
        if not count:
            return None
        got += count
    return bytes(data)


def _start_server(path: str) -> None:
    """Start the warm process in a session of its own, detached from this request, with an environment of its
    own (protocol.own_environment: it serves every tenant after this one), unless one holds the lock
    (starting, serving or ending): the lock is taken here and handed to it, so a burst starts one; never
    fail."""
    lock = take_lock(path)
    if lock is None:
        return
    try:
        import subprocess

        subprocess.Popen(  # isolated (-I): neither this folder (the repository) nor PYTHON* reach its imports
            [sys.executable, "-I", "-m", "cmp.warm.server", path, str(lock)],
            cwd="/",
            env=own_environment(os.environ),  # this request's environment goes to its own command only
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=(lock,),
        )
    except OSError:
        return
    finally:
        os.close(lock)  # the warm process holds the lock from here, for as long as it lives
