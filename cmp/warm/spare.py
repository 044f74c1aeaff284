"""A child forked ahead of its request, so that a request starts without waiting for the fork of a loaded
process (1.5 ms): until its request comes it holds no descriptor of the warm process's but its channel."""

from __future__ import annotations

import contextlib
import os
import signal
import socket

from cmp.helm import process
from cmp.warm.child import Run, open_max, signal_group
from cmp.warm.protocol import Request


class Spare:
    """A child forked ahead of its request, waiting for it on a channel of its own: the request's bytes (in
    a memfd), the caller's stdin and the caller's socket arrive as descriptors in one message. Until then
    it holds no descriptor of the warm process's but its end of the channel, so no caller or listener is
    kept open by it."""

    def __init__(self, pid: int, channel: socket.socket, done: int) -> None:
        self.pid = pid
        self.channel = channel
        self.done = done  # its pidfd

    @classmethod
    def fork(cls, run: Run) -> Spare:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            raise
        if pid == 0:
            try:
                _wait_for_request(theirs, run)  # never returns
            finally:
                os._exit(1)
        theirs.close()
        try:
            done = os.pidfd_open(pid)
        except OSError:
            signal_group(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            ours.close()
            raise
        return cls(pid, ours, done)

    def take(self, body: bytes, stdin: int, caller: socket.socket) -> bool:
        """Hand it a request; False when it could not take it (it died meanwhile)."""
        try:
            request = process.buffer("request", body)
        except OSError:
            return False
        try:
            socket.send_fds(self.channel, [b"r"], [request, stdin, caller.fileno()])
        except OSError:
            return False
        finally:
            os.close(request)
        self.channel.close()
        return True

    def end(self) -> None:
        """Kill it and reap it (one that took no request, or could not)."""
        self.channel.close()
        signal_group(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        os.close(self.done)


def _wait_for_request(channel: socket.socket, run: Run) -> None:
    """In a spare: let go of every descriptor but the channel, wait for the request, and run it (the
    caller, `Spare.fork`, exits whatever happens)."""
    keep = channel.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, open_max())
    _, fds, _, _ = socket.recv_fds(channel, 1, 3)
    channel.close()
    if len(fds) != 3:
        os._exit(1)  # the warm process is gone, or sent no request
    request, stdin, caller = fds
    size = os.fstat(request).st_size
    body = os.pread(request, size, 0)
    os.close(request)
    if len(body) != size:
        os._exit(1)
    run(Request.decode(body), stdin, socket.socket(fileno=caller))
