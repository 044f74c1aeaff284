"""A directory source's `.jsonnet` files evaluated as Argo CD's repo-server evaluates them.

Argo CD runs go-jsonnet (reposerver/repository/repository.go, makeJsonnetVm), and so does check, through
the `gojsonnet` binding, which wraps go-jsonnet itself: the same standard library, the same errors. The
VM gets `directory.jsonnet`'s extVars and tlas (a `code: true` entry as code, the others as strings), each
value with the app's `$ARGOCD_APP_*` build variables substituted first; imports are searched in the
importing file's folder, then in `libs` (folders relative to the repository root, later ones first) and
the source folder, as go-jsonnet's FileImporter searches its paths. Every file an import reaches must
resolve inside the repository, as every path of a source must. The result is one object, or an array of
objects.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import _gojsonnet

from cmp.check.sources import envsubst
from cmp.errors import ManifestError, ParameterError, PathError

FIELDS = ("extVars", "tlas", "libs")
ENTRY_FIELDS = ("name", "value", "code")
MAX_IMPORT_BYTES = 16 << 20


class Evaluator:
    """Evaluates the source's jsonnet files with its `directory.jsonnet` settings; raises ParameterError
    for a malformed setting (at creation), PathError and ManifestError for a file that fails."""

    def __init__(self, app_dir: Path, root: Path, fields: Mapping[str, Any], env: Mapping[str, str], where: str):
        for key in fields:
            if key not in FIELDS:
                raise ParameterError(f"{where}: unknown field {key!r}; Argo CD knows {', '.join(FIELDS)}")
        self.root = root
        self.ext_vars, self.ext_codes = _variables(fields, "extVars", env, where)
        self.tla_vars, self.tla_codes = _variables(fields, "tlas", env, where)
        libs = fields.get("libs") or []
        if not isinstance(libs, list) or not all(isinstance(lib, str) for lib in libs):
            raise ParameterError(f"{where}.libs must be a list of folders (relative to the repository root)")
        self.paths = [app_dir]
        for lib in libs:
            folder = (root / lib.lstrip("/")).resolve()
            if not folder.is_relative_to(root):
                raise PathError(f"{where}.libs: {lib!r} resolved to outside repository root")
            self.paths.append(folder)

    def objects(self, path: Path, name: str) -> list[dict[str, Any]]:
        """The objects one jsonnet file evaluates to."""
        try:
            text = _gojsonnet.evaluate_file(
                str(path),
                ext_vars=self.ext_vars,
                ext_codes=self.ext_codes,
                tla_vars=self.tla_vars,
                tla_codes=self.tla_codes,
                import_callback=self._import,
            )
        except RuntimeError as error:  # go-jsonnet's message: the error, then its stack trace
            lines = [line.strip() for line in str(error).splitlines() if line.strip()]
            raise ManifestError(f"{name}: jsonnet: {' '.join(lines[:3])}") from None
        evaluated = json.loads(text)
        found = evaluated if isinstance(evaluated, list) else [evaluated]
        for position, obj in enumerate(found):
            if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
                at = f" (item {position})" if isinstance(evaluated, list) else ""
                raise ManifestError(f"{name}{at}: jsonnet gives no Kubernetes object (apiVersion, kind, metadata)")
        return found

    def _import(self, folder: str, wanted: str) -> tuple[str, bytes]:
        """go-jsonnet's FileImporter, confined: the importing file's folder, then the paths last to first."""
        candidates = [Path(wanted)] if Path(wanted).is_absolute() else [Path(folder, wanted)]
        candidates += [base / wanted for base in reversed(self.paths) if not Path(wanted).is_absolute()]
        for candidate in candidates:
            if not candidate.is_file():
                continue
            if not candidate.resolve().is_relative_to(self.root):
                raise RuntimeError(f"import {wanted!r}: {candidate} resolved to outside repository root")
            if candidate.stat().st_size > MAX_IMPORT_BYTES:
                raise RuntimeError(f"import {wanted!r}: {candidate} is larger than {MAX_IMPORT_BYTES >> 20} MiB")
            return str(candidate), candidate.read_bytes()
        raise RuntimeError(f"couldn't open import {wanted!r}: no match locally or in the Jsonnet library paths")


def _variables(
    fields: Mapping[str, Any], key: str, env: Mapping[str, str], where: str
) -> tuple[dict[str, str], dict[str, str]]:
    """(strings, code) of `extVars` or `tlas`, each value with the build variables substituted."""
    entries = fields.get(key) or []
    if not isinstance(entries, list):
        raise ParameterError(f"{where}.{key} must be a list of {{name, value, code}}")
    strings: dict[str, str] = {}
    code: dict[str, str] = {}
    for position, entry in enumerate(entries):
        here = f"{where}.{key}[{position}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ParameterError(f"{here} needs a string name")
        unknown = [field for field in entry if field not in ENTRY_FIELDS]
        if unknown:
            raise ParameterError(f"{here}: unknown field {unknown[0]!r}; Argo CD knows {', '.join(ENTRY_FIELDS)}")
        value, is_code = entry.get("value"), entry.get("code", False)
        if not isinstance(value, str | None) or not isinstance(is_code, bool):
            raise ParameterError(f"{here}: value must be a string and code true or false")
        (code if is_code else strings)[entry["name"]] = envsubst(value or "", env)
    return strings, code
