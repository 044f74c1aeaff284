"""A kustomize source rendered as Argo CD's repo-server renders it: `kustomize build` of the source path,
after the Application's `source.kustomize` has been written into the kustomization.

Argo CD runs `kustomize edit set nameprefix/namesuffix/image/replicas/namespace`, `edit add
label/annotation/component` and appends `patches` in its own scratch checkout, in that order (see
util/kustomize/kustomize.go). check does the same edits, with the meaning `kustomize edit` gives them, on
a scratch copy under the system temp folder: kubectl's built-in kustomize (what the tests fetch) has no
`edit`, and the checkout is never written. The build is `kustomize build` when `kustomize` is on PATH, else
`kubectl kustomize`, with Argo CD's build options (argocd-cm's `kustomize.buildOptions`, or check's
`--kustomize-build-options`); without `--enable-helm` a kustomization with `helmCharts` fails as it fails in
Argo CD. With it, the charts come from check's chart store (fetched as published charts are, or taken
offline), are put where kustomize looks for them (`<chartHome>/<name>-<version>/<name>`) in a scratch copy,
and render with check's helm (`--helm-command`); kustomize before 5.8.0 refuses helm 4. Every local path a
kustomization names must stay inside the repository (Argo CD's checkout has nothing outside it); a remote
base cannot be read offline and is a reason to skip the source.
"""

from __future__ import annotations

import functools
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from cmp import goyaml
from cmp.check.fleet.applications import Application, Source
from cmp.check.sources import repo_server
from cmp.errors import ChartShareError, ParameterError, PathError, shortened
from cmp.inputs.paths import confine_tree
from cmp.model import RemoteChart

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# source.kustomize fields check applies (the flags modify commonLabels, commonAnnotations and components);
# kubeVersion and apiVersions reach only a helm inflation that needs --enable-helm.
EVALUATED = (
    "namePrefix",
    "nameSuffix",
    "images",
    "replicas",
    "commonLabels",
    "forceCommonLabels",
    "labelWithoutSelector",
    "labelIncludeTemplates",
    "commonAnnotations",
    "forceCommonAnnotations",
    "commonAnnotationsEnvsubst",
    "namespace",
    "patches",
    "components",
    "ignoreMissingComponents",
    "kubeVersion",
    "apiVersions",
)
NOT_EVALUATED = {"version": "picks a kustomize binary from argocd-cm's kustomize.path.<version>"}
# Fields of a kustomization that name files or folders: lists of paths, and entries holding one.
PATH_LISTS = (
    "resources",
    "bases",
    "components",
    "crds",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "patchesStrategicMerge",
)
ENTRY_PATHS = {"patches": "path", "patchesJson6902": "path", "replacements": "path"}
GENERATOR_FILES = ("configMapGenerator", "secretGenerator")
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|github\.com/|gitlab\.com/|bitbucket\.org/)", re.I)
_IMAGE_TAG = re.compile(r"^(.*):([a-zA-Z0-9._-]*|\*)$")
BUILD_LIMIT = 300  # characters of kustomize's message kept in an error line
ENABLE_HELM = "--enable-helm"
BUILD_OPTIONS_KEY = "kustomize.buildOptions"  # argocd-cm's
HELM_4_FROM = (5, 8, 0)  # the first kustomize whose helmCharts accept helm 4 (`helm version` must say v3 before)
_VERSION = re.compile(r"v?([0-9]+)\.([0-9]+)\.([0-9]+)")


def kustomization_in(folder: Path) -> Path | None:
    return next((folder / name for name in KUSTOMIZATION_FILES if (folder / name).is_file()), None)


def unevaluated(fields: Mapping[str, Any]) -> str | None:
    """Why check cannot render a source with these `source.kustomize` fields, or None."""
    for key, why in NOT_EVALUATED.items():
        if fields.get(key):
            return f"kustomize.{key} ({why}) is not evaluated by check"
    return None


def references(app_dir: Path, root: Path) -> tuple[set[Path], list[str]]:
    """The folders and files the build reads and its remote bases; raises PathError
    for a local path that leaves the repository."""
    folders: set[Path] = set()
    files: set[Path] = set()
    remote: list[str] = []
    pending = [app_dir]
    while pending:
        folder = pending.pop()
        if folder in folders:
            continue
        folders.add(folder)
        kustomization = kustomization_in(folder)
        if kustomization is None:
            continue
        for field, value in _paths(_read(kustomization, root)):
            shown = f"{kustomization.relative_to(root)}: {field} {value!r}"
            if _REMOTE.match(value):
                remote.append(shown)
                continue
            target = Path(folder, value).resolve()
            if not target.is_relative_to(root):
                raise PathError(
                    f"{shown} resolves outside the repository root {root}; Argo CD's checkout holds only the "
                    "repository, so the build would fail there: keep every base inside it"
                )
            if target.is_dir():
                pending.append(target)
            elif target.is_file():
                files.add(target)
    return folders | files, remote


def _read(kustomization: Path, root: Path) -> Mapping[str, Any]:
    try:
        loaded = goyaml.load(kustomization.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ChartShareError(f"{kustomization.relative_to(root)}: not a readable kustomization: {error}") from None
    if not isinstance(loaded, Mapping):
        raise ChartShareError(f"{kustomization.relative_to(root)}: a kustomization must be a mapping")
    return loaded


def _paths(kustomization: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, path) for every file or folder a kustomization names (inline patches and generators left out)."""

    def local(value: Any) -> bool:
        return isinstance(value, str) and bool(value) and "\n" not in value

    for field in PATH_LISTS:
        for position, value in enumerate(_list(kustomization.get(field))):
            if local(value):
                yield f"{field}[{position}]", value
    for field, key in ENTRY_PATHS.items():
        for position, entry in enumerate(_list(kustomization.get(field))):
            if isinstance(entry, Mapping) and local(entry.get(key)):
                yield f"{field}[{position}].{key}", entry[key]
    for field in GENERATOR_FILES:
        for position, entry in enumerate(_list(kustomization.get(field))):
            if not isinstance(entry, Mapping):
                continue
            for key in ("files", "envs"):
                for index, value in enumerate(_list(entry.get(key))):
                    if local(value):
                        yield f"{field}[{position}].{key}[{index}]", str(value).split("=", 1)[-1]
            if local(entry.get("env")):
                yield f"{field}[{position}].env", entry["env"]
    for position, chart in enumerate(_list(kustomization.get("helmCharts"))):
        if isinstance(chart, Mapping):
            for index, value in enumerate([chart.get("valuesFile"), *_list(chart.get("additionalValuesFiles"))]):
                if local(value):
                    yield f"helmCharts[{position}].valuesFile{f'[{index}]' if index else ''}", value
    for field, key in (("helmGlobals", "chartHome"), ("openapi", "path")):
        value = kustomization.get(field)
        if isinstance(value, Mapping) and local(value.get(key)):
            yield f"{field}.{key}", value[key]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# --- source.kustomize, written as `kustomize edit` writes it ------------------------------------------------

Edit = Callable[[dict[str, Any]], None]


def edits(fields: Mapping[str, Any], envsubst: Callable[[str], str], where: str, app_dir: Path) -> list[Edit]:
    """The changes Argo CD makes to the kustomization, in its order; raises ParameterError on bad fields."""
    for key in fields:
        if key not in EVALUATED and key not in NOT_EVALUATED:
            raise ParameterError(f"{where}: unknown field {key!r}; Argo CD knows {', '.join(EVALUATED)}")
    found: list[Edit] = []
    for key in ("namePrefix", "nameSuffix"):
        if value := _text(fields, key, where):
            found.append(_setter(key, value))
    images = [
        _image(envsubst(str(image)), f"{where}.images[{n}]") for n, image in enumerate(_items(fields, "images", where))
    ]
    if images:
        found.append(lambda k: _set_images(k, images))
    replicas = [_replica(entry, f"{where}.replicas[{n}]") for n, entry in enumerate(_items(fields, "replicas", where))]
    if replicas:
        found.append(lambda k: _set_replicas(k, replicas))
    labels = {str(key): envsubst(str(value)) for key, value in _map(fields, "commonLabels", where).items()}
    if labels:
        found.append(_label_edit(labels, fields, where))
    annotations = _map(fields, "commonAnnotations", where)
    if annotations:
        substitute = _flag(fields, "commonAnnotationsEnvsubst", where)
        values = {str(key): envsubst(str(value)) if substitute else str(value) for key, value in annotations.items()}
        force = _flag(fields, "forceCommonAnnotations", where)
        found.append(lambda k: _add_pairs(k.setdefault("commonAnnotations", {}), values, force, "annotation"))
    if namespace := _text(fields, "namespace", where):
        found.append(_setter("namespace", namespace))
    patches = _items(fields, "patches", where)
    if patches:
        found.append(lambda k: k.__setitem__("patches", [*_list(k.get("patches")), *patches]))
    components = [str(path) for path in _items(fields, "components", where)]
    if _flag(fields, "ignoreMissingComponents", where):
        components = [path for path in components if (app_dir / path).exists()]
    for position, path in enumerate(components):
        if not (app_dir / path).exists():
            raise ParameterError(
                f"{where}.components[{position}]: {path} does not exist (kustomize edit add component fails)"
            )
    if components:
        found.append(
            lambda k: k.__setitem__(
                "components",
                [*_list(k.get("components")), *(c for c in components if c not in _list(k.get("components")))],
            )
        )
    return found


def _setter(key: str, value: str) -> Edit:
    return lambda kustomization: kustomization.__setitem__(key, value)


def _label_edit(labels: Mapping[str, str], fields: Mapping[str, Any], where: str) -> Edit:
    """`kustomize edit add label`: commonLabels, or with --without-selector a `labels` entry."""
    force = _flag(fields, "forceCommonLabels", where)
    without_selector = _flag(fields, "labelWithoutSelector", where)
    templates = _flag(fields, "labelIncludeTemplates", where)
    if templates and not without_selector:
        raise ParameterError(f"{where}.labelIncludeTemplates needs labelWithoutSelector (kustomize refuses it alone)")

    def edit(kustomization: dict[str, Any]) -> None:
        if not without_selector:
            _add_pairs(kustomization.setdefault("commonLabels", {}), labels, force, "label")
            return
        entries = kustomization.setdefault("labels", [])
        entry = next(
            (
                e
                for e in entries
                if isinstance(e, dict)
                and not e.get("includeSelectors")
                and bool(e.get("includeTemplates")) is templates
            ),
            None,
        )
        if entry is None:
            entry = {"pairs": {}, "includeSelectors": False, **({"includeTemplates": True} if templates else {})}
            entries.append(entry)
        _add_pairs(entry.setdefault("pairs", {}), labels, force, "label")

    return edit


def _add_pairs(target: dict[str, Any], pairs: Mapping[str, str], force: bool, kind: str) -> None:
    for key, value in pairs.items():
        if key in target and not force:
            raise ChartShareError(
                f"kustomize edit add {kind}: {kind} {key} is already in the kustomization, so Argo CD's edit fails "
                f"too; set forceCommon{kind.capitalize()}s: true to override it"
            )
        target[key] = value


def _image(arg: str, where: str) -> dict[str, str]:
    """One `kustomize edit set image` argument as the images entry it writes."""
    key, sign, value = arg.partition("=")
    if not sign:
        key, value = "", arg
    name, digest = value.split("@", 1) if "@" in value else (value, "")
    tag = ""
    found = _IMAGE_TAG.match(name)
    if found and ":" in name and name.rfind(":") > name.rfind("/"):
        name, tag = found.group(1), found.group(2)
    if name == arg:
        raise ParameterError(
            f"{where}: {arg!r} is not an image override (use name=newName:tag, name:tag or name@digest)"
        )
    entry = {"name": key or name}
    if key:
        entry["newName"] = name
    if tag:
        entry["newTag"] = tag
    if digest:
        entry["digest"] = digest
    return entry


def _set_images(kustomization: dict[str, Any], images: list[dict[str, str]]) -> None:
    by_name = {
        str(entry.get("name")): dict(entry)
        for entry in _list(kustomization.get("images"))
        if isinstance(entry, Mapping)
    }
    for image in images:
        old = by_name.get(image["name"], {})
        merged = {"name": image["name"]}
        for field in ("newName", "newTag", "digest"):
            value = image.get(field, "")
            value = old.get(field, "") if value == "*" else value
            if value:
                merged[field] = value
        by_name[image["name"]] = merged
    kustomization["images"] = [by_name[name] for name in sorted(by_name)]


def _replica(entry: Any, where: str) -> dict[str, Any]:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
        raise ParameterError(f"{where} needs a name and a count")
    count = entry.get("count")
    if isinstance(count, str) and count.strip().lstrip("-").isdigit():
        count = int(count)
    if not isinstance(count, int) or isinstance(count, bool):
        raise ParameterError(f"{where}.count: expected integer value for count, got {count!r}")
    return {"name": entry["name"], "count": count}


def _set_replicas(kustomization: dict[str, Any], replicas: list[dict[str, Any]]) -> None:
    entries = [dict(entry) for entry in _list(kustomization.get("replicas")) if isinstance(entry, Mapping)]
    for replica in replicas:
        existing = next((entry for entry in entries if entry.get("name") == replica["name"]), None)
        if existing is None:
            entries.append(replica)
        else:
            existing["count"] = replica["count"]
    kustomization["replicas"] = entries


def _text(fields: Mapping[str, Any], key: str, where: str) -> str:
    value = fields.get(key)
    if value is not None and not isinstance(value, str):
        raise ParameterError(f"{where}.{key} must be a string")
    return value or ""


def _flag(fields: Mapping[str, Any], key: str, where: str) -> bool:
    value = fields.get(key, False)
    if not isinstance(value, bool):
        raise ParameterError(f"{where}.{key} must be true or false")
    return value


def _items(fields: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = fields.get(key)
    if value is not None and not isinstance(value, list):
        raise ParameterError(f"{where}.{key} must be a list")
    return value or []


def _map(fields: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = fields.get(key)
    if value is not None and not isinstance(value, Mapping):
        raise ParameterError(f"{where}.{key} must be a mapping")
    return value or {}


# --- the build ---------------------------------------------------------------------------------------------


def command() -> list[str]:
    """`kustomize build`, else `kubectl kustomize`: the binary Argo CD bundles, or the one inside kubectl."""
    if found := shutil.which("kustomize"):
        return [found, "build"]
    if found := shutil.which("kubectl"):
        return [found, "kustomize"]
    raise ChartShareError("rendering a kustomize source needs `kustomize` or `kubectl` on PATH")


def parse_options(text: str) -> tuple[str, ...]:
    """kustomize.buildOptions as Argo CD splits them (on white space)."""
    return tuple(shlex.split(text))


def helm_charts(app_dir: Path, root: Path) -> list[RemoteChart]:
    """The published charts the `helmCharts` of every kustomization the build reads name (an entry without a
    repo is a chart in its chartHome, which the build reads as it is)."""
    found: list[RemoteChart] = []
    reads, _ = references(app_dir, root)
    for folder in sorted(path for path in reads if path.is_dir()):
        kustomization = kustomization_in(folder)
        for entry in _list(_read(kustomization, root).get("helmCharts")) if kustomization else ():
            if isinstance(entry, Mapping) and entry.get("repo") and entry.get("name"):
                chart = RemoteChart(str(entry["repo"]).rstrip("/"), str(entry["name"]), str(entry.get("version") or ""))
                found.append(chart)
    return list(dict.fromkeys(found))


def refuses_helm(helm: str) -> str | None:
    """Why this kustomize cannot render helmCharts with `helm`: before 5.8.0 it refuses helm 4."""
    argv = command()
    found, major = _tool_version(tuple(argv)), _helm_version(helm)
    if found is None or major is None or found >= HELM_4_FROM or not major.startswith("v4"):
        return None
    shown = ".".join(map(str, found))
    return (
        f"kustomize {shown} (before 5.8.0) refuses helm {major} for helmCharts: put kustomize 5.8.1, the one "
        "Argo CD ships, first on PATH, or render with helm 3 (CHARTSHARE_HELM)"
    )


@functools.cache
def _tool_version(argv: tuple[str, ...]) -> tuple[int, ...] | None:
    asked = [argv[0], "version"] if argv[1] == "build" else [argv[0], "version", "--client"]
    try:
        done = subprocess.run(asked, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.split("Kustomize Version:", 1)[-1]
    found = _VERSION.search(text)
    return tuple(int(part) for part in found.groups()) if found else None


@functools.cache
def _helm_version(helm: str) -> str | None:
    try:
        done = subprocess.run([helm, "version", "--short"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.search(done.stdout)
    return f"v{'.'.join(found.groups())}" if found else None


def render(
    app: Application,
    source: Source,
    app_dir: Path,
    root: Path,
    timeout: float,
    options: tuple[str, ...] = (),
    helm: str = "helm",
    charts: tuple[tuple[RemoteChart, Path], ...] = (),
) -> str:
    """What `kustomize build` prints for the source, with its `source.kustomize` applied as Argo CD applies it
    and Argo CD's build options; `charts` are the helmCharts' charts, in the chart store."""
    env = repo_server.build_env(app, source)
    changes = edits(
        source.kustomize, lambda text: repo_server.envsubst(text, env), f"spec.{source.label}.kustomize", app_dir
    )
    reads, _ = references(app_dir, root)
    for folder in sorted(path for path in reads if path.is_dir()):
        confine_tree(folder, root, "kustomization folder")
    if ENABLE_HELM in options:
        options = (*options, "--helm-command", helm)
        changes = [*changes, lambda kustomization: None]  # kustomize writes pulled charts: never into the checkout
    return build(app_dir, root, reads, changes, timeout, options, charts)


def _place_charts(copy: Path, root: Path, reads: set[Path], charts: tuple[tuple[RemoteChart, Path], ...]) -> None:
    """Each helmCharts chart where kustomize looks before it pulls: `<chartHome>/<name>-<version>/<name>`."""
    wanted = {(chart.repository, chart.name, chart.version): folder for chart, folder in charts}
    for folder in sorted(path for path in reads if path.is_dir()):
        kustomization = kustomization_in(folder)
        loaded = _read(kustomization, root) if kustomization else {}
        home = _map(loaded, "helmGlobals", "helmGlobals").get("chartHome") or "charts"
        for entry in _list(loaded.get("helmCharts")):
            if not isinstance(entry, Mapping):
                continue
            key = (str(entry.get("repo") or "").rstrip("/"), str(entry.get("name")), str(entry.get("version") or ""))
            if key not in wanted:
                continue
            target = copy / folder.relative_to(root) / str(home) / f"{key[1]}-{key[2]}" / key[1]
            if not target.exists():
                shutil.copytree(wanted[key], target, symlinks=False)


def build(
    app_dir: Path,
    root: Path,
    reads: set[Path],
    changes: list[Edit],
    timeout: float,
    options: tuple[str, ...] = (),
    charts: tuple[tuple[RemoteChart, Path], ...] = (),
) -> str:
    """The build's output; with edits (or helmCharts), of a scratch copy of the folders and files it reads."""
    if not changes:
        return _run([*command(), str(app_dir), *options], root, timeout, {})
    with tempfile.TemporaryDirectory(prefix="chartshare-kustomize-") as scratch:
        copy = Path(scratch) / "repo"
        for path in sorted(reads):  # parents first, so what a folder copied whole holds is not copied again
            target = copy / path.relative_to(root)
            if target.exists():
                continue
            if path.is_dir():
                shutil.copytree(path, target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
        app_copy = copy / app_dir.relative_to(root)
        kustomization_file = kustomization_in(app_copy)
        if kustomization_file is None:
            raise ChartShareError(f"{app_dir.relative_to(root)}: kustomization file not found in the path")
        kustomization = dict(_read(kustomization_file, copy))
        for change in changes:
            change(kustomization)
        kustomization_file.write_text(goyaml.dump(kustomization), encoding="utf-8")
        _place_charts(copy, root, reads, charts)
        return _run([*command(), str(app_copy), *options], copy, timeout, {str(copy): str(root)})


def _run(argv: list[str], cwd: Path, timeout: float, shown: Mapping[str, str]) -> str:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ChartShareError(f"{' '.join(argv[:2])} did not finish within {timeout:g} s") from None
    except OSError as error:
        raise ChartShareError(f"{argv[0]} cannot be run: {error.strerror}") from None
    if done.returncode != 0:
        message = " ".join(done.stderr.decode("utf-8", "replace").split())
        for scratch, real in shown.items():
            message = message.replace(scratch, real)
        hint = ""
        if "--enable-helm" in message:
            hint = (
                "; Argo CD builds without --enable-helm unless argocd-cm's kustomize.buildOptions adds it (give "
                "check that argocd-cm with --argocd-cm FILE, or --kustomize-build-options)"
            )
        raise ChartShareError(f"{Path(argv[0]).name} {argv[1]} failed: {shortened(message, BUILD_LIMIT)}{hint}")
    return done.stdout.decode("utf-8", "replace")
