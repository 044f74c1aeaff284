"""The one table of `generate`'s inputs: Application parameters, and the options only the CLI has.

The CLI options (typer's and the fast reader's), the decoding of ARGOCD_APP_PARAMETERS / PARAM_* /
ARGOCD_ENV_CHARTSHARE_*, plugin.yaml's static parameter announcement and docs/generate.md's parameter table
all come from these rows, so they cannot drift: a new parameter is one row plus the code that uses it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, NamedTuple, Union

from cmp.errors import ParameterError

Kind = Literal["string", "array", "map"]
Value = Union[str, tuple[str, ...], tuple[tuple[str, str], ...]]


class Parameter(NamedTuple):
    """One input of `generate`: an Application parameter (announced in plugin.yaml) or a CLI-only option.

    `flag` is how the command line spells it (`-n/--namespace`); a parameter whose choices are `true` and
    `false` is a switch there (`--include-crds/--skip-crds`: the first form sets true, the second false).
    """

    name: str
    kind: Kind
    flag: str
    title: str
    tooltip: str
    default: str = ""  # shown in the UI and docs only; the plugin applies its own defaults
    choices: tuple[str, ...] = ()
    announced: bool = True  # an Application parameter; False: a command-line option only

    @property
    def env_name(self) -> str:
        """`ARGOCD_ENV_CHARTSHARE_<NAME>`: what `argocd app set --plugin-env` can set."""
        return "ARGOCD_ENV_CHARTSHARE_" + self.name.upper().replace("-", "_")

    @property
    def param_prefix(self) -> str:
        """`PARAM_<ESC(name)>`, Argo CD's escaping for the legacy variables."""
        return "PARAM_" + escape(self.name)

    @property
    def flags(self) -> tuple[str, ...]:
        """Every spelling on the command line, long form first (`--namespace`, `-n`)."""
        spellings = self.flag.split("/")
        return (
            tuple(sorted(spellings, key=lambda spelling: not spelling.startswith("--")))
            if not self.switch
            else tuple(spellings)
        )

    @property
    def switch(self) -> bool:
        """A flag without a value on the command line: `true` when given (its second form, if any, `false`)."""
        return self.choices in (BOOLEAN, ("true",))

    @property
    def field(self) -> str:
        """The Python name of its option (`release-name` -> `release_name`)."""
        return self.name.replace("-", "_")


BOOLEAN = ("true", "false")
SECONDS = "seconds"  # a number of seconds, written as a string (Argo CD parameters are strings)

PARAMETERS: tuple[Parameter, ...] = (
    Parameter(
        "release-name", "string", "--release-name", "Release name",
        "helm release name; defaults to the Application name without any '<namespace>_' prefix",
    ),
    Parameter(
        "namespace", "string", "-n/--namespace", "Namespace",
        "helm --namespace; defaults to the Application's destination namespace",
    ),
    Parameter(
        "values-files", "array", "-f/--values", "Values files",
        "value files relative to the app path; a leading '/' means the repository root; globs allowed",
    ),
    Parameter(
        "ignore-missing-value-files", "string", "--ignore-missing-value-files", "Ignore missing value files",
        "skip value files that do not exist (Argo CD's ignoreMissingValueFiles)", default="false", choices=BOOLEAN,
    ),
    Parameter("values", "string", "--values-inline", "Values", "inline values YAML, applied after every values file"),
    Parameter("set", "map", "--set", "Set", "helm --set key=value pairs"),
    Parameter("set-string", "map", "--set-string", "Set string", "helm --set-string key=value pairs"),
    Parameter(
        "set-file", "map", "--set-file", "Set file",
        "helm --set-file key=path pairs; each path relative to the app path ('/' = repository root)",
    ),
    Parameter(
        "include-crds", "string", "--include-crds/--skip-crds", "Include CRDs",
        "render the chart's crds/ folder (as Argo CD does)", default="true", choices=BOOLEAN,
    ),
    Parameter(
        "skip-tests", "string", "--skip-tests", "Skip tests", "leave out helm test hooks",
        default="false", choices=BOOLEAN,
    ),
    Parameter(
        "skip-schema-validation", "string", "--skip-schema-validation", "Skip schema validation",
        "helm --skip-schema-validation (Argo CD's skipSchemaValidation)", default="false", choices=BOOLEAN,
    ),
    Parameter(
        "kube-version", "string", "--kube-version", "Kubernetes version",
        "helm --kube-version; defaults to the destination cluster's version",
    ),
    Parameter(
        "api-versions", "array", "--api-versions", "API versions",
        "helm --api-versions entries; defaults to the destination cluster's API versions",
    ),
    Parameter(
        "config", "string", "--config", "Ownership file",
        "path of the ownership rules, relative to the app path; default chartshare.yaml",
    ),
    Parameter(
        "timeout", "string", "--timeout", "Timeout",
        "seconds helm may take; as a parameter at most 55 (Argo CD stops a plugin at 60 s)", default="45",
    ),
)  # fmt: skip

# generate's command-line options that are not Application parameters.
OPTIONS: tuple[Parameter, ...] = (
    Parameter("app", "string", "--app", "", "Application name (default $ARGOCD_APP_NAME)", announced=False),
    Parameter("helm", "string", "--helm", "", "helm binary (default $CHARTSHARE_HELM, else helm)", announced=False),
    Parameter(
        "output", "string", "-o/--output", "", "output format", default="yaml", choices=("yaml", "json"),
        announced=False,
    ),
    Parameter("repo-root", "string", "--repo-root", "", "repository root (default: derived)", announced=False),
    Parameter(
        "no-cache", "string", "--no-cache", "", "render without the render cache", choices=("true",), announced=False
    ),
)  # fmt: skip

GENERATE_OPTIONS: tuple[Parameter, ...] = PARAMETERS + OPTIONS
BY_NAME: dict[str, Parameter] = {parameter.name: parameter for parameter in PARAMETERS}
BY_OPTION: dict[str, Parameter] = {option.name: option for option in GENERATE_OPTIONS}
BY_FLAG: dict[str, Parameter] = {flag: option for option in GENERATE_OPTIONS for flag in option.flags}
_ESCAPE = re.compile(r"[^A-Z0-9_]")


def escape(name: str) -> str:
    """Argo CD's PARAM_ escaping: upper-case, anything outside [A-Z0-9_] becomes `_`."""
    return _ESCAPE.sub("_", name.upper())


def markdown_table() -> str:
    """docs/generate.md's parameter table; a test keeps the page in step with PARAMETERS."""
    rows = ["| parameter | type | flag | meaning | default |", "|---|---|---|---|---|"]
    rows += [f"| `{p.name}` | {p.kind} | `{p.flag}` | {p.tooltip} | {p.default or '-'} |" for p in PARAMETERS]
    return "\n".join(rows) + "\n"


def valid_names() -> str:
    return ", ".join(parameter.name for parameter in PARAMETERS)


def _unknown(name: str, where: str) -> ParameterError:
    return ParameterError(f"unknown parameter {name!r} in {where}; valid parameters: {valid_names()}")


def from_app_parameters(raw: str) -> dict[str, Value]:
    """Decode ARGOCD_APP_PARAMETERS: a JSON array of {name, string | array | map}, or `null`."""
    where = "ARGOCD_APP_PARAMETERS"
    try:
        import json  # only when Argo CD sent parameters

        entries = json.loads(raw) if raw.strip() else None
    except ValueError as error:
        raise ParameterError(f"{where} is not valid JSON ({error}); it should be Argo CD's parameter list") from None
    except RecursionError:
        raise ParameterError(f"{where} is nested too deeply; it should be Argo CD's flat parameter list") from None
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise ParameterError(f"{where} must be a JSON array of {{name, string|array|map}} objects")
    values: dict[str, Value] = {}
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ParameterError(f"{where}[{position}] must be an object with a string `name`")
        name = entry["name"]
        parameter = BY_NAME.get(name)
        if parameter is None:
            raise _unknown(name, where)
        value = entry.get(parameter.kind)
        if value is None:
            given = sorted(set(entry) - {"name"}) or ["nothing"]
            raise ParameterError(
                f"parameter {name!r} in {where} is a {parameter.kind}, but the Application gave {', '.join(given)}; "
                f"set it as `{parameter.kind}:` in spec.source.plugin.parameters"
            )
        values[name] = _typed(parameter, value, f"parameter {name!r} in {where}")
    return values


def _typed(parameter: Parameter, value: object, where: str) -> Value:
    if parameter.kind == "string":
        if not isinstance(value, str):
            raise ParameterError(f"{where} must be a string")
        return _choice(parameter, value, where)
    if parameter.kind == "array":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ParameterError(f"{where} must be an array of strings")
        return tuple(value)
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise ParameterError(f"{where} must be a map of strings to strings")
    return tuple(sorted(value.items()))


def _choice(parameter: Parameter, value: str, where: str) -> str:
    if parameter.choices and value not in parameter.choices:
        raise ParameterError(f"{where} is {value!r}; it must be one of: {', '.join(parameter.choices)}")
    return value


def from_param_variables(env: Mapping[str, str]) -> dict[str, Value]:
    """Decode the legacy PARAM_* variables, used only when ARGOCD_APP_PARAMETERS is absent.

    Map keys are escaped beyond recovery there (`image.tag` arrives as `IMAGE_TAG`), so a map parameter
    seen only through PARAM_* is refused rather than passed to helm under a wrong key.
    """
    names = sorted(name for name in env if name.startswith("PARAM_"))
    values: dict[str, Value] = {}
    claimed: set[str] = set()
    for parameter in sorted(PARAMETERS, key=lambda p: -len(p.param_prefix)):
        prefix = parameter.param_prefix
        if parameter.kind == "string" and prefix in env:
            values[parameter.name] = _choice(parameter, env[prefix], prefix)
            claimed.add(prefix)
        elif parameter.kind == "array":
            items = _indexed(env, prefix + "_", claimed)
            if items:
                values[parameter.name] = items
        elif parameter.kind == "map":
            keys = [name for name in names if name.startswith(prefix + "_") and name not in claimed]
            if keys:
                raise ParameterError(
                    f"map parameter {parameter.name!r} arrived only as {keys[0]}, whose key Argo CD has escaped; "
                    "use an Argo CD that sets ARGOCD_APP_PARAMETERS, or ARGOCD_ENV_CHARTSHARE_"
                    f"{escape(parameter.name)}=key=value"
                )
    leftover = [name for name in names if name not in claimed]
    if leftover:
        raise _unknown(leftover[0], "the PARAM_* variables")
    return values


_INDEX = re.compile(r"[0-9]+")


def _indexed(env: Mapping[str, str], prefix: str, claimed: set[str]) -> tuple[str, ...]:
    """`PARAM_<NAME>_<i>` with an ASCII index (str.isdigit also admits '²', which int() refuses)."""
    found = {
        name: name[len(prefix) :] for name in env if name.startswith(prefix) and _INDEX.fullmatch(name[len(prefix) :])
    }
    claimed.update(found)
    return tuple(env[name] for name in sorted(found, key=lambda name: int(found[name])))


def from_plugin_env(env: Mapping[str, str]) -> dict[str, Value]:
    """Decode ARGOCD_ENV_CHARTSHARE_<NAME>: arrays comma-separated, maps `k=v,k=v`."""
    by_env = {parameter.env_name: parameter for parameter in PARAMETERS}
    values: dict[str, Value] = {}
    for name in sorted(env):
        if not name.startswith("ARGOCD_ENV_CHARTSHARE_"):
            continue
        parameter = by_env.get(name)
        if parameter is None:
            valid = ", ".join(sorted(by_env))
            raise ParameterError(f"unknown plugin env {name}; valid names: {valid}")
        raw = env[name]
        if parameter.kind == "string":
            values[parameter.name] = _choice(parameter, raw, name)
        elif parameter.kind == "array":
            values[parameter.name] = tuple(item.strip() for item in raw.split(",") if item.strip())
        else:
            values[parameter.name] = parse_pairs(_split_pairs(raw), name)
    return values


def _split_pairs(raw: str) -> list[str]:
    return [item for item in raw.split(",") if item.strip()]


def parse_pairs(items: list[str] | tuple[str, ...], where: str) -> tuple[tuple[str, str], ...]:
    """`key=value` items as a sorted map; the value may itself hold `=`."""
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"{where}: {item!r} is not key=value")
        pairs[key.strip()] = value
    return tuple(sorted(pairs.items()))
