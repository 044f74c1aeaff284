"""An emulator of argocd-cmp-server, and of the repo-server side that calls it, for tests.

Argo CD cannot run here, so the tests run plugin.yaml the way Argo CD does. Each rule below follows Argo CD's
source (argoproj/argo-cd, v3.5):

- plugin.yaml is read and validated as in cmpserver/plugin/config.go (kind, metadata.name, generate.command,
  one discover rule); this emulator is stricter and also refuses unknown keys, which Argo CD ignores silently;
- the plugin is selected as in util/app/discovery/discovery.go: `plugin.name` must be `<name>-<version>`, a
  named plugin with a discover rule must still match, `plugin: {}` takes the plugin whose rule matches;
  the rules (fileName glob, find.glob with `**`, find.command: exit 0 and non-empty stdout) run relative to
  the app path, as in cmpserver/plugin/plugin.go matchRepository;
- every request gets a fresh copy of the whole repository (util/cmp/stream.go, util/io/files/tar.go): folders
  0755, files 0644 (no preserveFileMode), symlinks kept only when they resolve inside the copy;
- commands run without a shell, argv = command + args, cwd = the app path, in their own process group, with
  the sidecar's environment plus the request's (request values win), as in plugin.go runCommand;
- the request environment is built as in reposerver/repository/repository.go (newEnv, getPluginEnvs,
  getPluginParamEnvs) and pkg/apis/application/v1alpha1/types.go (Env.Environ, Env.Envsubst,
  ApplicationSourcePluginParameters.Environ, escaped, Application.InstanceName): ARGOCD_APP_* with the app
  named `<namespace>_<name>` outside the control-plane namespace, KUBE_VERSION / KUBE_API_VERSIONS,
  ARGOCD_ENV_<name> with `$VAR` expanded from the request variables, ARGOCD_APP_PARAMETERS (Go's JSON: sorted
  keys, `<>&` escaped, the literal `null` when the plugin block has no parameters) and PARAM_*;
  the parameter announcement gets only what populatePluginAppDetails sends (no KUBE_*, no revision, no
  destination namespace);
- init and generate share one deadline, the request's 60 s minus 100 ms (cmpTimeoutBuffer); on expiry the
  command is SIGKILLed, its process group gets SIGTERM and, 5 s later, SIGKILL; when a request ends, the
  groups of its commands get the same TERM-then-KILL (the goroutine in runCommand fires on cancel too);
- stdout, less one trailing newline, is split as gitops-engine's kube.SplitYAMLToString does (YAML or
  concatenated JSON; a `---` line followed by anything but a comment is an error; empty and `null` documents
  skipped); each document must be an object with a non-empty string `kind` (unstructured decoding), objects
  with an `items` list are flattened and `items: null` lists dropped (repository.go GenerateManifests);
- the dynamic announcement is a JSON array of ParameterAnnouncement, placed before the static ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cmp import goyaml

CONTROL_PLANE_NAMESPACE = "argocd"
REQUEST_DEADLINE = 60.0  # the repo-server's gRPC deadline towards the sidecar
CMP_TIMEOUT_BUFFER = 0.1  # cmpserver/plugin/plugin.go cmpTimeoutBuffer
GROUP_KILL_GRACE = 5.0  # runCommand: SIGTERM to the group, SIGKILL 5 s later
MAX_MANIFEST_BYTES = 100 * 1024 * 1024  # ARGOCD_GRPC_MAX_SIZE_MB default
ANNOUNCEMENT_FIELDS: dict[str, type] = {
    "name": str,
    "title": str,
    "tooltip": str,
    "required": bool,
    "itemType": str,
    "collectionType": str,
    "string": str,
    "array": list,
    "map": dict,
}
COLLECTION_TYPES = ("", "string", "array", "map")
PLUGIN_KEYS = {
    "": ("apiVersion", "kind", "metadata", "spec"),
    "spec": ("version", "init", "generate", "discover", "parameters", "preserveFileMode", "provideGitCreds"),
    "spec.init": ("command", "args"),
    "spec.generate": ("command", "args"),
    "spec.discover": ("fileName", "find"),
    "spec.discover.find": ("command", "args", "glob"),
    "spec.parameters": ("static", "dynamic"),
    "spec.parameters.dynamic": ("command", "args"),
}
# What a small cluster reports (sorted, both group/version and group/version/Kind, core as v1).
DEFAULT_API_VERSIONS = tuple(
    sorted(
        [
            "v1",
            *(f"v1/{kind}" for kind in ("ConfigMap", "Namespace", "Pod", "Secret", "Service", "ServiceAccount")),
            "apps/v1",
            *(f"apps/v1/{kind}" for kind in ("DaemonSet", "Deployment", "StatefulSet")),
            "batch/v1",
            "batch/v1/CronJob",
            "batch/v1/Job",
            "autoscaling/v2",
            "autoscaling/v2/HorizontalPodAutoscaler",
            "networking.k8s.io/v1",
            "networking.k8s.io/v1/Ingress",
            "policy/v1",
            "policy/v1/PodDisruptionBudget",
            "rbac.authorization.k8s.io/v1",
            *(
                f"rbac.authorization.k8s.io/v1/{kind}"
                for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
            ),
            "apiextensions.k8s.io/v1",
            "apiextensions.k8s.io/v1/CustomResourceDefinition",
        ]
    )
)


class PluginConfigError(Exception):
    """plugin.yaml is invalid (Argo CD's validation, plus unknown keys)."""


class DiscoveryError(Exception):
    """No plugin supports the Application (discovery.go's message)."""


class CmpError(Exception):
    """A plugin command failed: the text Argo CD shows in the UI (plugin.go CmdError)."""

    def __init__(self, args: str, cause: str, stderr: str) -> None:
        self.command = args
        self.cause = cause
        self.stderr = stderr
        text = f"`{args}` failed {cause}"
        super().__init__(f"{text}: {stderr}" if stderr else text)


class ManifestError(Exception):
    """The generated stream is one Argo CD refuses."""


@dataclass(frozen=True)
class Command:
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()

    @property
    def argv(self) -> list[str]:
        return [*self.command, *self.args]

    def __bool__(self) -> bool:
        return bool(self.command)


@dataclass(frozen=True)
class PluginConfig:
    """The parts of plugin.yaml argocd-cmp-server uses."""

    name: str
    version: str
    init: Command
    generate: Command
    discover_file_name: str
    discover_glob: str
    discover_command: Command
    static: tuple[dict[str, Any], ...]
    dynamic: Command
    preserve_file_mode: bool
    provide_git_creds: bool

    @property
    def plugin_name(self) -> str:
        """What an Application writes in `source.plugin.name` (the socket file name without `.sock`)."""
        return f"{self.name}-{self.version}" if self.version else self.name

    @property
    def discovery_configured(self) -> bool:
        return bool(self.discover_file_name or self.discover_glob or self.discover_command)

    @classmethod
    def load(cls, path: Path) -> PluginConfig:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(document, dict):
            raise PluginConfigError(f"{path}: not a mapping")
        _known_keys(document, "")
        if document.get("kind") != "ConfigManagementPlugin":
            raise PluginConfigError(
                "invalid plugin configuration file. kind should be ConfigManagementPlugin, "
                f"found {document.get('kind')}"
            )
        name = (document.get("metadata") or {}).get("name") or ""
        if not name:
            raise PluginConfigError("invalid plugin configuration file. metadata.name should be non-empty.")
        spec = document.get("spec") or {}
        generate = _command(spec.get("generate"))
        if not generate:
            raise PluginConfigError("invalid plugin configuration file. spec.generate command should be non-empty")
        discover = spec.get("discover") or {}
        find = discover.get("find") or {}
        parameters = spec.get("parameters") or {}
        static = tuple(parameters.get("static") or ())
        for position, entry in enumerate(static):
            check_announcement(entry, f"spec.parameters.static[{position}]")
        config = cls(
            name=str(name),
            version=str(spec.get("version") or ""),
            init=_command(spec.get("init")),
            generate=generate,
            discover_file_name=str(discover.get("fileName") or ""),
            discover_glob=str(find.get("glob") or ""),
            discover_command=_command(find),
            static=static,
            dynamic=_command(parameters.get("dynamic")),
            preserve_file_mode=bool(spec.get("preserveFileMode", False)),
            provide_git_creds=bool(spec.get("provideGitCreds", False)),
        )
        if not config.discovery_configured:
            raise PluginConfigError(
                "invalid plugin configuration file. atleast one of discover.find.command or discover.find.glob "
                "or discover.fineName should be non-empty"
            )
        return config


def _known_keys(node: Any, where: str) -> None:
    allowed = PLUGIN_KEYS.get(where)
    if allowed is None or not isinstance(node, dict):
        return
    for key, value in node.items():
        if key not in allowed:
            raise PluginConfigError(
                f"plugin.yaml: unknown key {where + '.' if where else ''}{key} (Argo CD ignores it)"
            )
        _known_keys(value, f"{where}.{key}" if where else key)


def _command(node: Any) -> Command:
    if not node:
        return Command()
    return Command(
        tuple(str(part) for part in node.get("command") or ()), tuple(str(a) for a in node.get("args") or ())
    )


def check_announcement(entry: Any, where: str) -> None:
    """One ParameterAnnouncement: known fields with Go's types (json.Unmarshal fails on a wrong type)."""
    if not isinstance(entry, dict):
        raise ManifestError(f"{where}: a parameter announcement must be an object")
    for key, value in entry.items():
        expected = ANNOUNCEMENT_FIELDS.get(key)
        if expected is None:
            raise ManifestError(f"{where}: unknown field {key!r} (Argo CD ignores it)")
        if not isinstance(value, expected):
            raise ManifestError(f"{where}.{key}: must be {expected.__name__}, got {type(value).__name__}")
    if not entry.get("name"):
        raise ManifestError(f"{where}: name is empty")
    if entry.get("collectionType", "") not in COLLECTION_TYPES:
        raise ManifestError(f"{where}: collectionType {entry['collectionType']!r} is not one of {COLLECTION_TYPES}")
    if not all(isinstance(item, str) for item in entry.get("array", [])):
        raise ManifestError(f"{where}.array: items must be strings")
    if not all(isinstance(item, str) for item in entry.get("map", {}).values()):
        raise ManifestError(f"{where}.map: values must be strings")


@dataclass(frozen=True)
class Application:
    """What the repo-server learns about an Application: names, source, destination, plugin block."""

    name: str
    namespace: str
    project: str
    repo_url: str
    path: str
    target_revision: str
    destination_namespace: str
    destination_server: str
    plugin: Mapping[str, Any] | None

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> Application:
        metadata = manifest.get("metadata") or {}
        spec = manifest.get("spec") or {}
        sources = spec.get("sources") or []
        # A multi-source Application: the source that names a plugin is the one the sidecar renders.
        source = spec.get("source") or next((s for s in sources if "plugin" in s), sources[0] if sources else {})
        destination = spec.get("destination") or {}
        return cls(
            name=str(metadata.get("name", "")),
            namespace=str(metadata.get("namespace", "")),
            project=str(spec.get("project", "")),
            repo_url=str(source.get("repoURL", "")),
            path=str(source.get("path", "")),
            target_revision=str(source.get("targetRevision", "")),
            destination_namespace=str(destination.get("namespace", "")),
            destination_server=str(destination.get("server") or destination.get("name") or ""),
            plugin=source.get("plugin") if "plugin" in source else None,
        )

    def instance_name(self, control_plane_namespace: str = CONTROL_PLANE_NAMESPACE) -> str:
        """Application.InstanceName: `<namespace>_<name>` outside the control-plane namespace."""
        if not self.namespace or self.namespace == control_plane_namespace:
            return self.name
        return f"{self.namespace}_{self.name}"


@dataclass(frozen=True)
class Cluster:
    """What the controller knows of the destination cluster."""

    kube_version: str = "1.31.4"
    api_versions: tuple[str, ...] = DEFAULT_API_VERSIONS


def escaped(name: str) -> str:
    """types.go escaped(): upper-case, every char outside [A-Z0-9_] becomes `_`."""
    return re.sub(r"[^A-Z0-9_]", "_", name.upper())


def go_json(value: Any) -> str:
    """encoding/json.Marshal: compact, map keys sorted, `<`, `>` and `&` escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def envsubst(text: str, values: Mapping[str, str]) -> str:
    """Env.Envsubst: Go's os.Expand with `$$` kept as `$` and unknown names empty."""
    out: list[str] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char != "$" or position + 1 >= len(text):
            out.append(char)
            position += 1
            continue
        name, width = _shell_name(text[position + 1 :])
        if name == "" and width > 0:
            pass  # invalid syntax: eaten
        elif name == "":
            out.append("$")
        else:
            out.append("$" if name == "$" else values.get(name, ""))
        position += 1 + width
    return "".join(out)


def _shell_name(rest: str) -> tuple[str, int]:
    if rest[0] == "{":
        if len(rest) > 2 and rest[1] in "*#$@!?-0123456789" and rest[2] == "}":
            return rest[1], 3
        end = rest.find("}")
        if end == -1:
            return "", 1
        name = rest[1:end]
        return (name, end + 1) if name and re.fullmatch(r"[A-Za-z0-9_]+", name) else ("", end + 1)
    if rest[0] in "*#$@!?-0123456789":
        return rest[0], 1
    found = re.match(r"[A-Za-z0-9_]+", rest)
    return (found.group(0), len(found.group(0))) if found else ("", 0)


def parameter_env(parameters: Sequence[Mapping[str, Any]] | None) -> list[tuple[str, str]]:
    """ApplicationSourcePluginParameters.Environ."""
    marshalled = []
    for parameter in parameters or ():
        entry: dict[str, Any] = {"name": parameter["name"]}
        for kind in ("string", "map", "array"):
            if kind in parameter:
                entry[kind] = parameter[kind] if parameter[kind] is not None else ({} if kind == "map" else [])
        marshalled.append(entry)
    env = [("ARGOCD_APP_PARAMETERS", go_json(marshalled) if parameters else "null")]
    for entry in marshalled:
        base = "PARAM_" + escaped(entry["name"])
        if "string" in entry:
            env.append((base, str(entry["string"])))
        for key, value in (entry.get("map") or {}).items():
            env.append((f"{base}_{escaped(key)}", str(value)))
        for index, value in enumerate(entry.get("array") or []):
            env.append((f"{base}_{index}", str(value)))
    return env


def kube_version(version: str) -> str:
    """repository.go parseKubeVersion: k8s version.ParseGeneric(...).String(), so `v1.29.3+k3s1` -> `1.29.3`."""
    if not version:
        return ""
    found = re.match(r"^\s*v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", version)
    if not found:
        raise ValueError(f"could not parse kubernetes version {version}")
    return f"{int(found.group(1))}.{int(found.group(2))}.{int(found.group(3) or 0)}"


@dataclass
class Request:
    """One gRPC request: its deadline, and the process groups its commands started."""

    deadline: float
    groups: list[int] = field(default_factory=list)


class CmpServer:
    """argocd-cmp-server for one plugin.yaml, driven the way the repo-server drives it."""

    def __init__(
        self,
        plugin_yaml: Path,
        sidecar_env: Mapping[str, str],
        *,
        workdir: Path,
        user: int | None = None,
        group: int | None = None,
        deadline: float = REQUEST_DEADLINE,
        control_plane_namespace: str = CONTROL_PLANE_NAMESPACE,
    ) -> None:
        self.config = PluginConfig.load(plugin_yaml)
        self.sidecar_env = dict(sidecar_env)
        self.workdir = workdir / "_cmp_server"  # common.GetCMPWorkDir()
        self.user = user
        self.group = group if group is not None else user
        self.deadline = deadline
        self.control_plane_namespace = control_plane_namespace
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._chown(self.workdir)
        self.runs: list[tuple[list[str], dict[str, str]]] = []  # argv and environment of every command run

    # -- the repo-server's side -------------------------------------------------------------------------

    def generate_env(self, app: Application, cluster: Cluster, revision: str) -> list[tuple[str, str]]:
        """newEnv + getPluginEnvs + getPluginParamEnvs, in Argo CD's order."""
        entries = [
            ("ARGOCD_APP_NAME", app.instance_name(self.control_plane_namespace)),
            ("ARGOCD_APP_NAMESPACE", app.destination_namespace),
            ("ARGOCD_APP_PROJECT_NAME", app.project),
            ("ARGOCD_APP_REVISION", revision),
            ("ARGOCD_APP_REVISION_SHORT", revision[:7]),
            ("ARGOCD_APP_REVISION_SHORT_8", revision[:8]),
            ("ARGOCD_APP_SOURCE_REPO_URL", app.repo_url),
            ("ARGOCD_APP_SOURCE_PATH", app.path),
            ("ARGOCD_APP_SOURCE_TARGET_REVISION", app.target_revision),
        ]
        entries = [(name, value) for name, value in entries if name or value]  # Env.Environ skips zero entries
        entries += [
            ("KUBE_VERSION", kube_version(cluster.kube_version)),
            ("KUBE_API_VERSIONS", ",".join(cluster.api_versions)),
        ]
        return self._plugin_env(entries, app)

    def announcement_env(self, app: Application) -> list[tuple[str, str]]:
        """populatePluginAppDetails: the reduced environment of the parameters call."""
        entries = [
            ("ARGOCD_APP_NAME", app.instance_name(self.control_plane_namespace)),
            ("ARGOCD_APP_SOURCE_REPO_URL", app.repo_url),
            ("ARGOCD_APP_SOURCE_PATH", app.path),
            ("ARGOCD_APP_SOURCE_TARGET_REVISION", app.target_revision),
        ]
        return self._plugin_env(entries, app)

    @staticmethod
    def _plugin_env(entries: list[tuple[str, str]], app: Application) -> list[tuple[str, str]]:
        if app.plugin is None:
            return entries
        values = dict(entries)
        env = list(entries)
        for item in app.plugin.get("env") or ():
            env.append((f"ARGOCD_ENV_{item['name']}", envsubst(str(item.get("value", "")), values)))
        return env + parameter_env(app.plugin.get("parameters"))

    def select(self, app: Application, repo: Path, env: list[tuple[str, str]]) -> None:
        """DetectConfigManagementPlugin for this one plugin; raises DiscoveryError when it would not be used."""
        if app.plugin is None:
            raise DiscoveryError("the Application has no plugin source")
        name = str(app.plugin.get("name") or "")
        if name:
            if name != self.config.plugin_name:
                raise DiscoveryError(
                    f'could not find cmp-server plugin with name "{name}" supporting the given repository'
                )
            if self.config.discovery_configured and not self.matches(app, repo, env):
                raise DiscoveryError(
                    f'could not find cmp-server plugin with name "{name}" supporting the given repository'
                )
            return
        if not self.matches(app, repo, env):
            raise DiscoveryError("could not find plugin supporting the given repository")

    def manifests(
        self, app: Application, repo: Path, cluster: Cluster | None = None, revision: str = "0" * 40
    ) -> list[dict[str, Any]]:
        """GenerateManifests for a plugin source: discovery, init + generate, parsing, List flattening."""
        env = self.generate_env(app, cluster or Cluster(), revision)
        self.select(app, repo, env)
        stdout = self.generate_manifest(app, repo, env)
        if len(stdout.encode()) > MAX_MANIFEST_BYTES:
            raise ManifestError("the manifests exceed ARGOCD_GRPC_MAX_SIZE_MB")
        return flatten(split_manifests(stdout))

    def parameters(self, app: Application, repo: Path) -> list[dict[str, Any]]:
        """GetParametersAnnouncement: dynamic entries first, then the static ones of plugin.yaml."""
        env = self.announcement_env(app)
        self.select(app, repo, env)
        dynamic: list[dict[str, Any]] = []
        if self.config.dynamic:
            with self._request() as request, self._checkout(repo, app) as app_path:
                stdout = self._run(self.config.dynamic, app_path, env, request)
            loaded = json.loads(stdout) if stdout.strip() else None
            if loaded is not None and not isinstance(loaded, list):
                raise ManifestError("error unmarshaling dynamic parameter output: not a JSON array")
            dynamic = list(loaded or [])
            for position, entry in enumerate(dynamic):
                check_announcement(entry, f"dynamic[{position}]")
        return [*dynamic, *self.config.static]

    # -- the sidecar's side -----------------------------------------------------------------------------

    def matches(self, app: Application, repo: Path, env: list[tuple[str, str]]) -> bool:
        """matchRepository: only the first configured rule counts."""
        with self._request() as request, self._checkout(repo, app) as app_path:
            if self.config.discover_file_name:
                return bool(_go_glob(str(app_path / self.config.discover_file_name)))
            if self.config.discover_glob:
                return bool(_go_glob(str(app_path / self.config.discover_glob), recursive=True))
            return self._run(self.config.discover_command, app_path, env, request) != ""

    def generate_manifest(self, app: Application, repo: Path, env: list[tuple[str, str]]) -> str:
        """generateManifest: init then generate, one deadline; returns stdout less one trailing newline."""
        with self._request() as request, self._checkout(repo, app) as app_path:
            if self.config.init:
                self._run(self.config.init, app_path, env, request)
            return self._run(self.config.generate, app_path, env, request)

    @contextlib.contextmanager
    def _request(self) -> Iterator[Request]:
        request = Request(time.monotonic() + self.deadline - CMP_TIMEOUT_BUFFER)
        try:
            yield request
        finally:
            for group in request.groups:  # the request's context is cancelled: TERM, then KILL 5 s later
                terminate_group(group)

    @contextlib.contextmanager
    def _checkout(self, repo: Path, app: Application) -> Iterator[Path]:
        """ReceiveRepoStream into a fresh temp dir, removed when the request ends."""
        workdir = Path(tempfile.mkdtemp(dir=self.workdir))
        try:
            copy_repository(repo, workdir, preserve_file_mode=self.config.preserve_file_mode)
            self._chown(workdir)
            app_path = Path(os.path.normpath(workdir / app.path))
            if not str(app_path).startswith(str(workdir)):
                raise DiscoveryError("illegal appPath: out of workDir bound")
            yield app_path
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _chown(self, top: Path) -> None:
        if self.user is None:
            return
        os.chown(top, self.user, self.group or 0)
        for current, dirs, files in os.walk(top):
            for name in dirs + files:
                os.chown(Path(current) / name, self.user, self.group or 0, follow_symlinks=False)

    def _run(self, command: Command, cwd: Path, request_env: list[tuple[str, str]], request: Request) -> str:
        """runCommand: exec without a shell, own process group, killed at the deadline."""
        env = dict(self.sidecar_env)
        env.update(request_env)  # os.Environ() first, request entries appended: the last one wins
        argv = command.argv
        executable = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=self.sidecar_env.get("PATH", ""))
        if executable is None:
            raise CmpError(shlex.join(argv), f'exec: "{argv[0]}": executable file not found in $PATH', "")
        self.runs.append((argv, env))
        remaining = request.deadline - time.monotonic()
        if remaining <= 0:
            raise CmpError(shlex.join(argv), "context deadline exceeded", "")
        process = subprocess.Popen(
            [executable, *argv[1:]],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            process_group=0,
            user=self.user,
            group=self.group,
            extra_groups=[] if self.user is not None else None,
        )
        request.groups.append(process.pid)
        try:
            out, err = process.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            process.kill()  # exec.CommandContext: SIGKILL to the command itself, at once
            terminate_group(process.pid)
            out, err = process.communicate()
        stdout = out.decode("utf-8", errors="replace")
        if process.returncode != 0:
            cause = (
                f"exit status {process.returncode}"
                if process.returncode > 0
                else f"signal: {_signal_name(-process.returncode)}"
            )
            raise CmpError(shlex.join(argv), cause, err.decode("utf-8", errors="replace").strip())
        return stdout.removesuffix("\n")


def _signal_group(group: int, signum: int) -> bool:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def terminate_group(group: int) -> None:
    """SIGTERM the group and, if anything was left in it, SIGKILL it 5 s later."""
    if _signal_group(group, signal.SIGTERM):
        timer = threading.Timer(GROUP_KILL_GRACE, _signal_group, (group, signal.SIGKILL))
        timer.daemon = True
        timer.start()


def _signal_name(signum: int) -> str:
    return {signal.SIGKILL: "killed", signal.SIGTERM: "terminated"}.get(signal.Signals(signum), str(signum))


def _go_glob(pattern: str, recursive: bool = False) -> list[str]:
    """filepath.Glob (zglob for `**`): unlike Python's glob, `*` matches names starting with a dot."""
    import glob

    return glob.glob(os.path.normpath(pattern), recursive=recursive, include_hidden=True)


def copy_repository(source: Path, target: Path, *, preserve_file_mode: bool = False) -> None:
    """The tarball round trip: folders 0755, files 0644, symlinks only when they resolve inside."""
    for current, dirs, files in os.walk(source):
        relative = Path(current).relative_to(source)
        for name in sorted(dirs + files):
            path = Path(current) / name
            destination = target / relative / name
            if path.is_symlink():
                link = os.readlink(path)
                resolved = Path(os.path.normpath(destination.parent / link))
                if not str(resolved).startswith(str(target)):
                    raise ManifestError(f"illegal filepath in symlink: {resolved}")
                destination.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.path.relpath(resolved, destination.parent), destination)
            elif path.is_dir():
                destination.mkdir(mode=0o755, parents=True, exist_ok=True)
                os.chmod(destination, path.stat().st_mode & 0o7777 if preserve_file_mode else 0o755)
            elif path.is_file():
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, destination)
                os.chmod(destination, path.stat().st_mode & 0o7777 if preserve_file_mode else 0o644)
        dirs[:] = [name for name in dirs if not (Path(current) / name).is_symlink()]


_SEPARATOR_LINE = re.compile(r"^---(.*)$")


def split_manifests(stdout: str) -> list[Any]:
    """kube.SplitYAMLToString (+ the YAML-to-JSON step): each non-empty, non-null document's value."""
    stripped = stdout.lstrip()
    if stripped.startswith("{"):
        return _split_json(stripped)
    documents: list[str] = []
    current: list[str] = []
    for line in stdout.splitlines(keepends=True):
        found = _SEPARATOR_LINE.match(line.rstrip("\n"))
        if found:
            rest = found.group(1).strip()
            if rest and not rest.startswith("#"):
                raise ManifestError(f"invalid Yaml document separator: {rest}")
            documents.append("".join(current))
            current = []
        else:
            current.append(line)
    documents.append("".join(current))
    values: list[Any] = []
    for document in documents:
        try:
            value = goyaml.load(document)
        except yaml.YAMLError as error:
            raise ManifestError(f"failed to unmarshal manifest: {error}") from None
        if value is not None:
            values.append(value)
    return values


def _split_json(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    position = 0
    documents = []
    while position < len(text):
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
        if position >= len(text):
            break
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise ManifestError(f"failed to unmarshal manifest: {error}") from None
        if value is not None:
            documents.append(value)
        position = end
    return documents


def flatten(documents: Sequence[Any]) -> list[dict[str, Any]]:
    """SplitYAML's unstructured decoding, then GenerateManifests' List handling."""
    objects: list[dict[str, Any]] = []
    for obj in documents:
        if not isinstance(obj, dict):
            raise ManifestError(f"failed to unmarshal manifest: cannot unmarshal {type(obj).__name__} into an object")
        if not isinstance(obj.get("kind"), str) or not obj["kind"]:
            raise ManifestError(f"Object 'Kind' is missing in '{json.dumps(obj, default=str)[:200]}'")
        items = obj.get("items")
        if isinstance(items, list):
            for item in items:
                if not isinstance(item, dict):
                    raise ManifestError(f"items member is not an object: {type(item).__name__}")
                objects.append(item)
        elif "items" in obj and items is None and "spec" not in obj and "status" not in obj:
            continue  # isNullList
        else:
            objects.append(obj)
    return objects
