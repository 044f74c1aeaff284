"""Folders nested a thousand levels deep, made and removed without recursion (shutil.rmtree, and so
pytest's own clean-up, recurse once per level and fail past Python's recursion limit)."""

from __future__ import annotations

import os
from pathlib import Path


def make(base: Path, depth: int) -> None:
    """`base`/d/d/.../d (`depth` levels) with a file at the bottom."""
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = below
    with open(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as bottom:
        bottom.write("down here\n")
    os.close(fd)


def remove(base: Path, depth: int) -> None:
    """Undo `make`, deepest first."""
    fds = [os.open(base, os.O_RDONLY | os.O_DIRECTORY)]
    for _ in range(depth):
        fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
    os.unlink("bottom.txt", dir_fd=fds[-1])
    os.close(fds.pop())
    while fds:
        os.rmdir("d", dir_fd=fds[-1])
        os.close(fds.pop())
