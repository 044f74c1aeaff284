"""A directory source's `.jsonnet` files evaluated as Argo CD's repo-server evaluates them.

Argo CD runs go-jsonnet (reposerver/repository/repository.go, makeJsonnetVm), and so does check, through
the `gojsonnet` binding, which wraps go-jsonnet itself: the same standard library, the same errors. The
VM gets `directory.jsonnet`'s extVars and tlas (a `code: true` entry as code, the others as strings), each
value with the app's `$ARGOCD_APP_*` build variables substituted first; imports are searched in the
importing file's folder, then in `libs` (folders relative to the repository root, later ones first) and
the source folder, as go-jsonnet's FileImporter searches its paths. Every file an import reaches must
resolve inside the repository, as every path of a source must. The result is one object, or an array of
objects. The Go runtime never enters a check process (jsonnet_vm.py says why): each file is evaluated by
a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cmp.check.sources.repo_server import envsubst
from cmp.errors import ManifestError, ParameterError, PathError

FIELDS = ("extVars", "tlas", "libs")
ENTRY_FIELDS = ("name", "value", "code")
DEFAULT_SECONDS = 45.0


class Evaluator:
    """Evaluates the source's jsonnet files with its `directory.jsonnet` settings; raises ParameterError
    for a malformed setting (at creation), PathError and ManifestError for a file that fails."""

    def __init__(
        self,
        app_dir: Path,
        root: Path,
        fields: Mapping[str, Any],
        env: Mapping[str, str],
        where: str,
        timeout: float = DEFAULT_SECONDS,
    ):
        for key in fields:
            if key not in FIELDS:
                raise ParameterError(f"{where}: unknown field {key!r}; Argo CD knows {', '.join(FIELDS)}")
        self.root, self.timeout = root, timeout
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
        """The objects one jsonnet file evaluates to (in a process of its own: see jsonnet_vm.py)."""
        request = {
            "file": str(path),
            "root": str(self.root),
            "paths": [str(folder) for folder in self.paths],
            "ext_vars": self.ext_vars,
            "ext_codes": self.ext_codes,
            "tla_vars": self.tla_vars,
            "tla_codes": self.tla_codes,
        }
        argv = [sys.executable, "-I", "-m", "cmp.check.sources.jsonnet_vm"]
        try:
            done = subprocess.run(
                argv, input=json.dumps(request).encode(), capture_output=True, timeout=self.timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise ManifestError(f"{name}: jsonnet did not finish within {self.timeout:g} s") from None
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
            raise ManifestError(f"{name}: jsonnet could not run (exit status {done.returncode}): {last}") from None
        if "error" in answer:  # go-jsonnet's message: the error, then its stack trace
            lines = [line.strip() for line in str(answer["error"]).splitlines() if line.strip()]
            raise ManifestError(f"{name}: jsonnet: {' '.join(lines[:3])}")
        evaluated = json.loads(answer["output"])
        found = evaluated if isinstance(evaluated, list) else [evaluated]
        for position, obj in enumerate(found):
            if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
                at = f" (item {position})" if isinstance(evaluated, list) else ""
                raise ManifestError(f"{name}{at}: jsonnet gives no Kubernetes object (apiVersion, kind, metadata)")
        return found


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
