"""Every path chartshare hands helm stays inside the repository, symlinks followed."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest
import yaml
from servers import library_chart

from cmp.errors import PathError
from cmp.inputs import paths as paths_module
from cmp.inputs.paths import confine_tree, resolve_values_files
from conftest import run_cli


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    chart = root / "chart"
    (chart / "templates").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.yaml").write_text("token: x\n")
    (root / "shared").mkdir()
    return root, chart


def test_links_that_stay_inside_the_repository_are_fine(tmp_path: Path) -> None:
    root, chart = _repo(tmp_path)
    (chart / "templates" / "shared").symlink_to(root / "shared")
    (chart / "self").symlink_to(chart)  # a loop through a directory is walked once
    confine_tree(chart, root, "chart")


@pytest.mark.parametrize(
    ("link", "target", "message"),
    [
        (
            "templates/leak.yaml",
            "../../../outside/secret.yaml",
            r"symlink chart/templates/leak.yaml resolved to outside",
        ),
        ("files", "/etc", r"symlink chart/files resolved to outside repository root \(/etc\)"),
        ("dangling", "nowhere", r"symlink chart/dangling is broken or loops"),
    ],
)
def test_a_link_out_of_the_repository_is_refused(tmp_path: Path, link: str, target: str, message: str) -> None:
    root, chart = _repo(tmp_path)
    (chart / link).symlink_to(target)
    with pytest.raises(PathError, match=message):
        confine_tree(chart, root, "chart")


def test_a_link_out_behind_a_link_in_is_refused(tmp_path: Path) -> None:
    root, chart = _repo(tmp_path)
    (root / "shared" / "leak.yaml").symlink_to(tmp_path / "outside" / "secret.yaml")
    (chart / "templates" / "shared").symlink_to(root / "shared")
    with pytest.raises(PathError, match=r"symlink shared/leak.yaml resolved to outside"):
        confine_tree(chart, root, "chart")


def test_init_refuses_a_file_dependency_holding_a_link_out_of_the_repository(helm: str, tmp_path: Path) -> None:
    """`helm package` follows links, and generate cannot look inside the .tgz it leaves in charts/: the
    dependency's folder is checked before it is packaged."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "token").write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n")
    library = library_chart(tmp_path / "repo" / "libs")
    (library / "templates" / "leak.yaml").symlink_to(tmp_path / "outside" / "token")
    app = tmp_path / "repo" / "app"
    (app / "templates").mkdir(parents=True)
    dependency = {"name": "greeting", "version": "0.1.0", "repository": "file://../libs/greeting-0.1.0"}
    meta = {"apiVersion": "v2", "name": "shop", "version": "1.0.0", "dependencies": [dependency]}
    (app / "Chart.yaml").write_text(yaml.safe_dump(meta))
    env = {"CHARTSHARE_HELM": helm, "HOME": str(tmp_path), "CHARTSHARE_CACHE": str(tmp_path / "cache")}
    result = run_cli(["init", "--repo-root", str(tmp_path / "repo")], env=env, cwd=app)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "chartshare: error: dependency greeting 0.1.0 from file://../libs/greeting-0.1.0: symlink "
        f"libs/greeting-0.1.0/templates/leak.yaml resolved to outside repository root ({tmp_path}/outside/token)\n"
    )
    assert not (app / "charts").exists() or not any((app / "charts").iterdir())


# --- value-file globs: expanded without listing, or naming, anything outside the repository ---------------


def _values(root: Path, pattern: str, base: str = "app") -> list[str]:
    found = resolve_values_files([pattern], root / base, root)
    return [str(path.relative_to(root)) for path in found]


def _glob_tree(tmp_path: Path) -> Path:
    root, _ = _repo(tmp_path)
    for name in ("app/values.yaml", "app/values-a.yaml", "app/.hidden.yaml", "app/env/dev.yaml", "shared/s.yaml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("a: 1\n")
    return root


@pytest.mark.parametrize(
    "pattern",
    ["/../*", "/../outs*/*.yaml", "../../*/secret.yaml", "/*/../../*", "/app/../../outside/*"],
)
def test_a_glob_climbing_out_is_refused_by_its_own_name_before_anything_outside_is_listed(
    tmp_path: Path, pattern: str
) -> None:
    root = _glob_tree(tmp_path)
    with pytest.raises(PathError) as refused:
        _values(root, pattern)
    assert str(refused.value) == f"values-files: pattern '{pattern}' reaches outside the repository root"


def test_a_glob_through_a_link_out_lists_nothing_there_and_names_nothing_there(tmp_path: Path) -> None:
    root = _glob_tree(tmp_path)
    (root / "app" / "ext").symlink_to(tmp_path / "outside")
    (root / "app" / "up").symlink_to(root / "shared")  # in the repository: `up/..` is the repository's root
    for pattern in ("ext/*", "ext/../*", "e*/*.yaml"):
        with pytest.raises(PathError) as refused:
            _values(root, pattern)
        assert "secret" not in str(refused.value) and str(tmp_path / "outside") not in str(refused.value)
    assert _values(root, "up/../shared/*.yaml") == ["shared/s.yaml"]


def test_a_link_to_a_file_outside_is_refused_by_its_name_in_the_repository(tmp_path: Path) -> None:
    root = _glob_tree(tmp_path)
    (root / "app" / "values-leak.yaml").symlink_to(tmp_path / "outside" / "secret.yaml")
    with pytest.raises(PathError) as refused:
        _values(root, "values-*.yaml")
    assert str(refused.value) == "values-files: file 'values-leak.yaml' resolved to outside repository root"


@pytest.mark.parametrize(
    "pattern",
    ["*.yaml", "values*.yaml", ".*", "*/*.yaml", "/app/*", "/*/*.yaml", "env/*", "[ve]*", "v?lues.yaml", "*/", "**"],
)
def test_a_glob_inside_the_repository_matches_what_glob_glob_matches(tmp_path: Path, pattern: str) -> None:
    root = _glob_tree(tmp_path)
    base = root if pattern.startswith("/") else root / "app"
    expected = sorted(glob.glob(str(base / pattern.lstrip("/"))))
    assert paths_module._expand(pattern, base, root) == [match.rstrip("/") for match in expected]
