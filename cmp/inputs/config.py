"""Everything `generate` needs, resolved once from flags, Argo CD's environment and defaults.

Precedence, highest first: command-line flags, Application parameters (ARGOCD_APP_PARAMETERS, or the
legacy PARAM_* variables when it is absent), plugin env ARGOCD_ENV_CHARTSHARE_*, Argo CD's request
variables, defaults. Every path is resolved with symlinks followed and must stay inside the repository.
"""

from __future__ import annotations

import glob
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from cmp import naming
from cmp.errors import ParameterError, PathError, UsageError
from cmp.inputs import parameters as params
from cmp.inputs.parameters import Value

DEFAULT_TIMEOUT = 45.0  # Argo CD SIGKILLs a plugin at 60 s; helm must be stopped, and reported, before that
GRPC_LIMIT_MB = 100  # Argo CD's default ARGOCD_GRPC_MAX_SIZE_MB: the whole manifest response must fit
MAX_TIMEOUT = 3600.0  # far beyond any Argo CD deadline; larger values overflow the poll() the wait uses
CONFIG_FILE = "chartshare.yaml"
_KUBE_VERSION = re.compile(r"^v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.+-]*)?$")
_GLOB = re.compile(r"[*?\[]")


def _matches(rule: naming.NameRule, name: str) -> bool:
    """Kubernetes' name syntax from the naming table; the length bound stays the caller's."""
    return rule.pattern is not None and rule.pattern.fullmatch(name) is not None


class Config(NamedTuple):
    """The resolved inputs of one `generate` run."""

    app_name: str
    app_dir: Path
    repo_root: Path
    release: str
    namespace: str
    values_files: tuple[Path, ...]
    values_inline: str
    set_values: tuple[tuple[str, str], ...]
    set_strings: tuple[tuple[str, str], ...]
    include_crds: bool
    skip_tests: bool
    kube_version: str
    api_versions: tuple[str, ...]
    config_path: Path | None
    helm: str
    timeout: float
    max_output: int = GRPC_LIMIT_MB << 20


def release_from_app(app_name: str) -> str:
    """Argo CD's default release name: the app name without a `<namespace>_` prefix."""
    return app_name.partition("_")[2] or app_name


def find_repo_root(app_dir: Path, source_path: str) -> Path:
    """APP_DIR minus ARGOCD_APP_SOURCE_PATH, else the nearest folder holding `.git`, else APP_DIR."""
    parts = [part for part in Path(source_path.strip("/")).parts if part not in ("", ".")]
    if parts and tuple(app_dir.parts[-len(parts) :]) == tuple(parts):
        return app_dir.parents[len(parts) - 1]
    for folder in (app_dir, *app_dir.parents):
        if (folder / ".git").exists():
            return folder
    return app_dir


def merged(flags: Mapping[str, Value | None], env: Mapping[str, str]) -> dict[str, Value]:
    """Parameters by precedence: flags > app parameters > plugin env (request variables come later)."""
    if "ARGOCD_APP_PARAMETERS" in env:
        app_params = params.from_app_parameters(env["ARGOCD_APP_PARAMETERS"])
    else:
        app_params = params.from_param_variables(env)
    given = {name: value for name, value in flags.items() if value is not None}
    return {**params.from_plugin_env(env), **app_params, **given}


def _refuse_non_utf8(values: Mapping[str, Value]) -> None:
    """Argo CD sends parameters as JSON built by Go, always UTF-8; anything else was crafted, and would
    only crash later on its way into helm's argv or the inline values file."""
    for name, value in values.items():
        texts = [value] if isinstance(value, str) else [part for item in value for part in _parts(item)]
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as error:
                raise ParameterError(
                    f"parameter {name!r} is not valid UTF-8 text (bad character at offset {error.start})"
                ) from None


def _parts(item: str | tuple[str, str]) -> tuple[str, ...]:
    return (item,) if isinstance(item, str) else item


def _resolved(path: Path, what: str) -> Path:
    """Path.resolve(), whose symlink-loop error (RuntimeError in 3.11, OSError later) becomes a PathError."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        raise PathError(f"{what} is a symlink loop") from None


def resolve_path(raw: str, base: Path, root: Path, what: str) -> Path:
    """A path relative to `base` (or to the repository root with a leading `/`), confined to `root`."""
    candidate = root / raw.lstrip("/") if raw.startswith("/") else base / raw
    resolved = _resolved(candidate, f"{what}: file '{raw}'")
    if not resolved.is_relative_to(root):
        raise PathError(f"{what}: file '{raw}' resolved to outside repository root")
    if not resolved.exists():
        raise PathError(f"{what}: file '{raw}' does not exist (looked for {resolved})")
    return resolved


def confine_tree(folder: Path, root: Path, what: str) -> None:
    """Every symlink under `folder` (a chart) must resolve inside the repository: helm follows them
    and renders, or hands to `.Files.Get`, whatever they point at (/etc/passwd, a service-account token)."""
    pending, seen = [folder], {folder}
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError as error:
            raise PathError(f"{what}: cannot read {_shown(Path(current), root)}: {error.strerror}") from None
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    raise PathError(f"{what}: symlink {_shown(path, root)} is broken or loops") from None
                if not target.is_relative_to(root):
                    raise PathError(
                        f"{what}: symlink {_shown(path, root)} resolved to outside repository root ({target})"
                    )
                if target.is_dir() and target not in seen:  # helm walks into it: so do we, once
                    seen.add(target)
                    pending.append(target)
            elif entry.is_dir(follow_symlinks=False):
                pending.append(path)


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def resolve_values_files(patterns: tuple[str, ...], app_dir: Path, root: Path) -> tuple[Path, ...]:
    """Value files in the given order; a glob expands to its matches in lexical order, as Argo CD does."""
    files: list[Path] = []
    for pattern in patterns:
        if not _GLOB.search(pattern):
            files.append(resolve_path(pattern, app_dir, root, "values-files"))
            continue
        base = root if pattern.startswith("/") else app_dir
        matches = sorted(glob.glob(str(base / pattern.lstrip("/") if pattern.startswith("/") else base / pattern)))
        if not matches:
            raise PathError(f"values-files: pattern '{pattern}' matched no file")
        files.extend(resolve_path(str(Path(match).relative_to(base)), base, root, "values-files") for match in matches)
    return tuple(files)


def build(
    app_dir: Path,
    flags: Mapping[str, Value | None],
    env: Mapping[str, str],
    *,
    app_name: str | None,
    repo_root: Path | None,
    helm: str | None,
    timeout: float | None,
) -> Config:
    """Resolve every input of `generate`; raises ParameterError / PathError naming the culprit."""
    app_dir = _resolved(app_dir, f"APP_DIR {app_dir}")
    if not app_dir.is_dir():
        raise PathError(f"APP_DIR {app_dir} is not a directory")
    name = app_name or env.get("ARGOCD_APP_NAME", "")
    if not name:
        raise ParameterError("no application name: pass --app NAME or set ARGOCD_APP_NAME")
    root = (
        _resolved(repo_root, f"--repo-root {repo_root}")
        if repo_root
        else find_repo_root(app_dir, env.get("ARGOCD_APP_SOURCE_PATH", ""))
    )
    if not app_dir.is_relative_to(root):
        raise PathError(f"APP_DIR {app_dir} is outside the repository root {root}")
    if timeout is not None and not (math.isfinite(timeout) and 1 <= timeout <= MAX_TIMEOUT):
        raise UsageError(f"--timeout {timeout:g} is not a number of seconds between 1 and {MAX_TIMEOUT:g}")
    values = merged(flags, env)
    _refuse_non_utf8(values)

    def text(parameter: str, fallback: str) -> str:
        value = values.get(parameter)
        return value if isinstance(value, str) else fallback

    def items(parameter: str, fallback: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = values.get(parameter)
        return tuple(str(item) for item in value) if isinstance(value, tuple) else fallback

    def pairs(parameter: str) -> tuple[tuple[str, str], ...]:
        value = values.get(parameter, ())
        return tuple(item for item in value if isinstance(item, tuple))

    release = text("release-name", release_from_app(name))
    if not (_matches(naming.DNS_SUBDOMAIN, release) and len(release) <= 53):
        raise ParameterError(
            f"release-name {release!r} is not a valid helm release name "
            "(lower-case letters, digits, '-' and '.', at most 53 characters)"
        )
    namespace = text("namespace", env.get("ARGOCD_APP_NAMESPACE", ""))
    if namespace and not (_matches(naming.DNS_LABEL, namespace) and len(namespace) <= 63):
        raise ParameterError(
            f"namespace {namespace!r} is not a valid namespace name (lower-case letters, digits and '-', at most 63)"
        )
    kube_version = text("kube-version", env.get("KUBE_VERSION", ""))
    if kube_version and not _KUBE_VERSION.fullmatch(kube_version):
        raise ParameterError(f"kube-version {kube_version!r} is not a version like 1.31.2")
    request_api_versions = tuple(entry for entry in env.get("KUBE_API_VERSIONS", "").split(",") if entry)
    config_raw = text("config", "")
    if config_raw:
        config_path: Path | None = resolve_path(config_raw, app_dir, root, "config")
    else:
        default_config = app_dir / CONFIG_FILE
        config_path = resolve_path(CONFIG_FILE, app_dir, root, "config") if default_config.exists() else None
    return Config(
        app_name=name,
        app_dir=app_dir,
        repo_root=root,
        release=release,
        namespace=namespace,
        values_files=resolve_values_files(items("values-files"), app_dir, root),
        values_inline=text("values", ""),
        set_values=pairs("set"),
        set_strings=pairs("set-string"),
        include_crds=text("include-crds", "true") == "true",
        skip_tests=text("skip-tests", "false") == "true",
        kube_version=kube_version,
        api_versions=items("api-versions", request_api_versions),
        config_path=config_path,
        helm=helm or env.get("CHARTSHARE_HELM", "") or "helm",
        timeout=timeout if timeout is not None else DEFAULT_TIMEOUT,
        max_output=_grpc_limit(env) << 20,
    )


def _grpc_limit(env: Mapping[str, str]) -> int:
    """ARGOCD_GRPC_MAX_SIZE_MB when the sidecar has it (set it to what the repo-server has), else 100."""
    raw = env.get("ARGOCD_GRPC_MAX_SIZE_MB", "").strip()
    if not raw:
        return GRPC_LIMIT_MB
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise ParameterError(f"ARGOCD_GRPC_MAX_SIZE_MB={raw!r} is not a whole number of MiB")
    return int(raw)
