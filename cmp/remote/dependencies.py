"""A chart's dependencies made present before it is rendered: `chartshare init` for a Git chart, and the
completion of a remote chart before it is published in the store.

Argo CD runs init before every generate, in a fresh copy of the repository, under the same 60 s deadline.
So the common cases must cost nothing: no dependencies, or every dependency vendored in `charts/`, is a
file check and no helm call. `file://` dependencies are packaged offline. Remote ones (HTTP(S) repositories
and OCI registries) come from the chart store keyed by repository, chart and version, so a warm sidecar
builds without the network; on a miss, `helm dependency build` runs in a private helm home under /tmp made
for this request, with credentials from CHARTSHARE_REPOSITORIES, and the home is deleted afterwards.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from cmp import tenant_yaml
from cmp.errors import ConfigError, HelmError, PathError
from cmp.helm.process import run_helm
from cmp.inputs.paths import confine_tree
from cmp.model import EXACT_VERSION, RemoteChart
from cmp.remote import credentials
from cmp.remote.credentials import Credential, Credentials
from cmp.remote.deadline import Deadline
from cmp.remote.helm_home import private_home, registry_login, repository_error
from cmp.remote.store import Store


@dataclass(frozen=True, slots=True)
class Dependency:
    """One entry of Chart.yaml `dependencies:` (or requirements.yaml), with its Chart.lock version if any."""

    name: str
    version: str
    repository: str
    locked: str = ""

    @property
    def scheme(self) -> str:
        """`file`, `http`, `oci`, or `` for a dependency that can only be vendored."""
        if self.repository.startswith("file://"):
            return "file"
        if self.repository.startswith(("http://", "https://")):
            return "http"
        if self.repository.startswith("oci://"):
            return "oci"
        return ""

    @property
    def exact(self) -> str:
        """The one version this dependency resolves to, when known without asking the repository."""
        if self.locked:
            return self.locked
        return self.version if EXACT_VERSION.match(self.version) else ""

    @property
    def label(self) -> str:
        return f"{self.name} {self.exact or self.version or '(any version)'} from {self.repository or 'charts/'}"

    def pinned(self, version: str) -> RemoteChart:
        """The chart store's key for this dependency at `version`."""
        return RemoteChart(self.repository, self.name, version)


def read(chart: Path) -> list[Dependency]:
    """The chart's declared dependencies; Chart.lock (or requirements.lock) supplies exact versions.

    helm reads a requirements.yaml over Chart.yaml whatever the apiVersion (an apiVersion v2 chart gets a
    logged warning, and its dependencies all the same), and so does this."""
    meta = _yaml_file(chart / "Chart.yaml")
    requirements = _yaml_file(chart / "requirements.yaml", optional=True)
    if meta.get("apiVersion") == "v1" or "dependencies" in requirements:
        declared = requirements.get("dependencies")
        where = "requirements.yaml"
    else:
        declared = meta.get("dependencies")
        where = "Chart.yaml"
    lock = _yaml_file(chart / "Chart.lock", optional=True) if meta.get("apiVersion") != "v1" else {}
    lock = lock or _yaml_file(chart / "requirements.lock", optional=True)
    if declared is None:
        return []
    if not isinstance(declared, list):
        raise ConfigError(f"{chart / where}: dependencies must be a list")
    locked = {
        (str(entry.get("name")), str(entry.get("repository") or "")): str(entry.get("version") or "")
        for entry in lock.get("dependencies") or []
        if isinstance(entry, dict)
    }
    found: list[Dependency] = []
    for position, entry in enumerate(declared):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ConfigError(f"{chart / where}: dependencies[{position}] needs a name")
        name, repository = entry["name"], str(entry.get("repository") or "")
        version = "" if entry.get("version") is None else str(entry["version"])
        found.append(Dependency(name, version, repository, locked.get((name, repository), "")))
    return found


def _yaml_file(path: Path, optional: bool = False) -> dict[str, Any]:
    """A chart's metadata file, read within tenant_yaml's bounds (bytes, depth, aliases) before it is built."""
    try:
        text = tenant_yaml.read(path, str(path))
    except FileNotFoundError:
        if optional:
            return {}
        raise PathError(f"{path} does not exist") from None
    try:
        loaded = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: not valid YAML") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: must be a mapping")
    return loaded


def present(chart: Path, dependency: Dependency) -> bool:
    """helm's own test (`helm dependency list` says "missing" otherwise): an archive or a folder in charts/."""
    charts = chart / "charts"
    return any(charts.glob(f"{glob_escape(dependency.name)}-*.tgz")) or (charts / dependency.name).is_dir()


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


@dataclass(frozen=True, slots=True)
class Build:
    """Where and how to build: the chart, its repository root, helm, the budget, the environment."""

    chart: Path
    root: Path
    helm: str
    deadline: Deadline
    env: Mapping[str, str]
    store: Store


def ensure(build: Build) -> list[str]:
    """Make every dependency of the chart present; returns the stderr report lines."""
    dependencies = read(build.chart)
    missing = [dependency for dependency in dependencies if not present(build.chart, dependency)]
    if not missing:
        names = ", ".join(dependency.name for dependency in dependencies)
        return [f"present in charts/: {names}"] if dependencies else []
    for dependency in missing:
        _refuse_unbuildable(build, dependency)
    remote = [dependency for dependency in missing if dependency.scheme in ("http", "oci")]
    cached = {d: build.store.archive(d.pinned(d.exact)) if d.exact else None for d in remote}
    try:
        if all(cached.values()):
            lines = [_package_local(build, dependency) for dependency in missing if dependency.scheme == "file"]
            for dependency, archive in cached.items():
                assert archive is not None
                (build.chart / "charts").mkdir(exist_ok=True)
                shutil.copyfile(archive, build.chart / "charts" / archive.name)
                lines.append(f"{dependency.label}: from the cache")
            return lines
        return _dependency_build(build, dependencies, [d for d in remote if not cached[d]])
    except OSError as error:
        raise PathError(
            f"cannot write the dependencies of {build.chart} ({error.strerror}: {error.filename}); "
            "the chart folder must be writable (Argo CD gives each request its own copy)"
        ) from None


def _refuse_unbuildable(build: Build, dependency: Dependency) -> None:
    if dependency.scheme == "file":
        try:
            target = (build.chart / dependency.repository.removeprefix("file://")).resolve()
        except (OSError, RuntimeError):
            raise PathError(f"dependency {dependency.label}: a symlink loop") from None
        if not target.is_relative_to(build.root):
            raise PathError(f"dependency {dependency.label}: resolved to outside repository root")
        # helm package follows links; once packaged, generate's own check of the chart cannot see inside
        confine_tree(target, build.root, f"dependency {dependency.label}")
        if not (target / "Chart.yaml").is_file():
            raise PathError(f"dependency {dependency.label}: {target} holds no Chart.yaml")
    elif not dependency.scheme:
        if dependency.repository.startswith(("@", "alias:")):
            raise ConfigError(
                f"dependency {dependency.label} names a repository of a helm home, which the sidecar does not "
                "have; write the repository URL in Chart.yaml instead"
            )
        raise ConfigError(
            f"dependency {dependency.name} has no repository and is missing from charts/; "
            "vendor it there or give its repository URL in Chart.yaml"
        )


def _package_local(build: Build, dependency: Dependency) -> str:
    """A file:// dependency packaged into charts/ as `helm dependency build` would, without the network."""
    source = (build.chart / dependency.repository.removeprefix("file://")).resolve()
    version = _yaml_file(source / "Chart.yaml").get("version")
    if dependency.exact and str(version) != dependency.exact.removeprefix("v"):
        raise ConfigError(
            f"dependency {dependency.label}: {source.relative_to(build.root)} is version {version}; "
            "update the version in Chart.yaml (and Chart.lock)"
        )
    (build.chart / "charts").mkdir(exist_ok=True)
    argv = [build.helm, "package", str(source), f"--destination={build.chart / 'charts'}"]
    what = f"helm package for dependency {dependency.label}"
    run_helm(argv, cwd=build.chart, timeout=build.deadline.left(what), what=what, env=dict(build.env))
    return f"{dependency.label}: packaged"


def _dependency_build(build: Build, dependencies: Sequence[Dependency], fetched: Sequence[Dependency]) -> list[str]:
    """`helm dependency build` in a private helm home holding only this request's credentials (those of the
    entries its AppProject may use, as the store keys what it keeps)."""
    secrets = build.store.credentials()
    remote = [dependency for dependency in dependencies if dependency.scheme in ("http", "oci")]
    with private_home(build.env) as (home, env):
        _add_repositories(build, env, secrets, [d for d in remote if d.scheme == "http"])
        oci_flags = _log_in(build, home, env, secrets, [d for d in remote if d.scheme == "oci"])
        what = f"helm dependency build for {', '.join(d.label for d in fetched)}"
        argv = [build.helm, "dependency", "build", ".", "--skip-refresh", *oci_flags]
        try:
            run_helm(argv, cwd=build.chart, timeout=build.deadline.left(what), what=what, env=env)
        except HelmError as error:
            raise HelmError(credentials.scrub(str(error), secrets.secrets)) from None
    lines = []
    locked = {(d.name, d.repository): d.locked for d in read(build.chart)}
    for dependency in remote:
        version = locked.get((dependency.name, dependency.repository)) or dependency.exact
        archive = build.chart / "charts" / f"{dependency.name}-{version.removeprefix('v')}.tgz"
        if not archive.is_file():
            archive = build.chart / "charts" / f"{dependency.name}-{version}.tgz"
        stored = version and archive.is_file() and build.store.keep_archive(archive, dependency.pinned(version))
        fresh = "downloaded" if dependency in fetched else "downloaded again"
        lines.append(f"{dependency.name} {version} from {dependency.repository}: {fresh}{', cached' if stored else ''}")
    return lines


def _add_repositories(
    build: Build, env: Mapping[str, str], secrets: Credentials, dependencies: Sequence[Dependency]
) -> None:
    """`helm repo add` each HTTP(S) repository: credentials and CA per repository, and a precise error."""
    by_url: dict[str, list[Dependency]] = {}
    for dependency in dependencies:
        by_url.setdefault(dependency.repository, []).append(dependency)
    for position, (url, users) in enumerate(by_url.items()):
        entry = secrets.find(url)
        argv = [build.helm, "repo", "add", f"chartshare-{position}", url]
        stdin = None
        if entry is not None and entry.username:
            argv += [f"--username={entry.username}", "--password-stdin"]
            stdin = entry.password.encode()
        if entry is not None and entry.ca_file:
            argv.append(f"--ca-file={entry.ca_file}")
        names = ", ".join(sorted({d.name for d in users}))
        what = f"repository {url} (dependency {names})"
        try:
            run_helm(argv, cwd=build.chart, timeout=build.deadline.left(what), what=what, env=env, stdin=stdin)
        except HelmError as error:
            raise HelmError(repository_error(str(error), entry, secrets, url)) from None


def _log_in(
    build: Build, home: Path, env: Mapping[str, str], secrets: Credentials, dependencies: Sequence[Dependency]
) -> list[str]:
    """`helm registry login` once per OCI registry host; returns the flags `helm dependency build` needs."""
    hosts: dict[str, tuple[Credential | None, list[Dependency]]] = {}
    for dependency in dependencies:
        host = urlsplit(dependency.repository).netloc
        entry = secrets.find(dependency.repository)
        known = hosts.setdefault(host, (entry, []))
        if known[0] != entry:
            raise ConfigError(
                f"dependencies {known[1][0].name} and {dependency.name} use registry {host} with different "
                f"entries of {secrets.source}; helm logs in once per registry host, so give them one entry"
            )
        known[1].append(dependency)
    entries = [entry for entry, _ in hosts.values() if entry is not None]
    plain = {entry.plain_http for entry in entries}
    if len(plain) > 1:
        raise ConfigError(
            f"OCI registries of this chart mix plainHttp true and false in {secrets.source}; "
            "helm dependency build takes one setting for all of them"
        )
    plain_http = plain == {True}
    for host, (entry, users) in hosts.items():
        if entry is not None and entry.username:
            what = f"registry {host} (dependency {', '.join(sorted({d.name for d in users}))})"
            registry_login(
                build.helm, host, entry, secrets, env=env, deadline=build.deadline, cwd=build.chart, what=what
            )
    flags = ["--plain-http"] if plain_http else []
    ca_files = sorted({entry.ca_file for entry in entries if entry.ca_file})
    if ca_files:
        bundle = home / "oci-ca-bundle.pem"
        bundle.write_bytes(b"\n".join(Path(name).read_bytes() for name in ca_files))
        flags.append(f"--ca-file={bundle}")
    return flags
