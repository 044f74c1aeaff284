"""jsonnet directory sources evaluated by go-jsonnet (the `gojsonnet` binding) with Argo CD's settings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cmp.check.sources.jsonnet import Evaluator
from cmp.errors import ManifestError, ParameterError, PathError

ENV = {"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_NAMESPACE": "prod"}
CONFIGMAP = "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: %s}, data: %s}"


def _repo(tmp_path: Path, main: str, **files: str) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    (root / "app" / "main.jsonnet").write_text(main)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root, root / "app"


def _objects(root: Path, app: Path, fields: dict[str, object]) -> list[dict[str, object]]:
    return Evaluator(app, root, fields, ENV, "spec.source.directory.jsonnet").objects(app / "main.jsonnet", "main")


def test_tlas_and_ext_vars_take_code_or_strings_with_build_variables_substituted(tmp_path: Path) -> None:
    main = "function(replicas, who) [" + CONFIGMAP % ("std.extVar('app') + '-' + who", "{n: '' + replicas}") + "]"
    root, app = _repo(tmp_path, main)
    fields = {
        "extVars": [{"name": "app", "value": "$ARGOCD_APP_NAME-${ARGOCD_APP_NAMESPACE}"}],
        "tlas": [{"name": "replicas", "value": "1 + 2", "code": True}, {"name": "who", "value": "1 + 2"}],
    }
    (found,) = _objects(root, app, fields)
    assert found["metadata"] == {"name": "shop-prod-1 + 2"} and found["data"] == {"n": "3"}


def test_imports_search_the_file_folder_then_libs_last_first_and_a_single_object_is_one(tmp_path: Path) -> None:
    root, app = _repo(
        tmp_path,
        "local n = import 'name.libsonnet'; " + CONFIGMAP % ("n", "{}"),
        **{"vendor/a/name.libsonnet": "'from-a'", "vendor/b/name.libsonnet": "'from-b'"},
    )
    assert _objects(root, app, {"libs": ["vendor/a", "vendor/b"]})[0]["metadata"] == {"name": "from-b"}
    (app / "name.libsonnet").write_text("'local'")
    assert _objects(root, app, {"libs": ["vendor/a"]})[0]["metadata"] == {"name": "local"}


def test_an_import_that_leaves_the_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.libsonnet").write_text("'stolen'")
    root, app = _repo(tmp_path, "local s = import '../../secret.libsonnet'; " + CONFIGMAP % ("s", "{}"))
    with pytest.raises(ManifestError, match="resolved to outside repository root"):
        _objects(root, app, {})
    with pytest.raises(PathError, match=r"libs: '\.\./\.\.' resolved to outside repository root"):
        _objects(root, app, {"libs": ["../.."]})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tla": []}, "unknown field 'tla'; Argo CD knows extVars, tlas, libs"),
        ({"tlas": [{"value": "x"}]}, r"tlas\[0\] needs a string name"),
        ({"extVars": [{"name": "a", "value": "x", "code": "yes"}]}, "code true or false"),
        ({"libs": "vendor"}, "libs must be a list"),
    ],
)
def test_malformed_settings_name_the_field(tmp_path: Path, fields: dict[str, object], message: str) -> None:
    root, app = _repo(tmp_path, "{}")
    with pytest.raises(ParameterError, match=message):
        _objects(root, app, fields)


def test_an_evaluation_error_and_a_result_that_is_no_object_name_the_file(tmp_path: Path) -> None:
    root, app = _repo(tmp_path, "function(missing) {}")
    with pytest.raises(ManifestError, match="main: jsonnet: RUNTIME ERROR: Missing argument: missing"):
        _objects(root, app, {})
    (app / "main.jsonnet").write_text("[1]")
    with pytest.raises(ManifestError, match=r"main \(item 0\): jsonnet gives no Kubernetes object"):
        _objects(root, app, {})


def test_the_go_runtime_never_enters_the_check_process(tmp_path: Path) -> None:
    """A process forked after go-jsonnet loaded hangs when it calls into Go: check forks its render
    workers, so every evaluation runs in a fresh interpreter."""
    root, app = _repo(tmp_path, CONFIGMAP % ("'a'", "{}"))
    assert _objects(root, app, {})[0]["metadata"] == {"name": "a"}
    assert "_gojsonnet" not in sys.modules
