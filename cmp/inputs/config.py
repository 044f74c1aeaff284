"""Everything `generate` needs, resolved once from flags, Argo CD's environment and defaults.

Precedence, highest first: command-line flags, Application parameters (ARGOCD_APP_PARAMETERS, or the
legacy PARAM_* variables when it is absent), plugin env ARGOCD_ENV_CHARTSHARE_*, Argo CD's request
variables, defaults. Every path is resolved with symlinks followed and must stay inside the repository.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from cmp import name_rules
from cmp.errors import ParameterError, PathError, UsageError
from cmp.inputs import parameters
from cmp.inputs.parameters import Value
from cmp.inputs.paths import config_file, find_repo_root, resolve_path, resolve_values_files, resolved
from cmp.inputs.policy_file import PolicyText, read_policy
from cmp.model import Access

DEFAULT_TIMEOUT = 45.0  # Argo CD SIGKILLs a plugin at 60 s; helm must be stopped, and reported, before that
MAX_PARAMETER_TIMEOUT = 55.0  # what an Application may ask for: the rest of Argo CD's 60 s is chartshare's
MAX_TIMEOUT = 3600.0  # a command-line bound far beyond any Argo CD deadline; larger values overflow poll()
GRPC_LIMIT_MB = 100  # Argo CD's default ARGOCD_GRPC_MAX_SIZE_MB: the whole manifest response must fit
DEFAULT_HELM = "helm"
_KUBE_VERSION = re.compile(r"^v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.+-]*)?$")


class Template(NamedTuple):
    """What `helm template` is asked to render, as Argo CD's native Helm source would ask it."""

    release: str
    namespace: str = ""
    values_files: tuple[Path, ...] = ()
    values_inline: str = ""
    set_values: tuple[tuple[str, str], ...] = ()
    set_strings: tuple[tuple[str, str], ...] = ()
    set_files: tuple[tuple[str, Path], ...] = ()
    include_crds: bool = True
    skip_tests: bool = False
    skip_schema_validation: bool = False
    kube_version: str = ""
    api_versions: tuple[str, ...] = ()


class Config(NamedTuple):
    """The resolved inputs of one `generate` run."""

    app_name: str
    app_dir: Path
    repo_root: Path
    config_path: Path | None
    template: Template
    cache_root: Path  # $CHARTSHARE_CACHE: remote charts, dependency archives, renders
    helm: str = DEFAULT_HELM
    timeout: float = DEFAULT_TIMEOUT
    spent: float = 0.0  # seconds of `timeout` a failed hand-over to the warm process took (helm has the rest)
    output: str = "yaml"
    cache: bool = True  # False: --no-cache
    max_output: int = GRPC_LIMIT_MB << 20
    access: Access = Access()  # the repositories file and the AppProject: which stored charts it may be served
    policy: PolicyText | None = None  # the fleet policy's text ($CHARTSHARE_POLICY); None: no policy

    @property
    def project(self) -> str:
        """The app's AppProject (ARGOCD_APP_PROJECT_NAME, `default` without one): which policy entry applies."""
        return self.access.project

    @property
    def release(self) -> str:
        return self.template.release

    @property
    def namespace(self) -> str:
        return self.template.namespace


def release_from_app(app_name: str) -> str:
    """Argo CD's default release name: the app name without a `<namespace>_` prefix."""
    return app_name.partition("_")[2] or app_name


def default_helm(env: Mapping[str, str]) -> str:
    """The helm binary when no flag names one: $CHARTSHARE_HELM, else `helm` on PATH."""
    return env.get("CHARTSHARE_HELM", "") or DEFAULT_HELM


def cache_root(env: Mapping[str, str]) -> Path:
    """$CHARTSHARE_CACHE, else $XDG_CACHE_HOME/chartshare, else $HOME/.cache/chartshare (/tmp/... in the image)."""
    if root := env.get("CHARTSHARE_CACHE"):
        return Path(root)
    if xdg := env.get("XDG_CACHE_HOME"):
        return Path(xdg) / "chartshare"
    if home := env.get("HOME"):
        return Path(home) / ".cache" / "chartshare"
    import tempfile  # only without HOME: the import costs the plain generate path time

    return Path(tempfile.gettempdir()) / ".cache" / "chartshare"


def merged(flags: Mapping[str, Value | None], env: Mapping[str, str]) -> dict[str, Value]:
    """Application parameters by precedence: flags > app parameters > plugin env (request variables come
    later); command-line-only options and flags not given (None) stay out."""
    if "ARGOCD_APP_PARAMETERS" in env:
        app_params = parameters.from_app_parameters(env["ARGOCD_APP_PARAMETERS"])
    else:
        app_params = parameters.from_param_variables(env)
    given = {name: value for name, value in flags.items() if value is not None and name in parameters.BY_NAME}
    return {**parameters.from_plugin_env(env), **app_params, **given}


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


def build(app_dir: Path, flags: Mapping[str, Value], env: Mapping[str, str]) -> Config:
    """Resolve every input of `generate` from the command line's options (by option name, see
    parameters.GENERATE_OPTIONS) and the environment; raises ParameterError / PathError naming the culprit."""
    app_dir = resolved(app_dir, f"APP_DIR {app_dir}")
    if not app_dir.is_dir():
        raise PathError(f"APP_DIR {app_dir} is not a directory")

    def flag(name: str) -> str:
        value = flags.get(name)
        return value if isinstance(value, str) else ""

    name = flag("app") or env.get("ARGOCD_APP_NAME", "")
    if not name:
        raise ParameterError("no application name: pass --app NAME or set ARGOCD_APP_NAME")
    repo_root = flag("repo-root")
    root = (
        resolved(Path(repo_root), f"--repo-root {repo_root}")
        if repo_root
        else find_repo_root(app_dir, env.get("ARGOCD_APP_SOURCE_PATH", ""))
    )
    if not app_dir.is_relative_to(root):
        raise PathError(f"APP_DIR {app_dir} is outside the repository root {root}")
    values = merged(flags, env)
    _refuse_non_utf8(values)

    def text(parameter: str, fallback: str = "") -> str:
        value = values.get(parameter)
        return value if isinstance(value, str) else fallback

    def items(parameter: str, fallback: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = values.get(parameter)
        return tuple(str(item) for item in value) if isinstance(value, tuple) else fallback

    def pairs(parameter: str) -> tuple[tuple[str, str], ...]:
        value = values.get(parameter, ())
        return tuple(item for item in value if isinstance(item, tuple))

    timeout = _timeout(flag("timeout"), text("timeout"))
    template = Template(
        release=_release(text("release-name", release_from_app(name))),
        namespace=_namespace(text("namespace", env.get("ARGOCD_APP_NAMESPACE", ""))),
        values_files=resolve_values_files(
            items("values-files"), app_dir, root, ignore_missing=text("ignore-missing-value-files") == "true"
        ),
        values_inline=text("values"),
        set_values=pairs("set"),
        set_strings=pairs("set-string"),
        set_files=tuple((key, resolve_path(path, app_dir, root, f"set-file {key}")) for key, path in pairs("set-file")),
        include_crds=text("include-crds", "true") == "true",
        skip_tests=text("skip-tests") == "true",
        skip_schema_validation=text("skip-schema-validation") == "true",
        kube_version=_kube_version(text("kube-version", env.get("KUBE_VERSION", ""))),
        api_versions=items(
            "api-versions", tuple(entry for entry in env.get("KUBE_API_VERSIONS", "").split(",") if entry)
        ),
    )
    return Config(
        app_name=name,
        app_dir=app_dir,
        repo_root=root,
        config_path=config_file(app_dir, root, text("config")),
        template=template,
        cache_root=cache_root(env),
        helm=flag("helm") or default_helm(env),
        timeout=timeout,
        output=flag("output") or "yaml",
        cache=flag("no-cache") != "true",
        max_output=_grpc_limit(env) << 20,
        access=Access.of(env),
        policy=read_policy(env),
    )


def _release(release: str) -> str:
    if not (name_rules.DNS_SUBDOMAIN.matches(release) and len(release) <= 53):
        raise ParameterError(
            f"release-name {release!r} is not a valid helm release name "
            "(lower-case letters, digits, '-' and '.', at most 53 characters)"
        )
    return release


def _namespace(namespace: str) -> str:
    if namespace and not (name_rules.DNS_LABEL.matches(namespace) and len(namespace) <= 63):
        raise ParameterError(
            f"namespace {namespace!r} is not a valid namespace name (lower-case letters, digits and '-', at most 63)"
        )
    return namespace


def _kube_version(kube_version: str) -> str:
    if kube_version and not _KUBE_VERSION.fullmatch(kube_version):
        raise ParameterError(f"kube-version {kube_version!r} is not a version like 1.31.2")
    return kube_version


def _timeout(from_flag: str, from_parameter: str) -> float:
    """helm's deadline: the flag (a usage error when it is no usable number of seconds), else the
    `timeout` parameter (at most 55: Argo CD stops the plugin at 60 s), else 45."""
    if from_flag:
        seconds = _seconds(from_flag)
        if seconds is None or not 1 <= seconds <= MAX_TIMEOUT:
            raise UsageError(f"--timeout {from_flag} is not a number of seconds between 1 and {MAX_TIMEOUT:g}")
        return seconds
    if from_parameter:
        seconds = _seconds(from_parameter)
        if seconds is None or not 1 <= seconds <= MAX_PARAMETER_TIMEOUT:
            raise ParameterError(
                f"parameter 'timeout' is {from_parameter!r}; it must be a number of seconds from 1 to "
                f"{MAX_PARAMETER_TIMEOUT:g} (Argo CD stops a plugin at 60 s)"
            )
        return seconds
    return DEFAULT_TIMEOUT


def _seconds(raw: str) -> float | None:
    try:
        seconds = float(raw)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) else None


def _grpc_limit(env: Mapping[str, str]) -> int:
    """ARGOCD_GRPC_MAX_SIZE_MB when the sidecar has it (set it to what the repo-server has), else 100."""
    raw = env.get("ARGOCD_GRPC_MAX_SIZE_MB", "").strip()
    if not raw:
        return GRPC_LIMIT_MB
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise ParameterError(f"ARGOCD_GRPC_MAX_SIZE_MB={raw!r} is not a whole number of MiB")
    return int(raw)
