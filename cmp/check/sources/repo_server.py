"""How Argo CD's repo-server would render one source of an Application, rebuilt offline.

For the chartshare plugin that is the environment the sidecar receives (ARGOCD_APP_*, ARGOCD_ENV_* with
`$VAR` substituted, ARGOCD_APP_PARAMETERS), handed to the same `config.build` that `generate` uses. For a
Helm source it is the `helm template` call Argo CD makes from `source.helm`. Both follow
reposerver/repository/repository.go; KUBE_VERSION and KUBE_API_VERSIONS stay empty (there is no cluster).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cmp import goyaml
from cmp.check.fleet.applications import Application, Source
from cmp.errors import ParameterError, PathError
from cmp.helm.template import HelmInvocation
from cmp.inputs.config import Template, release_from_app
from cmp.inputs.paths import is_glob, resolve_path, resolve_values_files

# source.helm fields check maps onto helm's flags; the others change nothing check compares.
HELM_FIELDS = (
    "releaseName",
    "valueFiles",
    "values",
    "valuesObject",
    "parameters",
    "skipCrds",
    "skipTests",
    "namespace",
    "kubeVersion",
    "apiVersions",
    "ignoreMissingValueFiles",
    "passCredentials",
    "version",
    "skipSchemaValidation",
)
UNSUPPORTED_HELM_FIELDS = {"fileParameters": "helm --set-file"}
_ENV_REFERENCE = re.compile(r"\$(?:\$|\{([^}]*)\}|([A-Za-z0-9_]+))")


def build_env(app: Application, source: Source) -> dict[str, str]:
    """The request variables Argo CD sets for every source (revision-dependent ones left empty)."""
    return {
        "ARGOCD_APP_NAME": app.name,
        "ARGOCD_APP_NAMESPACE": app.namespace,
        "ARGOCD_APP_PROJECT_NAME": app.project,
        "ARGOCD_APP_REVISION": "",
        "ARGOCD_APP_REVISION_SHORT": "",
        "ARGOCD_APP_REVISION_SHORT_8": "",
        "ARGOCD_APP_SOURCE_REPO_URL": source.repo_url,
        "ARGOCD_APP_SOURCE_PATH": source.path or "",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": source.target_revision,
        "KUBE_VERSION": "",
        "KUBE_API_VERSIONS": "",
    }


def envsubst(text: str, env: Mapping[str, str]) -> str:
    """Argo CD's Env.Envsubst (Go's os.Expand): `$NAME` and `${NAME}` from `env`, unknown ones empty, `$$` is `$`."""

    def expand(found: re.Match[str]) -> str:
        if found.group(0) == "$$":
            return "$"
        return env.get(found.group(1) if found.group(1) is not None else found.group(2), "")

    return _ENV_REFERENCE.sub(expand, text)


def plugin_env(app: Application, source: Source) -> dict[str, str]:
    """What the chartshare sidecar sees for this source: request variables, plugin env, parameters."""
    env = build_env(app, source)
    entries = source.plugin.get("env") or []
    if not isinstance(entries, list):
        raise ParameterError(f"spec.{source.label}.plugin.env must be a list of {{name, value}}")
    plugin_vars: dict[str, str] = {}
    for position, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise ParameterError(f"spec.{source.label}.plugin.env[{position}] needs a string name")
        plugin_vars[f"ARGOCD_ENV_{entry['name']}"] = envsubst(str(entry.get("value") or ""), env)
    parameters = source.plugin.get("parameters")
    if parameters is not None and not isinstance(parameters, list):
        raise ParameterError(f"spec.{source.label}.plugin.parameters must be a list")
    return {**env, **plugin_vars, "ARGOCD_APP_PARAMETERS": json.dumps(parameters or None)}


def set_value(value: str) -> str:
    """Argo CD escapes commas in --set values (helm would split on them) unless the value is a `{a,b}` list."""
    if value.startswith("{") and value.endswith("}"):
        return value
    out: list[str] = []
    previous = ""
    for char in value:
        out.append("\\," if char == "," and previous != "\\" else char)
        previous = char
    return "".join(out)


def helm_invocation(
    app: Application, source: Source, app_dir: Path, root: Path, refs_root: Path | None = None
) -> HelmInvocation:
    """The `helm template` Argo CD runs for a Helm source; raises ParameterError / PathError on bad fields.
    `root` confines the value files (a published chart's own folder, as Argo CD's), `refs_root` the `$ref/`
    ones (the repository; default `root`)."""
    helm = source.helm
    where = f"spec.{source.label}.helm"
    for key in helm:
        if key in UNSUPPORTED_HELM_FIELDS:
            raise ParameterError(f"{where}.{key} ({UNSUPPORTED_HELM_FIELDS[key]}) is not supported by check")
        if key not in HELM_FIELDS:
            raise ParameterError(f"{where}: unknown field {key!r}; Argo CD knows {', '.join(HELM_FIELDS)}")
    env = build_env(app, source)
    release = _string(helm, "releaseName", where) or release_from_app(app.name)
    values_inline = _string(helm, "values", where)
    values_object = helm.get("valuesObject")
    if values_object is not None:
        if not isinstance(values_object, Mapping):
            raise ParameterError(f"{where}.valuesObject must be a mapping")
        values_inline = goyaml.dump(dict(values_object))  # valuesObject wins over values, as in Argo CD
    return HelmInvocation(
        app_dir,
        Template(
            release=release,
            namespace=_string(helm, "namespace", where) or app.namespace,
            values_files=_value_files(app, source, helm, env, app_dir, (root, refs_root or root)),
            values_inline=values_inline,
            set_values=_parameters(helm, where, env, force_string=False),
            set_strings=_parameters(helm, where, env, force_string=True),
            include_crds=not _flag(helm, "skipCrds", where),
            skip_tests=_flag(helm, "skipTests", where),
            skip_schema_validation=_flag(helm, "skipSchemaValidation", where),
            kube_version=_string(helm, "kubeVersion", where),
            api_versions=tuple(str(item) for item in _list(helm, "apiVersions", where)),
        ),
    )


def _value_files(
    app: Application,
    source: Source,
    helm: Mapping[str, Any],
    env: Mapping[str, str],
    app_dir: Path,
    roots: tuple[Path, Path],
) -> tuple[Path, ...]:
    """valueFiles as Argo CD resolves them: `$ref/...` from a ref source (taken to be this repository),
    `/...` from the repository root, others from the app path; globs expand; missing files may be ignored."""
    ignore_missing = _flag(helm, "ignoreMissingValueFiles", f"spec.{source.label}.helm")
    refs = {other.ref for other in app.sources if other.ref}
    files: list[Path] = []
    for raw in _list(helm, "valueFiles", f"spec.{source.label}.helm"):
        pattern = str(raw)
        root = roots[1] if pattern.startswith("$") else roots[0]
        if pattern.startswith("$"):
            ref, _, rest = pattern.partition("/")
            if ref[1:] not in refs:
                raise PathError(f"valueFiles: {pattern!r} names ref {ref[1:]!r}, but no source has `ref: {ref[1:]}`")
            pattern = "/" + envsubst(rest, env)
        else:
            pattern = envsubst(pattern, env)
        if pattern.startswith(("http://", "https://")):
            raise PathError(f"valueFiles: {pattern!r} is a URL; check reads only files of the repository")
        if ignore_missing and not _exists(pattern, app_dir, root):
            continue
        if is_glob(pattern):
            files.extend(resolve_values_files((pattern,), app_dir, root))
        else:
            files.append(resolve_path(pattern, app_dir, root, "valueFiles"))
    return tuple(files)


def _exists(pattern: str, app_dir: Path, root: Path) -> bool:
    if is_glob(pattern):  # expanded as generate expands it: nothing outside the repository is listed
        return bool(resolve_values_files((pattern,), app_dir, root, ignore_missing=True))
    base = root / pattern.lstrip("/") if pattern.startswith("/") else app_dir / pattern
    return base.exists()


def _parameters(
    helm: Mapping[str, Any], where: str, env: Mapping[str, str], *, force_string: bool
) -> tuple[tuple[str, str], ...]:
    """helm.parameters as --set (or --set-string with forceString), later names overriding earlier ones."""
    chosen: dict[str, str] = {}
    for position, entry in enumerate(_list(helm, "parameters", where)):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ParameterError(f"{where}.parameters[{position}] needs a name")
        if bool(entry.get("forceString")) is force_string:
            chosen[entry["name"]] = set_value(envsubst(_scalar(entry.get("value")), env))
        else:
            chosen.pop(entry["name"], None)
    return tuple(chosen.items())


def _scalar(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _string(helm: Mapping[str, Any], key: str, where: str) -> str:
    value = helm.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        extra = " (use valuesObject for a mapping)" if key == "values" else ""
        raise ParameterError(f"{where}.{key} must be a string{extra}")
    return value


def _flag(helm: Mapping[str, Any], key: str, where: str) -> bool:
    value = helm.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ParameterError(f"{where}.{key} must be true or false")
    return value


def _list(helm: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = helm.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ParameterError(f"{where}.{key} must be a list")
    return value
