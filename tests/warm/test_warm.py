"""Requests handed to a warm chartshare process (CHARTSHARE_WARM=on): what it prints is what the command
prints run on its own, a caller killed by its deadline has its command stopped, and wherever no warm
process can answer, the command runs in the caller."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from warm_processes import CHARTSHARE, EXAMPLE, descriptors, generate, spare_child, wait_for_socket, warm_env

from cmp.cache.store import Entry, Store
from cmp.warm import protocol
from conftest import ROOT, clean_env


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Path]:
    """A runtime folder of the test's own; every warm process serving from it is stopped afterwards."""
    folder = tmp_path / "run"
    yield folder
    for pid in _servers(folder):
        with contextlib.suppress(ProcessLookupError):  # a child of the warm process, listed as it ended
            os.kill(pid, signal.SIGTERM)


def _run(args: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run([CHARTSHARE, *args], cwd=ROOT, env=env, capture_output=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def _servers(runtime: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(runtime) in (entry / "cmdline").read_text():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _served(runtime: Path) -> list[str]:
    """The children the warm process noted in its log beside the socket (`child PID: COMMAND`)."""
    lines = [line for log in runtime.glob("warm-*.log") for line in log.read_text().splitlines()]
    return [line.split(" ", 2)[2] for line in lines if line.split(" ", 2)[2].startswith("child ")]


def test_a_served_request_prints_what_the_command_prints_on_its_own(runtime: Path, helm: str) -> None:
    statuses = []
    for args in (generate(helm), generate(helm, "--kube-version", "not-a-version"), ["check", "--help"]):
        alone = _run(args, clean_env())
        first = _run(args, warm_env(runtime))  # the first of all finds no warm process: runs here, starts one
        wait_for_socket(runtime)
        served = _run(args, warm_env(runtime))
        assert alone == first == served
        statuses.append(alone[0])
    assert statuses[0] == 0 and statuses[1] != 0 and statuses[2] == 0
    # at most all but the very first; fewer where the warm process of a loaded machine did not answer
    # within the hand-over (the command then ran in its caller, exact all the same)
    assert 1 <= len(_served(runtime)) <= 5


def test_a_request_runs_in_the_child_forked_before_it_which_holds_nothing_of_the_warm_process(
    runtime: Path, helm: str
) -> None:
    env = warm_env(runtime)
    _run(["check", "--help"], env)
    wait_for_socket(runtime)
    spare = spare_child(runtime)
    deadline = time.monotonic() + 10  # it lets go of the warm process's descriptors once it runs
    while len(held := descriptors(spare)) > 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [held.pop(fd) for fd in (0, 1, 2)] == ["/dev/null"] * 3
    assert [target.startswith("socket:") for target in held.values()] == [True]  # its channel, nothing else
    assert _run(generate(helm), env) == _run(generate(helm), clean_env())
    assert _served(runtime)[-1] == f"child {spare}: generate"
    assert spare_child(runtime) != spare  # the next one's


def test_a_spare_child_gone_before_its_request_leaves_the_request_served(runtime: Path, helm: str) -> None:
    env = warm_env(runtime)
    _run(["check", "--help"], env)
    wait_for_socket(runtime)
    os.kill(spare_child(runtime), signal.SIGKILL)
    time.sleep(0.2)
    served = len(_served(runtime))
    assert _run(generate(helm), env) == _run(generate(helm), clean_env())
    assert len(_served(runtime)) == served + 1  # in a child forked for it
    spare_child(runtime)  # and a spare again for the next


def test_the_cli_the_warm_process_preloads_reads_each_request_s_terminal(runtime: Path, helm: str) -> None:
    """init and parameters (Argo CD runs them beside every generate) go through the typer CLI, built once in
    the warm process; what click reads of the terminal (here the help's width) is still each request's."""
    app = ["--repo-root", str(ROOT), str(EXAMPLE / "apps" / "dev" / "notification")]
    init = ["init", *app[:2], "--helm", helm, app[2]]
    parameters = ["parameters", *app]
    _run(["check", "--help"], warm_env(runtime))
    wait_for_socket(runtime)
    for args in (init, parameters, ["check", "--help"]):
        for columns in ("60", "200"):
            alone = _run(args, clean_env({"COLUMNS": columns}))
            assert _run(args, warm_env(runtime, COLUMNS=columns)) == alone
            assert alone[0] == 0
    narrow, wide = (_run(["check", "--help"], warm_env(runtime, COLUMNS=c))[1] for c in ("60", "200"))
    assert narrow != wide
    assert _served(runtime)  # (a loaded warm process may leave a request to its caller: exact all the same)


def test_an_answer_reaches_a_file_opened_to_append_and_a_pipe(runtime: Path, helm: str, tmp_path: Path) -> None:
    """The caller copies a child's buffers out with sendfile, which refuses a file opened to append: then
    through the caller; a pipe (as Argo CD reads it) takes sendfile."""
    alone = _run(generate(helm), clean_env())
    env = warm_env(runtime)
    _run(["check", "--help"], env)
    wait_for_socket(runtime)
    target = tmp_path / "out.yaml"
    for _ in range(3):  # until one was served (a loaded warm process may leave a request to its caller)
        served = len(_served(runtime))
        target.write_bytes(b"before\n")
        with target.open("ab") as appended:
            done = subprocess.run([CHARTSHARE, *generate(helm)], cwd=ROOT, env=env, stdout=appended, timeout=120)
        assert done.returncode == 0 and target.read_bytes() == b"before\n" + alone[1]
        if len(_served(runtime)) > served:
            break
    assert _run(generate(helm), env) == alone  # capture_output: pipes


def test_a_served_render_answers_before_its_cache_writes_are_done(runtime: Path, helm: str, tmp_path: Path) -> None:
    """The render cache's and the identities' writes come after the answer: a served render answers while
    the cache's budget is locked (as an eviction elsewhere holds it), and its entry is written all the same
    once the lock goes, though the caller's leaving brings the child a SIGTERM; the next request is a hit."""
    cache = tmp_path / "cache"
    env = warm_env(runtime, CHARTSHARE_RENDER_CACHE="on", CHARTSHARE_CACHE=str(cache))
    alone = _run(generate(helm), clean_env({"CHARTSHARE_RENDER_CACHE": "off"}))
    _run(["check", "--help"], env)
    wait_for_socket(runtime)
    cache.mkdir(mode=0o700)
    budget = os.open(cache / ".usage", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(budget, fcntl.LOCK_EX)
    before = len(_served(runtime))
    request = subprocess.Popen(
        [CHARTSHARE, *generate(helm)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        out, err = request.communicate(timeout=30)
        answered_while_locked = True
    except subprocess.TimeoutExpired:  # run by its caller (a loaded warm process may leave it one)
        answered_while_locked = False
    finally:
        os.close(budget)  # at once: the server's SIGKILL comes GRACE seconds after the caller leaves
    if not answered_while_locked:
        out, err = request.communicate(timeout=60)
        assert len(_served(runtime)) == before, "a served request waited for the cache's budget"
    assert (request.returncode, out) == alone[:2] and b"(cached)" not in err
    deadline = time.monotonic() + 20
    while not list(cache.glob("renders/*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    again = _run(generate(helm), env)
    assert again[1] == alone[1] and b"(cached)" in again[2], again[2]


def test_a_served_miss_whose_helm_output_was_seen_before_reads_what_the_rules_made_of_it(
    runtime: Path, helm: str, tmp_path: Path
) -> None:
    """Inline values of a comment only: the render key misses and helm prints what it printed before; the
    served child prints what the rules made of that then (the entries replaced by a marker, to tell)."""
    cache = tmp_path / "cache"
    env = warm_env(runtime, CHARTSHARE_RENDER_CACHE="on", CHARTSHARE_CACHE=str(cache))
    assert _run(generate(helm, "--values-inline", "# one\n"), env)[0] == 0  # runs here, starts the warm process
    wait_for_socket(runtime)
    store = Store(str(cache / "renders"), 1 << 30)
    for entry in cache.glob("renders/*"):
        store.put(entry.name, Entry(b"kind: Marker\n", ("dev-shoong-notification: marker",)))
    served = _run(generate(helm, "--values-inline", "# two\n"), env)
    assert served[:2] == (0, b"kind: Marker\n"), served[2]  # (run in its caller where a loaded machine's
    # warm process did not answer within the hand-over: the same)


def test_an_answer_that_cannot_be_written_ends_in_an_error_line(runtime: Path, helm: str) -> None:
    env = warm_env(runtime)
    _run(["check", "--help"], env)
    wait_for_socket(runtime)
    for _ in range(3):  # until one was served (a loaded warm process may leave a request to its caller)
        served = len(_served(runtime))
        with open("/dev/full", "wb") as full:
            done = subprocess.run([CHARTSHARE, *generate(helm)], cwd=ROOT, env=env, stdout=full, stderr=subprocess.PIPE)
        if len(_served(runtime)) > served:
            break
    else:
        pytest.skip("no request was served")
    assert done.returncode == 1
    last = done.stderr.decode().splitlines()[-1]
    assert last == "chartshare: error: cannot write the output (No space left on device)"


_IMPORTED_AFTER_PRELOAD = """
import os, sys
from cmp.warm import server as warm_server
warm_server.preload()
before = set(sys.modules)
from cmp.cli import launch
told, sys.argv = sys.argv[1], ["chartshare", *sys.argv[2:]]
status = launch.run()
with open(told, "w") as found:
    found.write(" ".join(sorted(set(sys.modules) - before)) + f" status {status}")
"""


def test_a_child_of_the_warm_process_imports_nothing_to_render(helm: str, tmp_path: Path) -> None:
    """What the warm process loads before it forks each child loads once; a module left out is loaded by
    every request. A render cache miss, then a hit, on the example."""
    env = clean_env({"CHARTSHARE_RENDER_CACHE": "on", "CHARTSHARE_CACHE": str(tmp_path / "cache")})
    told = tmp_path / "imported"
    for _ in ("miss", "hit"):
        command = [sys.executable, "-c", _IMPORTED_AFTER_PRELOAD, str(told), *generate(helm)]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=120)
        assert done.returncode == 0 and told.read_text() == " status 0", (told.read_text(), done.stderr)


def _slow_helm(tmp_path: Path) -> tuple[Path, Path]:
    """A helm that notes its pid and then hangs, as a chart with a stalled lookup would."""
    pids = tmp_path / "helm.pid"
    slow = tmp_path / "helm"
    slow.write_text(f"#!/bin/sh\necho $$ > {pids}\nexec sleep 60\n")
    slow.chmod(0o755)
    return slow, pids


def _started(pids: Path) -> int:
    deadline = time.monotonic() + 20
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(pids.read_text())


def _served_hanging_render(runtime: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    """A caller whose command a warm process's child runs with a helm that hangs: the caller, helm's pid,
    the child's pid."""
    slow, pids = _slow_helm(tmp_path)
    env = warm_env(runtime)
    _run(["check", "--help"], env)
    wait_for_socket(runtime)
    caller = subprocess.Popen(
        [CHARTSHARE, *generate(str(slow))], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    helm_pid = _started(pids)
    return caller, helm_pid, int(_served(runtime)[-1].split()[1].rstrip(":"))


def test_a_caller_killed_by_its_deadline_has_its_command_stopped(runtime: Path, tmp_path: Path) -> None:
    caller, helm_pid, child = _served_hanging_render(runtime, tmp_path)
    caller.kill()  # as Argo CD does at its deadline: SIGKILL, no chance to print
    caller.wait()
    assert _gone(helm_pid, within=10), "the served command's helm outlived its caller"
    assert _gone(child, within=10)


def test_a_child_killed_outright_takes_its_helm_along(runtime: Path, tmp_path: Path) -> None:
    """A served command's helm has no death signal (it is started with vfork): when its child is killed
    before it can stop helm (SIGKILL, the kernel's out-of-memory killer), the warm process ends what is
    left of the child's session."""
    caller, helm_pid, child = _served_hanging_render(runtime, tmp_path)
    try:
        assert os.getsid(helm_pid) == child and os.getpgid(helm_pid) == helm_pid
        os.kill(child, signal.SIGKILL)
        assert _gone(helm_pid, within=10), "helm outlived the warm process's child that started it"
        assert _gone(child, within=10)
    finally:
        caller.kill()  # it runs the command itself once its child is gone
        caller.wait()


def test_a_command_run_in_the_caller_takes_its_helm_along_when_killed(tmp_path: Path) -> None:
    """helm's own session is out of reach of the SIGTERM Argo CD sends the caller's process group; it goes
    with the caller all the same (also where a loaded warm process did not take the request in time)."""
    slow, pids = _slow_helm(tmp_path)
    caller = subprocess.Popen(
        [CHARTSHARE, *generate(str(slow))],
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    helm_pid = _started(pids)
    caller.kill()
    caller.wait()
    assert _gone(helm_pid, within=10), "helm outlived the chartshare that started it"


def test_without_a_folder_of_its_own_the_command_runs_in_the_caller(runtime: Path, helm: str) -> None:
    runtime.mkdir(mode=0o777)
    runtime.chmod(0o777)  # others may write there: no socket is trusted in it
    alone = _run(generate(helm), clean_env())
    assert _run(generate(helm), warm_env(runtime)) == alone
    time.sleep(0.5)
    assert not list(runtime.glob("warm-*")) and not _servers(runtime)


def test_a_socket_nobody_listens_on_is_replaced(runtime: Path, helm: str) -> None:
    env = warm_env(runtime)
    runtime.mkdir(mode=0o700)
    stale = subprocess.run(
        [sys.executable, "-c", "from cmp.warm import protocol; print(protocol.socket_path())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(stale)
    dead.close()  # the file stays, nothing listens
    alone = _run(generate(helm), clean_env())
    assert _run(generate(helm), env) == alone
    assert str(wait_for_socket(runtime)) == stale
    for _ in range(3):  # until one was served (a loaded warm process may leave a request to its caller)
        assert _run(generate(helm), env) == alone
        if _served(runtime):
            break
    assert len(_served(runtime)) == 1


def test_an_idle_warm_process_ends_and_takes_its_socket_along(runtime: Path) -> None:
    env = warm_env(runtime, CHARTSHARE_WARM_IDLE="1")
    _run(["check", "--help"], env)
    path = wait_for_socket(runtime)
    deadline = time.monotonic() + 15
    while (path.exists() or _servers(runtime)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not path.exists() and not _servers(runtime)


texts = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=20)


@given(
    st.lists(texts, max_size=5),
    texts,
    st.integers(0, 0o777),
    st.dictionaries(texts.filter(lambda k: "=" not in k and k), texts, max_size=5),
)
def test_a_request_reads_back_as_it_was_sent(argv: list[str], cwd: str, umask: int, env: dict[str, str]) -> None:
    request = protocol.Request.decode(protocol.Request(argv, cwd, umask, env).encode())
    assert (request.argv, request.cwd, request.umask, request.env) == (argv, cwd, umask, env)


@given(
    st.binary(max_size=200)
    | st.lists(st.sampled_from(["", "/", "0", "18", "2", "a=b", "=b", "x"])).map(
        lambda fields: "\0".join(fields).encode()
    )
)
def test_bytes_a_caller_did_not_encode_are_a_value_error(data: bytes) -> None:
    """Anyone of this user may connect: the warm process refuses what does not decode, before a child runs."""
    try:
        request = protocol.Request.decode(data)
    except ValueError:
        return
    assert protocol.Request.decode(request.encode()).encode() == request.encode()


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.1)
    return False


def test_the_warm_process_imports_nothing_from_the_repository_it_was_started_in(runtime: Path, tmp_path: Path) -> None:
    repository = tmp_path / "repository"
    (repository / "yaml").mkdir(parents=True)
    marker = tmp_path / "imported"
    (repository / "yaml" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    env = warm_env(runtime)
    subprocess.run([CHARTSHARE, "check", "--help"], cwd=repository, env=env, capture_output=True, timeout=60)
    wait_for_socket(runtime)
    assert not marker.exists()


def test_an_installation_whose_code_changed_is_served_by_a_warm_process_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "cmp"
    (package / "warm" / "__pycache__").mkdir(parents=True)
    (package / "deep" / "er").mkdir(parents=True)
    for module in ("__init__.py", "warm/protocol.py", "deep/er/stage.py"):
        (package / module).write_text("")
        os.utime(package / module, ns=(1_000_000_000, 1_000_000_000))
    monkeypatch.setattr(protocol, "__file__", str(package / "warm" / "protocol.py"))
    before = protocol.installation_stamp()
    (package / "warm" / "__pycache__" / "protocol.cpython-311.pyc").write_text("")
    (package / "notes.txt").write_text("")
    assert protocol.installation_stamp() == before  # bytecode and other files are no code change
    os.utime(package / "deep" / "er" / "stage.py", ns=(2_000_000_000, 2_000_000_000))
    assert protocol.installation_stamp() != before
