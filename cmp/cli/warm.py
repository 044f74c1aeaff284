"""The console entry point: a request handed to a warm chartshare process, when the sidecar keeps one.

Argo CD's sidecar starts a new process for every request, and Python's start with chartshare's imports
costs as much CPU as helm's render of a small chart (on a sidecar of about one core, all of it counts).
With CHARTSHARE_WARM=on (the image sets it), the first request runs as ever and starts, for the next ones,
a resident process that has everything imported (cmp/cli/warm_server.py). Later requests hand it their
command line, environment, working folder and standard streams over a private unix socket; it forks one
child per request, which runs the command exactly as this process would have, writing to the caller's
own stdout and stderr, and the caller exits with the child's status. When the caller is killed (Argo CD's
deadline), the child is stopped as Argo CD stops a command: SIGTERM, then SIGKILL.

Nothing here may change what a request prints: when no warm process answers, or it says it could not take
the request, the command runs in this process. Once a child has started, its status is the answer; a warm
process that dies under a running child is an error, never a silent retry that could print twice. This
module imports only what the hand-over needs, so a served request costs the interpreter and a socket.
"""

from __future__ import annotations

import os
import stat
import sys
from _socket import AF_UNIX, SCM_RIGHTS, SOCK_STREAM, SOL_SOCKET, socket  # socket.py's imports cost 7 ms

ENABLED = "CHARTSHARE_WARM"  # "on": hand requests to a warm process
RUNTIME = "CHARTSHARE_RUNTIME_DIR"  # where its socket lives; else $XDG_RUNTIME_DIR/chartshare, else /tmp
NOT_TAKEN = -1000  # the warm process could not start the request: this process runs it
STARTED = -1001  # the child took the request: from here on only its status answers it
DIED = -1002  # the warm process was stopped under the running child
_FIRST_ANSWER = 10.0  # seconds to wait for STARTED or NOT_TAKEN before running the command here
STATUS_SIZE = 4  # a status: a signed big-endian int
LENGTH_SIZE = 4  # a request's length: an unsigned big-endian int


def main() -> None:
    """Console entry point (`chartshare`)."""
    if os.environ.get(ENABLED) == "on":
        try:
            status = hand_over(sys.argv)
        except KeyboardInterrupt:  # the child is stopped when this end closes
            sys.stderr.write("chartshare: error: interrupted\n")
            status = 130  # exits.INTERRUPTED, without loading exits
        if status is not None:
            os._exit(status)
    from cmp.cli import launch

    launch.main()


def hand_over(argv: list[str]) -> int | None:
    """The status of the command line (`sys.argv`, the program's name first) as the warm process ran it, or
    None when this process must run it (then a warm process is started for the requests that follow)."""
    path = socket_path()
    if path is None:
        return None
    client = socket(AF_UNIX, SOCK_STREAM)
    try:
        client.connect(path)
    except OSError:
        client.close()
        _start_server(path)
        return None
    try:
        try:
            request = encode(argv, os.getcwd(), _umask(), os.environ)
            streams = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2))
            client.sendmsg([len(request).to_bytes(LENGTH_SIZE, "big")], [(SOL_SOCKET, SCM_RIGHTS, streams)])
            client.sendall(request)
            client.settimeout(_FIRST_ANSWER)
            first = receive(client, STATUS_SIZE)
        except OSError:
            return None  # no child has started: it starts only after saying so, and this end still listens
        if first is None or status_of(first) != STARTED:
            return None
        client.settimeout(None)
        try:
            answer = receive(client, STATUS_SIZE)
        except OSError:
            answer = None
        status = status_of(answer) if answer is not None else DIED
        if status == DIED:
            sys.stderr.write("chartshare: error: the warm chartshare process ended before the command did\n")
            return 1
        return status
    finally:
        client.close()


def status_bytes(status: int) -> bytes:
    return status.to_bytes(STATUS_SIZE, "big", signed=True)


def status_of(data: bytes) -> int:
    return int.from_bytes(data, "big", signed=True)


def socket_path() -> str | None:
    """The socket of the warm process for this very installation (its version and code), in a folder only
    this user may enter; None when there is no such folder to be had."""
    folder = _runtime_folder()
    if folder is None:
        return None
    return os.path.join(folder, f"warm-{installation_stamp()}.sock")


def installation_stamp() -> str:
    """What tells this installation from any other: the package's folder, version and newest module file."""
    import binascii

    from cmp import __version__

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    newest = 0
    for folder, _, names in os.walk(package):
        for name in names:
            if name.endswith(".py"):
                newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
    return f"{binascii.crc32(f'{package}|{__version__}|{newest}'.encode()):08x}"


def encode(argv: list[str], cwd: str, umask: int, env: os._Environ[str] | dict[str, str]) -> bytes:
    """A request: the working folder, the umask, the arguments and the environment, NUL-separated."""
    fields = [cwd, str(umask), str(len(argv)), *argv, *(f"{key}={value}" for key, value in env.items())]
    return "\0".join(fields).encode("utf-8", "surrogateescape")


def decode(request: bytes) -> tuple[list[str], str, int, dict[str, str]]:
    fields = request.decode("utf-8", "surrogateescape").split("\0")
    cwd, umask, count = fields[0], int(fields[1]), int(fields[2])
    argv = fields[3 : 3 + count]
    env = dict(entry.partition("=")[::2] for entry in fields[3 + count :])
    return argv, cwd, umask, env


def _runtime_folder() -> str | None:
    """$CHARTSHARE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/chartshare, else /tmp/chartshare-run-<uid>: created
    0700, and used only when it is this user's own and nobody else may write in it."""
    given = os.environ.get(RUNTIME)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    folder = given or (os.path.join(xdg, "chartshare") if xdg else f"/tmp/chartshare-run-{os.getuid()}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        found = os.lstat(folder)
    except OSError:
        return None
    private = stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o077
    return folder if private else None


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def receive(client: socket, size: int) -> bytes | None:
    """Exactly `size` bytes, or None when the other end closes first."""
    data = b""
    while len(data) < size:
        chunk = client.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _start_server(path: str) -> None:
    """Start the warm process in a session of its own, detached from this request; never fail."""
    try:
        import subprocess

        subprocess.Popen(  # isolated (-I): neither this folder (the repository) nor PYTHON* reach its imports
            [sys.executable, "-I", "-m", "cmp.cli.warm_server", path],
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return
