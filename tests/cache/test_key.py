"""The render cache's key: every ingredient, changed alone, misses; two checkouts of one app hit; the walk
that reads the chart for the key also tells whether it calls a function that renders differently each time.

The settings are what generate hands over: a real resolved Config (cmp.inputs.config.build), as
cmp.render.settings.settings gives it.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import deep_folders
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cmp
from cmp.cache import key as key_module
from cmp.cache.key import Fingerprint, PartialFingerprint, begin_fingerprint
from cmp.generate import cached
from cmp.inputs import config as configuration
from cmp.inputs.parameters import Value
from cmp.render.settings import settings

APP = "apps/dev/order"
CHART = "charts/app"


def _packed(files: Mapping[str, str]) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    return data.getvalue()


def _write(root: Path, files: Mapping[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a chart (a packed subchart, a file reached through a symlink), an app folder with
    chartshare.yaml and a values file, a README nothing renders, and a helm binary (only its identity counts)."""
    root = tmp_path / "checkout" / "repo"
    _write(
        root,
        {
            f"{CHART}/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n",
            f"{CHART}/values.yaml": "replicas: 1\n",
            f"{CHART}/templates/configmap.yaml": "kind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
            f"{CHART}/charts/sub-1.0.0.tgz": _packed(
                {"sub/Chart.yaml": "name: sub\n", "sub/templates/a.yaml": "a: 1\n"}
            ),
            "shared/banner.txt": "hello\n",
            f"{APP}/chartshare.yaml": f"chart: ../../../{CHART}\n",
            f"{APP}/values.yaml": "replicas: 2\n",
            f"{APP}/values-extra.yaml": "extra: true\n",
            "README.md": "the docs\n",
        },
    )
    (root / CHART / "files").mkdir()
    (root / CHART / "files" / "banner.txt").symlink_to(Path("../../../shared/banner.txt"))
    helm = tmp_path / "bin" / "helm"
    helm.parent.mkdir()
    helm.write_text("#!/bin/sh\nexit 0\n")
    helm.chmod(0o755)
    return root


def _helm(repo: Path) -> Path:
    return repo.parent.parent / "bin" / "helm"


def _partial(
    repo: Path,
    flags: Mapping[str, Value] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    app: str = APP,
    purpose: str = "generate",
    helm: Path | None = None,
    extra: Mapping[str, object] | None = None,
) -> PartialFingerprint:
    """What generate does: resolve the Config, hand it over whole but for what cannot change the output."""
    given = {
        "values-files": ("values.yaml",),
        "repo-root": str(repo),
        "helm": str(helm or _helm(repo)),
        **(flags or {}),
    }
    base_env = {"ARGOCD_APP_NAME": "dev-order", "ARGOCD_APP_NAMESPACE": "shop", **(env or {})}
    resolved = configuration.build(repo / app, given, base_env)
    chart = (repo / CHART).resolve()
    return begin_fingerprint(
        purpose,
        {**settings(resolved), **(extra or {})},
        chart=chart,
        root=resolved.repo_root,
        helm=resolved.helm,
        env=base_env,
    )


def _fingerprint(repo: Path, flags: Mapping[str, Value] | None = None, **options: Any) -> Fingerprint:
    return _partial(repo, flags, **options).finish()


def _key(repo: Path, flags: Mapping[str, Value] | None = None, **options: object) -> str:
    return _fingerprint(repo, flags, **options).key


# --- what must hit ----------------------------------------------------------------------------------------


def test_the_same_inputs_give_the_same_key(repo: Path) -> None:
    assert _key(repo) == _key(repo)


def test_two_checkouts_of_one_app_share_a_key(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "another-request" / "unpacked" / "repo"
    shutil.copytree(repo, other, symlinks=True)
    helm = _helm(repo)
    assert _key(other, helm=helm) == _key(repo, helm=helm)


def test_a_commit_that_changes_nothing_the_render_reads_keeps_the_key(repo: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=repo, check=True)
    before = _key(repo)
    (repo / "README.md").write_text("the docs, rewritten\n")
    subprocess.run([*git, "commit", "-qam", "two"], cwd=repo, check=True)
    assert _key(repo) == before


# --- every ingredient, changed alone, misses ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        ({"release-name": "other"}, {}),
        ({"namespace": "other"}, {}),
        ({"values": "replicas: 3\n"}, {}),
        ({"set": (("replicas", "3"),)}, {}),
        ({"set-string": (("replicas", "3"),)}, {}),
        ({"include-crds": "false"}, {}),
        ({"skip-tests": "true"}, {}),
        ({"kube-version": "1.30.0"}, {}),
        ({"api-versions": ("example.io/v1",)}, {}),
        ({}, {"ARGOCD_APP_NAME": "dev-order-2"}),
        ({}, {"ARGOCD_GRPC_MAX_SIZE_MB": "50"}),
        ({"skip-schema-validation": "true"}, {}),
        ({"output": "json"}, {}),
        ({}, {"HELM_NAMESPACE": "elsewhere"}),
    ],
    ids=lambda given: ",".join(given) or "-",
)
def test_a_changed_setting_alone_misses(repo: Path, flags: dict[str, Value], env: dict[str, str]) -> None:
    """Every Application parameter and option that reaches helm or the output, and helm's environment."""
    assert _key(repo, flags, env=env) != _key(repo)


def test_another_purpose_misses(repo: Path) -> None:
    assert _key(repo, purpose="check") != _key(repo)


def test_another_chartshare_version_misses(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _key(repo)
    monkeypatch.setattr(cmp, "__version__", cmp.__version__ + ".post1")
    assert _key(repo) != before


def test_a_changed_chart_template_misses(repo: Path) -> None:
    before = _key(repo)
    (repo / CHART / "templates" / "configmap.yaml").write_text("kind: ConfigMap\n")
    assert _key(repo) != before


def test_a_renamed_chart_file_misses(repo: Path) -> None:
    before = _key(repo)
    (repo / CHART / "templates" / "configmap.yaml").rename(repo / CHART / "templates" / "config.yaml")
    assert _key(repo) != before


def test_a_new_file_in_the_chart_misses(repo: Path) -> None:
    before = _key(repo)
    (repo / CHART / "templates" / "NOTES.txt").write_text("")
    assert _key(repo) != before


def test_a_changed_packed_subchart_misses(repo: Path) -> None:
    before = _key(repo)
    (repo / CHART / "charts" / "sub-1.0.0.tgz").write_bytes(_packed({"sub/Chart.yaml": "name: sub\nversion: 2\n"}))
    assert _key(repo) != before


def test_a_changed_file_behind_a_symlink_in_the_chart_misses(repo: Path) -> None:
    before = _key(repo)
    (repo / "shared" / "banner.txt").write_text("goodbye\n")
    assert _key(repo) != before


def test_a_changed_values_file_misses(repo: Path) -> None:
    before = _key(repo)
    (repo / APP / "values.yaml").write_text("replicas: 3\n")
    assert _key(repo) != before


def test_the_order_of_values_files_counts(repo: Path) -> None:
    one = _key(repo, {"values-files": ("values.yaml", "values-extra.yaml")})
    assert one != _key(repo, {"values-files": ("values-extra.yaml", "values.yaml")})


def test_a_changed_chartshare_yaml_misses(repo: Path) -> None:
    before = _key(repo)
    (repo / APP / "chartshare.yaml").write_text(f"chart: ../../../{CHART}\ncache: never\n")
    assert _key(repo) != before


def test_a_changed_set_file_misses(repo: Path) -> None:
    flags: dict[str, Value] = {"set-file": (("banner", "/shared/banner.txt"),)}
    before = _key(repo, flags)
    (repo / "shared" / "banner.txt").write_text("goodbye\n")
    assert _key(repo, flags) != before


def test_a_file_any_setting_names_counts_by_its_bytes(repo: Path) -> None:
    """A field holding paths, added to Config later, counts by the files' bytes without being named here."""
    banner = (repo / "shared" / "banner.txt").resolve()
    before = _key(repo, extra={"later_files": (("banner", banner),)})
    banner.write_text("goodbye\n")
    assert _key(repo, extra={"later_files": (("banner", banner),)}) != before


def test_the_app_path_within_the_repository_counts(repo: Path) -> None:
    shutil.copytree(repo / APP, repo / "apps/prod/order")
    assert _key(repo, app="apps/prod/order") != _key(repo)


def test_a_helm_binary_elsewhere_misses(repo: Path, tmp_path: Path) -> None:
    moved = tmp_path / "other-bin" / "helm"
    moved.parent.mkdir()
    shutil.copy2(_helm(repo), moved)
    assert _key(repo, helm=moved) != _key(repo)


def _replace_helm(repo: Path, *, tail: str = "", later_ns: int = 0) -> None:
    """The binary rewritten in place: `tail` appended, its modification time moved by `later_ns`."""
    helm = _helm(repo)
    stamp = helm.stat()
    helm.write_text(helm.read_text() + tail)
    os.utime(helm, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + later_ns))


def test_a_helm_binary_of_another_size_misses(repo: Path) -> None:
    before = _key(repo)
    _replace_helm(repo, tail="# 3.17.4\n")
    assert _key(repo) != before


def test_a_helm_binary_replaced_in_place_misses(repo: Path) -> None:
    before = _key(repo)
    _replace_helm(repo, later_ns=1_000_000_000)
    assert _key(repo) != before


def test_a_helm_found_on_path_counts_by_the_binary_found(repo: Path, tmp_path: Path) -> None:
    folder = str(_helm(repo).parent)
    first = _fingerprint(repo, env={"PATH": folder}, helm=Path("helm")).key
    (tmp_path / "other-bin").mkdir()
    shutil.copy2(_helm(repo), tmp_path / "other-bin" / "helm")
    assert _fingerprint(repo, env={"PATH": f"{tmp_path / 'other-bin'}"}, helm=Path("helm")).key != first


def test_a_setting_without_a_canonical_form_is_refused(repo: Path) -> None:
    with pytest.raises(TypeError, match="no canonical form for set"):
        _key(repo, extra={"tags": {"a", "b"}})


def test_a_symlink_loop_in_the_chart_ends_the_walk_and_counts(repo: Path) -> None:
    before = _key(repo)
    (repo / CHART / "templates" / "again").symlink_to(Path(".."))
    assert _key(repo) != before


# --- nondeterministic charts -------------------------------------------------------------------------------


def test_a_plain_chart_is_deterministic(repo: Path) -> None:
    (repo / CHART / "templates" / "note.yaml").write_text("# now and then, randAlphaNum outside any action\n")
    assert not _fingerprint(repo).nondeterministic


def test_a_template_calling_a_random_function_is_nondeterministic(repo: Path) -> None:
    (repo / CHART / "templates" / "secret.yaml").write_text("password: {{ randAlphaNum 16 | b64enc }}\n")
    assert _fingerprint(repo).nondeterministic


def test_a_packed_subchart_calling_one_is_nondeterministic(repo: Path) -> None:
    (repo / CHART / "charts" / "sub-1.0.0.tgz").write_bytes(
        _packed({"sub/Chart.yaml": "name: sub\n", "sub/templates/cert.yaml": '{{ $ca := genCA "x" 365 }}\n'})
    )
    assert _fingerprint(repo).nondeterministic


def test_a_values_file_calling_one_for_tpl_is_nondeterministic(repo: Path) -> None:
    (repo / APP / "values.yaml").write_text("token: '{{ uuidv4 }}'\n")
    assert _fingerprint(repo).nondeterministic


def test_an_inline_value_calling_one_for_tpl_is_nondeterministic(repo: Path) -> None:
    assert _fingerprint(repo, {"set": (("stamp", '{{ now | date "2006" }}'),)}).nondeterministic


def test_the_verdict_comes_from_the_bytes_read_for_the_key(repo: Path) -> None:
    (repo / CHART / "templates" / "secret.yaml").write_text("password: {{ randAlpha 8 }}\n")
    found = _fingerprint(repo)
    shutil.rmtree(repo / CHART)
    assert found.nondeterministic


def test_the_deadline_does_not_count(repo: Path) -> None:
    """A render that finished under one deadline prints what it prints under another."""
    assert _key(repo, {"timeout": "30"}) == _key(repo)


def test_where_a_symlink_in_the_chart_leads_counts(repo: Path) -> None:
    before = _key(repo)
    (repo / "shared" / "other.txt").write_text("hello\n")  # the same bytes, reached by another name
    link = repo / CHART / "files" / "banner.txt"
    link.unlink()
    link.symlink_to(Path("../../../shared/other.txt"))
    assert _key(repo) != before


@pytest.mark.parametrize("target", ["/", "../../../../outside"], ids=["root", "outside"])
def test_a_link_out_of_the_repository_is_never_followed_and_nothing_is_kept(
    repo: Path, tmp_path: Path, target: str
) -> None:
    """The render refuses such a link; the walk stops at it, before reading anything it leads to (a folder
    holding a FIFO, which would block a reader for ever, and a file past the walk's bytes)."""
    outside = tmp_path / "checkout" / "outside"
    outside.mkdir()
    os.mkfifo(outside / "pipe.yaml")
    with (outside / "huge.bin").open("wb") as huge:
        huge.truncate(key_module.MAX_BYTES + 1)
    (repo / CHART / "templates" / "leak").symlink_to(Path(target))
    found = _fingerprint(repo)
    assert not found.usable
    assert found.notices == (
        "notice: render cache: templates/leak is a link out of the repository; rendering without the cache",
    )


# --- bounds and faults: what cannot be read whole is never cached, and never fails the render ------------


def test_a_dag_of_folder_links_is_walked_once_per_real_folder(repo: Path) -> None:
    """Twelve levels of two links each to the level below: 4,096 paths to the last file, twelve folders."""
    levels = repo / CHART / "files" / "dag"
    for depth in range(12, -1, -1):
        (levels / f"d{depth}").mkdir(parents=True)
        if depth == 12:
            (levels / "d12" / "leaf.txt").write_text("leaf\n")
        else:
            for name in ("a", "b"):
                (levels / f"d{depth}" / name).symlink_to(Path(f"../d{depth + 1}"))
    started = time.monotonic()
    before = _fingerprint(repo)
    assert before.usable and time.monotonic() - started < 10
    (levels / "d12" / "leaf.txt").write_text("another leaf\n")
    assert _key(repo) != before.key


def test_a_folder_a_thousand_deep_is_walked(repo: Path) -> None:
    deep_folders.make(repo / CHART / "files", 1000)
    try:
        found = _fingerprint(repo)
        assert found.usable and not found.nondeterministic
    finally:
        deep_folders.remove(repo / CHART / "files", 1000)


def test_a_truncated_tgz_data_file_is_data_and_a_truncated_packed_chart_is_not_cached(repo: Path) -> None:
    (repo / CHART / "files" / "data.tgz").write_bytes(_packed({"a.txt": "a" * 5000})[:40])
    assert not _fingerprint(repo).nondeterministic  # only charts/*.tgz are read as packed charts
    (repo / CHART / "charts" / "sub-1.0.0.tgz").write_bytes(_packed({"sub/Chart.yaml": "name: sub\n"})[:40])
    assert _fingerprint(repo).nondeterministic  # a packed chart the scan could not read: not kept


def test_a_large_nondeterministic_template_is_found(repo: Path) -> None:
    big = "# padding\n" * 300_000 + "password: {{ randAlphaNum 16 }}\n"  # 3 MB, the call at its very end
    (repo / CHART / "templates" / "big.yaml").write_text(big)
    assert _fingerprint(repo).nondeterministic


def test_a_chart_past_the_walks_bounds_is_not_keyed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(key_module, "MAX_FILES", 3)
    found = _fingerprint(repo)
    assert not found.usable
    assert found.notices == ("notice: render cache: the chart has more than 3 files; rendering without the cache",)


def test_an_unreadable_chart_means_no_key_never_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: object, folder: str, prefix: str) -> list[os.DirEntry[str]]:
        raise RuntimeError("a file system that misbehaves")

    monkeypatch.setattr(key_module._Reader, "_entries", broken)
    found = _fingerprint(repo)
    assert not found.usable and "misbehaves" in found.notices[0]


@given(st.lists(st.sampled_from([b"{", b"{", b"}", b"a", b"\n", b"{ {", b"x" * 70]), max_size=400))
def test_the_search_for_an_action_answers_as_a_substring_search(parts: list[bytes]) -> None:
    data = b"".join(parts)
    assert key_module.holds_action(data) is (b"{{" in data)


def test_an_action_past_many_single_braces_is_found() -> None:
    braces = b'{"a": 1} ' * 200
    assert key_module.holds_action(braces + b"{{ .Values.x }}")
    assert not key_module.holds_action(braces + b"{")
    assert key_module.holds_action(b"x" * 10 + b"{{")


# --- the key of what the rules made of helm's output --------------------------------------------------------


def _printed_key(repo: Path, flags: Mapping[str, Value] | None = None, printed: bytes = b"\0" * 32) -> str | None:
    """What generate does after helm: the Config's settings but the values, and helm's output's digest."""
    given = {"values-files": ("values.yaml",), "repo-root": str(repo), "helm": str(_helm(repo)), **(flags or {})}
    resolved = configuration.build(repo / APP, given, {"ARGOCD_APP_NAME": "dev-order", "ARGOCD_APP_NAMESPACE": "shop"})
    return key_module.printed_key(
        "generate", cached.printed_settings(settings(resolved)), root=resolved.repo_root, printed=printed
    )


@pytest.mark.parametrize(
    "flags",
    [
        {"values-files": ("values.yaml", "values-extra.yaml")},
        {"values": "replicas: 3\n"},
        {"set": (("replicas", "3"),)},
        {"set-string": (("replicas", "3"),)},
        {"set-file": (("banner", "/shared/banner.txt"),)},
    ],
    ids=lambda given: ",".join(given),
)
def test_the_values_alone_do_not_count_after_helm(repo: Path, flags: dict[str, Value]) -> None:
    """helm alone reads them: the digest of what it printed stands for them."""
    assert _printed_key(repo, flags) == _printed_key(repo)


def test_a_changed_values_file_or_chart_keeps_the_key_of_the_same_output(repo: Path) -> None:
    before = _printed_key(repo)
    (repo / APP / "values.yaml").write_text("replicas: 3\n")
    (repo / CHART / "templates" / "configmap.yaml").write_text("kind: ConfigMap\n")
    assert _printed_key(repo) == before


@pytest.mark.parametrize(
    "flags",
    [
        {"release-name": "other"},
        {"namespace": "other"},
        {"output": "json"},
        {"app": "dev-order-2"},
    ],
    ids=lambda given: ",".join(given),
)
def test_what_reads_helms_output_counts_after_helm(repo: Path, flags: dict[str, Value]) -> None:
    assert _printed_key(repo, flags) != _printed_key(repo)


def test_another_output_of_helm_or_chartshare_yaml_misses_after_helm(repo: Path) -> None:
    before = _printed_key(repo)
    assert _printed_key(repo, printed=b"\1" * 32) != before
    (repo / APP / "chartshare.yaml").write_text(f"chart: ../../../{CHART}\nowner: dev-order\n")
    assert _printed_key(repo) != before


def test_the_key_after_helm_is_never_a_render_key(repo: Path) -> None:
    assert _printed_key(repo) != _key(repo)


# --- the key of the settings alone (the mark beside a kept render) -----------------------------------------


def _settings_key(repo: Path, flags: Mapping[str, Value] | None = None) -> str | None:
    return _partial(repo, flags).settings_key


def test_the_settings_key_leaves_the_chart_folder_out_and_the_values_in(repo: Path) -> None:
    before = _settings_key(repo)
    (repo / CHART / "templates" / "configmap.yaml").write_text("kind: ConfigMap\n")
    (repo / CHART / "templates" / "NOTES.txt").write_text("")
    assert _settings_key(repo) == before
    (repo / APP / "values.yaml").write_text("replicas: 3\n")
    assert _settings_key(repo) != before
    assert _settings_key(repo, {"release-name": "other"}) not in (before, _settings_key(repo))


def test_the_settings_key_is_never_a_render_key_and_the_walk_after_it_gives_the_render_key(repo: Path) -> None:
    partial = begin_fingerprint(
        "generate",
        {"chart": "the same"},
        chart=(repo / CHART).resolve(),
        root=repo,
        helm=str(_helm(repo)),
        env={},
    )
    settings_key = partial.settings_key
    whole = begin_fingerprint(
        "generate", {"chart": "the same"}, chart=(repo / CHART).resolve(), root=repo, helm=str(_helm(repo)), env={}
    ).finish()
    assert partial.finish().key == whole.key != settings_key
    empty = repo / "empty-chart"
    empty.mkdir()
    alone = begin_fingerprint("generate", {}, chart=empty, root=repo, helm=str(_helm(repo)), env={})
    assert alone.settings_key != alone.finish().key  # a chart folder with nothing to walk
