"""The cmp-server emulator itself follows Argo CD: environment, checkout, argv, deadline, output rules."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from emulator import (
    Application,
    Cluster,
    CmpError,
    CmpServer,
    DiscoveryError,
    ManifestError,
    PluginConfig,
    PluginConfigError,
    envsubst,
    flatten,
    split_manifests,
)

# A plugin that reports what it was given: its cwd, argv, environment and file modes, as a ConfigMap.
REPORTER = textwrap.dedent(
    """
    import json, os, sys
    modes = {name: oct(os.stat(name).st_mode & 0o777) for name in sorted(os.listdir("."))}
    report = {"cwd": os.getcwd(), "argv": sys.argv[1:], "env": dict(os.environ), "modes": modes}
    print(json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "report"},
                      "data": {"report": json.dumps(report)}}))
    """
)


def _plugin(tmp_path: Path, generate: list[str], **spec: Any) -> Path:
    document = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ConfigManagementPlugin",
        "metadata": {"name": "reporter"},
        "spec": {"version": "v1", "generate": {"command": generate}, "discover": {"fileName": "./marker"}, **spec},
    }
    path = tmp_path / "plugin.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    app = tmp_path / "repo" / "apps" / "web"
    app.mkdir(parents=True)
    (app / "marker").write_text("x\n")
    script = app / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return tmp_path / "repo"


@pytest.fixture
def reporter(tmp_path: Path) -> CmpServer:
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    plugin = _plugin(tmp_path, [sys.executable, str(script)], parameters={"dynamic": {"command": ["false"]}})
    return CmpServer(plugin, {"PATH": os.environ["PATH"], "SIDECAR": "yes"}, workdir=tmp_path / "work")


def _app(**overrides: Any) -> Application:
    manifest: dict[str, Any] = {
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": "https://git.example.com/r.git",
                "path": "apps/web",
                "targetRevision": "main",
                "plugin": {"name": "reporter-v1"},
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
        },
    }
    manifest["metadata"].update(overrides.pop("metadata", {}))
    manifest["spec"]["source"]["plugin"] = overrides.pop("plugin", manifest["spec"]["source"]["plugin"])
    return Application.from_manifest(manifest)


def _report(server: CmpServer, app: Application, repo: Path, **kwargs: Any) -> dict[str, Any]:
    (obj,) = server.manifests(app, repo, **kwargs)
    return dict(json.loads(obj["data"]["report"]))


def test_generate_gets_the_request_variables_on_top_of_the_sidecar_environment(reporter: CmpServer, repo: Path) -> None:
    report = _report(reporter, _app(), repo, cluster=Cluster("v1.29.3+k3s1", ("v1", "v1/Pod")), revision="a" * 40)
    env = report["env"]
    assert env["SIDECAR"] == "yes"
    assert env["ARGOCD_APP_NAME"] == "web"
    assert env["ARGOCD_APP_NAMESPACE"] == "shop"
    assert env["ARGOCD_APP_PROJECT_NAME"] == "default"
    assert env["ARGOCD_APP_REVISION_SHORT"] == "a" * 7
    assert env["ARGOCD_APP_REVISION_SHORT_8"] == "a" * 8
    assert env["ARGOCD_APP_SOURCE_PATH"] == "apps/web"
    assert env["KUBE_VERSION"] == "1.29.3"
    assert env["KUBE_API_VERSIONS"] == "v1,v1/Pod"
    assert env["ARGOCD_APP_PARAMETERS"] == "null"
    assert report["cwd"].endswith("/apps/web")


def test_apps_outside_the_control_plane_namespace_are_named_namespace_underscore_name(
    reporter: CmpServer, repo: Path
) -> None:
    report = _report(reporter, _app(metadata={"namespace": "team-a"}), repo)
    assert report["env"]["ARGOCD_APP_NAME"] == "team-a_web"


def test_parameters_arrive_as_go_json_and_escaped_param_variables(reporter: CmpServer, repo: Path) -> None:
    plugin = {
        "name": "reporter-v1",
        "env": [{"name": "FOO", "value": "$ARGOCD_APP_NAME-$$-${ARGOCD_APP_NAMESPACE}"}],
        "parameters": [
            {"name": "set", "map": {"image.tag": "1.2<3"}},
            {"name": "values-files", "array": ["a.yaml", "b.yaml"]},
            {"name": "release-name", "string": "web"},
        ],
    }
    env = _report(reporter, _app(plugin=plugin), repo)["env"]
    assert env["ARGOCD_ENV_FOO"] == "web-$-shop"
    assert env["ARGOCD_APP_PARAMETERS"] == (
        '[{"map":{"image.tag":"1.2\\u003c3"},"name":"set"},{"array":["a.yaml","b.yaml"],"name":"values-files"},'
        '{"name":"release-name","string":"web"}]'
    )
    assert env["PARAM_SET_IMAGE_TAG"] == "1.2<3"
    assert (env["PARAM_VALUES_FILES_0"], env["PARAM_VALUES_FILES_1"]) == ("a.yaml", "b.yaml")
    assert env["PARAM_RELEASE_NAME"] == "web"


def test_files_arrive_0644_and_argv_is_not_shell_expanded(tmp_path: Path, repo: Path) -> None:
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    server = CmpServer(
        _plugin(tmp_path, [sys.executable, str(script), "$HOME", "a b"]), dict(os.environ), workdir=tmp_path / "w"
    )
    report = _report(server, _app(plugin={"name": "reporter-v1"}), repo)
    assert report["argv"] == ["$HOME", "a b"]
    assert report["modes"] == {"marker": "0o644", "run.sh": "0o644"}


def test_the_announcement_call_gets_no_kube_revision_or_destination(tmp_path: Path, repo: Path) -> None:
    dump = tmp_path / "dump.py"
    dump.write_text("import json, os; print(json.dumps([{'name': 'env', 'map': dict(os.environ)}]))")
    plugin = _plugin(tmp_path, ["true"], parameters={"dynamic": {"command": [sys.executable, str(dump)]}})
    server = CmpServer(plugin, {"PATH": os.environ["PATH"]}, workdir=tmp_path / "w")
    (entry,) = server.parameters(_app(), repo)
    assert set(entry["map"]) >= {"ARGOCD_APP_NAME", "ARGOCD_APP_SOURCE_PATH", "ARGOCD_APP_PARAMETERS"}
    assert not {"KUBE_VERSION", "KUBE_API_VERSIONS", "ARGOCD_APP_NAMESPACE", "ARGOCD_APP_REVISION"} & set(entry["map"])


def test_dynamic_entries_come_before_static_ones_and_are_type_checked(tmp_path: Path, repo: Path) -> None:
    static = [{"name": "a", "collectionType": "string"}]
    good = _plugin(
        tmp_path, ["true"], parameters={"static": static, "dynamic": {"command": ["echo", '[{"name":"b"}]']}}
    )
    server = CmpServer(good, {"PATH": os.environ["PATH"]}, workdir=tmp_path / "w")
    assert [entry["name"] for entry in server.parameters(_app(), repo)] == ["b", "a"]
    bad = _plugin(tmp_path, ["true"], parameters={"dynamic": {"command": ["echo", '[{"name":"b","map":{"k":1}}]']}})
    with pytest.raises(ManifestError, match="values must be strings"):
        CmpServer(bad, {"PATH": os.environ["PATH"]}, workdir=tmp_path / "w").parameters(_app(), repo)


def test_named_plugin_must_be_name_dash_version_and_still_match(reporter: CmpServer, repo: Path) -> None:
    with pytest.raises(DiscoveryError, match='name "reporter"'):
        reporter.manifests(_app(plugin={"name": "reporter"}), repo)
    (repo / "apps" / "web" / "marker").unlink()
    with pytest.raises(DiscoveryError, match='name "reporter-v1"'):
        reporter.manifests(_app(), repo)
    with pytest.raises(DiscoveryError, match="could not find plugin"):
        reporter.manifests(_app(plugin={}), repo)


def test_discovery_alone_selects_the_plugin(reporter: CmpServer, repo: Path) -> None:
    assert _report(reporter, _app(plugin={}), repo)["env"]["ARGOCD_APP_PARAMETERS"] == "null"


def test_the_deadline_kills_the_command_and_terms_its_group(tmp_path: Path, repo: Path) -> None:
    pidfile = tmp_path / "child.pid"
    plugin = _plugin(tmp_path, ["sh", "-c", f"sleep 30 >/dev/null 2>&1 & echo $! > {pidfile}; sleep 30"])
    server = CmpServer(plugin, {"PATH": os.environ["PATH"]}, workdir=tmp_path / "w", deadline=1.5)
    started = time.monotonic()
    with pytest.raises(CmpError, match="failed signal: killed"):
        server.manifests(_app(), repo)
    assert time.monotonic() - started < 5
    child = int(pidfile.read_text())
    for _ in range(50):
        if not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the background child survived the group's SIGTERM")


def test_a_failing_command_reports_argv_status_and_stderr(tmp_path: Path, repo: Path) -> None:
    plugin = _plugin(tmp_path, ["sh", "-c", "echo bad thing >&2; exit 3"])
    server = CmpServer(plugin, {"PATH": os.environ["PATH"]}, workdir=tmp_path / "w")
    with pytest.raises(CmpError, match=r"^`sh -c 'echo bad thing >&2; exit 3'` failed exit status 3: bad thing$"):
        server.manifests(_app(), repo)


def test_a_symlink_out_of_the_repository_is_refused(reporter: CmpServer, repo: Path) -> None:
    (repo / "apps" / "web" / "escape").symlink_to("/etc/passwd")
    with pytest.raises(ManifestError, match="illegal filepath in symlink"):
        reporter.manifests(_app(), repo)


@pytest.mark.parametrize(
    ("stream", "kinds"),
    [
        ("---\n---\nnull\n---\napiVersion: v1\nkind: A\n---\n# just a comment\n", ["A"]),
        ("apiVersion: v1\nkind: List\nitems:\n- {kind: A}\n- {kind: B}\n", ["A", "B"]),
        ("apiVersion: v1\nkind: ConfigMapList\nitems: null\n", []),
        ('{"kind": "A"}\n{"kind": "B"} null {"kind": "C"}', ["A", "B", "C"]),
        ("--- # a comment\nkind: A\n", ["A"]),
    ],
)
def test_output_is_read_with_argo_cds_rules(stream: str, kinds: list[str]) -> None:
    assert [obj["kind"] for obj in flatten(split_manifests(stream))] == kinds


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        ("apiVersion: v1\nmetadata: {name: x}\n", "Kind' is missing"),
        ("kind: A\n---\nkind: ''\n", "Kind' is missing"),
        ("just text\n", "cannot unmarshal"),
        ("kind: A\n---x\nkind: B\n", "invalid Yaml document separator"),
    ],
)
def test_a_bad_document_fails_the_whole_output(stream: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        flatten(split_manifests(stream))


def test_plugin_yaml_validation_follows_argo_cd_and_refuses_unknown_keys(tmp_path: Path) -> None:
    path = _plugin(tmp_path, [])
    with pytest.raises(PluginConfigError, match="generate command should be non-empty"):
        PluginConfig.load(path)
    path = _plugin(tmp_path, ["true"], lockRepo=True)
    with pytest.raises(PluginConfigError, match=r"unknown key spec\.lockRepo"):
        PluginConfig.load(path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("$A-${A}", "x-x"), ("$$A", "$A"), ("${}", ""), ("$", "$"), ("a$-b", "ab"), ("$UNSET.", ".")],
)
def test_plugin_env_values_expand_like_go_os_expand(text: str, expected: str) -> None:
    assert envsubst(text, {"A": "x"}) == expected
