"""What the caller and the warm process say to each other, and where they meet.

A request is the caller's length-prefixed command line, working folder, umask and environment, with its
stdin as a descriptor; the answer a status (first STARTED, then the command's), and the stdout and stderr
buffers' lengths with the buffers themselves as descriptors. The socket, its lock and the warm process's
log sit in a folder only this user may enter, under a name of this very installation's.
Imported by every request's caller: nothing here imports more than `os` and `stat`, and `fcntl` to start
the warm process.
"""

from __future__ import annotations

import os
import stat

from cmp.locks import locked

ENABLED = "CHARTSHARE_WARM"  # "on": hand requests to a warm process
RUNTIME = "CHARTSHARE_RUNTIME_DIR"  # where its socket lives; else $XDG_RUNTIME_DIR/chartshare, else /tmp
NOT_TAKEN = -1000  # the warm process could not start the request: this process runs it
STARTED = -1001  # a child took the request: its answer follows
HAND_OVER = 1.0  # seconds from connecting to STARTED; past them the command runs here
STATUS_SIZE = 4  # a status: a signed big-endian int
LENGTH_SIZE = 4  # a request's length: an unsigned big-endian int
OUTPUT_SIZE = 8  # an answer's stdout and stderr lengths: unsigned big-endian ints
ANSWER_HEADER = STATUS_SIZE + 2 * OUTPUT_SIZE  # sent with the child's two buffers as descriptors

# The warm process's own environment: what of the environment of the request that starts it it keeps. It
# serves every team, so it keeps where things are (programs, home, temporary files, the locale, its runtime
# and cache folders) and chartshare's own settings (the sidecar's, never a tenant's: Argo CD hands an
# Application's env over as ARGOCD_ENV_*), nothing a request is about (ARGOCD_APP_*, ARGOCD_ENV_*, PARAM_*,
# KUBE_*, credentials). Each request brings its own environment, and its child runs with that one only.
OWN_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "XDG_RUNTIME_DIR",
        "XDG_CACHE_HOME",
    }
)
OWN_PREFIXES = ("CHARTSHARE_",)


class Request:
    """One request: the caller's command line (the program's name first), working folder, umask and
    environment, as the caller encodes them and the child that runs it decodes them."""

    __slots__ = ("argv", "cwd", "env", "umask")

    def __init__(self, argv: list[str], cwd: str, umask: int, env: os._Environ[str] | dict[str, str]) -> None:
        self.argv = argv
        self.cwd = cwd
        self.umask = umask
        self.env = env

    def encode(self) -> bytes:
        """The working folder, the umask, the arguments and the environment, NUL-separated."""
        argv, env = self.argv, self.env
        fields = [self.cwd, str(self.umask), str(len(argv)), *argv, *(f"{key}={value}" for key, value in env.items())]
        return "\0".join(fields).encode("utf-8", "surrogateescape")

    @classmethod
    def decode(cls, data: bytes) -> Request:
        """The request `encode` made; a ValueError for bytes it cannot have made (anyone of this user may
        connect: the warm process refuses such a request before any child sees it)."""
        fields = data.decode("utf-8", "surrogateescape").split("\0")
        if len(fields) < 3 or not all(field.isascii() and field.isdigit() for field in fields[1:3]):
            raise ValueError("no working folder, umask and argument count")
        cwd, umask, count = fields[0], int(fields[1]), int(fields[2])
        if umask > 0o777 or 3 + count > len(fields):
            raise ValueError(f"umask {umask:o} or {count} arguments in {len(fields)} fields")
        entries = fields[3 + count :]
        if not all(entry.find("=") > 0 for entry in entries):
            raise ValueError("an environment entry that is not NAME=VALUE")
        env = dict(entry.partition("=")[::2] for entry in entries)
        return cls(fields[3 : 3 + count], cwd, umask, env)

    @property
    def command(self) -> str:
        """The command's name (generate, init, ...), for the warm process's log."""
        return self.argv[1] if len(self.argv) > 1 else ""


def own_environment(env: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """The environment the warm process starts with, out of the environment of the request that starts it."""
    return {key: value for key, value in env.items() if key in OWN_NAMES or key.startswith(OWN_PREFIXES)}


def answer_header(status: int, out: int, err: int) -> bytes:
    return status_bytes(status) + out.to_bytes(OUTPUT_SIZE, "big") + err.to_bytes(OUTPUT_SIZE, "big")


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
    newest, folders = 0, [package]
    while folders:  # every request reads it: one listing per folder, bytecode folders left out (half the time)
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    newest = max(newest, entry.stat().st_mtime_ns)
                elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
    return f"{binascii.crc32(f'{package}|{__version__}|{newest}'.encode()):08x}"


def take_lock(path: str) -> int | None:
    """The lock beside the socket at `path`, taken (its descriptor), or None while another process holds it:
    whoever holds it starts, serves or ends the warm process of that socket."""
    import fcntl

    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    return locked(path.removesuffix(".sock") + ".lock", flags, fcntl.LOCK_EX)


def log_path(path: str) -> str:
    return path.removesuffix(".sock") + ".log"


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
