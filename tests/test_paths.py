"""Every path chartshare hands helm stays inside the repository, symlinks followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmp.config import confine_tree
from cmp.errors import PathError


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
