"""The Dockerfile, tested without a Docker engine: parsed, its build stage run as written, and the result
served by the cmp-server emulator as uid 999 with HOME=/tmp and a read-only copy of the repository."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from dockerfile_parse import DockerfileParser
from emulator import Application, CmpServer
from sidecar_support import (
    SIDECAR_UID,
    checkout,
    make_writable,
    plugin_applications,
    shared_tmp,
    tracked_files,
)

from cmp import __version__
from cmp.inputs import plugin_yaml
from conftest import ROOT

DOCKERFILE = ROOT / "Dockerfile"
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # the python image's PATH
BUILD_TOOLS = re.compile(r"\b(apt-get|apk|gcc|g\+\+|make|build-essential|pip3? install|python -m pip install)\b")
APPLICATIONS = plugin_applications()


@dataclass
class Stage:
    """One FROM ... section: its base, name, and instructions in order."""

    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def values(self, instruction: str) -> list[str]:
        return [value for kind, value in self.instructions if kind == instruction]


def _pairs(value: str) -> dict[str, str]:
    """`ENV A=1 B=2` / `ARG A=1` into a dict (shell-style quoting)."""
    return dict(item.partition("=")[::2] for item in shlex.split(value))


def _expand(text: str, variables: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: variables.get(m.group(1) or m.group(2), ""), text)


def _stages() -> tuple[dict[str, str], list[Stage]]:
    parser = DockerfileParser(str(DOCKERFILE))
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for item in parser.structure:
        instruction, value = item["instruction"], item["value"]
        if instruction == "FROM":
            base, _, name = value.partition(" AS ")
            stages.append(Stage(_expand(base, global_args), name.strip()))
        elif not stages:
            if instruction == "ARG":
                global_args.update(_pairs(value))
        else:
            stages[-1].instructions.append((instruction, value))
    return global_args, stages


def test_helm_comes_from_a_pinned_argo_cd_image() -> None:
    args, stages = _stages()
    assert re.fullmatch(r"v[0-9]+\.[0-9]+\.[0-9]+", args["ARGOCD_VERSION"])
    (argocd,) = [stage for stage in stages if stage.base.startswith("quay.io/argoproj/argocd:")]
    assert argocd.base == f"quay.io/argoproj/argocd:{args['ARGOCD_VERSION']}"
    assert f"--from={argocd.name} /usr/local/bin/helm /usr/local/bin/helm" in stages[-1].values("COPY")


def test_the_default_argo_cd_is_the_newest_release_the_tools_table_names() -> None:
    """The image's helm is the one the suite tests first: the table's newest release ships it."""
    import argocd_tools

    args, _ = _stages()
    assert args["ARGOCD_VERSION"].startswith(f"v{argocd_tools.RELEASES[-1].argocd}.")


def test_the_final_image_is_slim_python_running_argocd_cmp_server_as_999() -> None:
    _, stages = _stages()
    final = stages[-1]
    assert re.fullmatch(r"docker\.io/library/python:[0-9.]+-slim", final.base)
    assert final.values("USER") == [str(SIDECAR_UID)]
    assert final.values("ENTRYPOINT") == ['["/usr/bin/tini", "--", "/var/run/argocd/argocd-cmp-server"]']
    assert "--from=init /usr/bin/tini-static /usr/bin/tini" in final.values("COPY"), "PID 1 reaps orphans"
    assert f"plugin.yaml {plugin_yaml.CONFIG_PATH}" in final.values("COPY")
    env = {key: value for line in final.values("ENV") for key, value in _pairs(line).items()}
    assert env["HOME"] == "/tmp"
    helm_homes = {key: value for key, value in env.items() if key.startswith("HELM_")}
    assert set(helm_homes) == {"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"}
    assert all(value.startswith("/tmp/") for value in helm_homes.values())
    assert env["CHARTSHARE_CACHE"].startswith("/tmp/")


def test_no_build_tools_are_left_in_the_final_image() -> None:
    _, stages = _stages()
    final = stages[-1]
    assert not [run for run in final.values("RUN") if BUILD_TOOLS.search(run)], "the final stage installs nothing"
    assert any("pip uninstall" in run for run in final.values("RUN")), "pip itself is removed"
    copies = [value.split() for value in final.values("COPY")]
    assert all(parts[0].startswith("--from=") or parts[0] == "plugin.yaml" for parts in copies)


def test_the_build_context_holds_what_the_dockerfile_copies() -> None:
    _, stages = _stages()
    sources = {
        source
        for stage in stages
        for value in stage.values("COPY")
        if not value.startswith("--from=")
        for source in value.split()[:-1]
    }
    tracked = set(tracked_files())
    for source in sources:
        assert any(name == source or name.startswith(source) for name in tracked), source


@dataclass(frozen=True)
class Install:
    """The build stage's result on this machine, and the final stage's environment mapped onto it."""

    venv: Path
    env: dict[str, str]
    under_tmp: frozenset[str]  # variables the Dockerfile points below /tmp


def _system_python(target: Path) -> Path:
    """A folder whose `python` is the system's Python 3 with pip: the one uid 999 can run, as in the image
    (this session's own interpreter lives under /root, which uid 999 cannot enter)."""
    python = Path("/usr/bin/python3")
    probe = subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True, check=False)
    if probe.returncode != 0:
        message = "the system Python 3 with pip is needed: run `make system-deps` (python3-pip, python3-venv)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    target.mkdir(parents=True)
    (target / "python").symlink_to(python)
    return target


def _run_build_stage(stage: Stage, context: Path, root: Path, overrides: dict[str, str]) -> dict[str, str]:
    """WORKDIR, COPY and RUN exactly as written, with absolute paths moved under `root`."""
    python_bin = _system_python(root / "python-bin")
    variables: dict[str, str] = {}
    workdir = root
    for instruction, value in stage.instructions:
        if instruction == "ARG":
            variables.update({key: overrides.get(key, default) for key, default in _pairs(value).items()})
        elif instruction == "WORKDIR":
            workdir = root / _expand(value, variables).lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "COPY":
            *sources, destination = _expand(value, variables).split()
            for source in sources:
                source_path = context / source.rstrip("/")
                target = workdir / destination
                if source_path.is_dir():
                    shutil.copytree(source_path, target, dirs_exist_ok=True)
                else:
                    shutil.copy2(source_path, target / source_path.name if destination.endswith("/") else target)
        elif instruction == "RUN":
            path = f"{python_bin}:{BASE_PATH}"
            env = {"PATH": path, "HOME": str(root), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
            completed = subprocess.run(
                ["sh", "-c", _expand(value, variables)], cwd=workdir, env=env, capture_output=True, text=True
            )
            assert completed.returncode == 0, f"RUN {value}\n{completed.stdout}\n{completed.stderr}"
    return variables


@pytest.fixture(scope="module")
def install() -> Iterator[Install]:
    """pip wheel + a clean virtualenv, by the Dockerfile's own RUN lines."""
    root = shared_tmp("chartshare-image-")
    _, stages = _stages()
    (build,) = [stage for stage in stages if stage.name == "build"]
    context = checkout(root / "context")
    venv = root / "opt" / "chartshare"
    _run_build_stage(build, context, root / "build", {"VENV": str(venv)})
    final_env: dict[str, str] = {"PATH": BASE_PATH, "VENV": str(venv)}
    under_tmp: set[str] = set()
    for line in stages[-1].values("ENV"):
        for key, value in _pairs(line).items():
            final_env[key] = _expand(value, final_env)
            if value.startswith("/tmp/"):
                under_tmp.add(key)
    final_env.pop("VENV")
    for current, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(current) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))
    yield Install(venv, final_env, frozenset(under_tmp))
    shutil.rmtree(root, ignore_errors=True)


def test_the_wheel_installs_into_a_venv_without_pip(install: Install) -> None:
    assert not list(install.venv.glob("lib/python*/site-packages/pip"))
    version = subprocess.run(
        [str(install.venv / "bin" / "chartshare"), "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout == f"chartshare {__version__}\n"


def test_chartshare_is_its_own_isolated_launcher(install: Install) -> None:
    """Not pip's console script, whose `import re` is 12 ms of every request's start."""
    program = (install.venv / "bin" / "chartshare").read_text()
    assert program.startswith(f"#!{install.venv}/bin/python -I\n") and "import re" not in program


@pytest.fixture(scope="module")
def sidecar(install: Install, helm: str) -> Iterator[tuple[CmpServer, Path]]:
    """The image's environment, with /usr/local/bin/helm and every folder under /tmp mapped to this test."""
    if os.geteuid() != 0:
        pytest.skip("running the plugin as uid 999 needs root (CI runs as root)")
    root = shared_tmp("chartshare-sidecar-999-")
    (root / "usr-local-bin").mkdir()
    shutil.copy2(helm, root / "usr-local-bin" / "helm")
    env = dict(install.env)
    env["PATH"] = env["PATH"].replace("/usr/local/bin", f"{root / 'usr-local-bin'}:/usr/local/bin")
    for key in install.under_tmp:
        env[key] = str(root / "tmp" / env[key].removeprefix("/tmp/"))
    (root / "tmp").mkdir()
    os.chown(root / "tmp", SIDECAR_UID, SIDECAR_UID)
    assert env["HOME"] == "/tmp"
    repository = checkout(root / "repo", read_only=True)
    plugin = root / "config" / "plugin.yaml"
    plugin.parent.mkdir()
    shutil.copy2(ROOT / "plugin.yaml", plugin)
    server = CmpServer(plugin, env, workdir=root / "tmp", user=SIDECAR_UID)
    yield server, repository
    make_writable(repository)
    shutil.rmtree(root, ignore_errors=True)


def test_the_sidecar_runs_commands_as_uid_999(sidecar: tuple[CmpServer, Path], tmp_path: Path) -> None:
    server, repository = sidecar
    probe = tmp_path / "plugin.yaml"
    probe.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: probe}\n"
        "spec:\n  discover: {fileName: '*'}\n  generate:\n    command: [sh, -c]\n"
        '    args: [\'printf "{\\"kind\\":\\"ConfigMap\\",\\"metadata\\":{\\"name\\":\\"%s-%s\\"}}" $(id -u) $HOME\']\n'
    )
    prober = CmpServer(probe, server.sidecar_env, workdir=server.workdir.parent, user=SIDECAR_UID)
    app = Application.from_manifest({"metadata": {"name": "p"}, "spec": {"source": {"path": ".", "plugin": {}}}})
    (obj,) = prober.manifests(app, repository)
    assert obj["metadata"]["name"] == f"{SIDECAR_UID}-/tmp"


@pytest.mark.parametrize(("name", "manifest"), APPLICATIONS, ids=[name for name, _ in APPLICATIONS])
def test_example_application_renders_in_the_image_as_uid_999(
    name: str, manifest: dict[str, Any], sidecar: tuple[CmpServer, Path]
) -> None:
    server, repository = sidecar
    app = Application.from_manifest(manifest)
    objects = server.manifests(app, repository)
    assert objects, name
    announced = {entry["name"]: entry for entry in reversed(server.parameters(app, repository))}
    assert "Cannot show" not in announced["config"]["tooltip"], announced["config"]["tooltip"]
    assert all(argv[0] == "chartshare" and env["HOME"] == "/tmp" for argv, env in server.runs)
