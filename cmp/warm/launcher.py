"""The `chartshare` program of an installation the image builds: the console entry point, started isolated
(`python -I`: no PYTHON* variable, user site or working folder reaches its imports) and importing nothing
before it. pip's console script imports `re` first: 12 ms of the start of every request Argo CD sends.

    python -m cmp.warm.launcher PATH    (PATH: the program to write, usually VENV/bin/chartshare)
"""

from __future__ import annotations

import os
import sys

SCRIPT = "#!{python} -I\nimport sys\nfrom cmp.warm.caller import main\nsys.exit(main())\n"


def write(path: str, python: str) -> None:
    """Replace `path` with the launcher for `python` (an interpreter whose site holds chartshare)."""
    temporary = f"{path}.{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as launcher:
        launcher.write(SCRIPT.format(python=python))
    os.chmod(temporary, 0o755)
    os.replace(temporary, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m cmp.warm.launcher PATH")
    write(sys.argv[1], sys.executable)
