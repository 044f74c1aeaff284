"""go-jsonnet in a process of its own: `python -m cmp.check.sources.jsonnet_vm`, one evaluation per run.

The `gojsonnet` binding loads the Go runtime into the process that imports it, and a process forked after
that hangs as soon as it calls into Go again. check forks its render workers, so no check process ever
imports the binding: each evaluation runs here, in a fresh interpreter that imports nothing else (only the
standard library and the binding), reading its request as JSON on stdin and answering on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

MAX_IMPORT_BYTES = 16 << 20


def evaluate(request: dict[str, Any]) -> dict[str, str]:
    """`{"output": JSON text}` or `{"error": go-jsonnet's message}`."""
    import _gojsonnet

    root = Path(request["root"])
    paths = [Path(path) for path in request["paths"]]

    def imported(folder: str, wanted: str) -> tuple[str, bytes]:
        """go-jsonnet's FileImporter, confined: the importing file's folder, then the paths last to first."""
        candidates = [Path(folder, wanted)]
        if not os.path.isabs(wanted):
            candidates += [base / wanted for base in reversed(paths)]
        for candidate in candidates:
            if not candidate.is_file():
                continue
            if not candidate.resolve().is_relative_to(root):
                raise RuntimeError(f"import {wanted!r}: {candidate} resolved to outside repository root")
            if candidate.stat().st_size > MAX_IMPORT_BYTES:
                raise RuntimeError(f"import {wanted!r}: {candidate} is larger than {MAX_IMPORT_BYTES >> 20} MiB")
            return str(candidate), candidate.read_bytes()
        raise RuntimeError(f"couldn't open import {wanted!r}: no match locally or in the Jsonnet library paths")

    try:
        output = _gojsonnet.evaluate_file(
            request["file"],
            ext_vars=request["ext_vars"],
            ext_codes=request["ext_codes"],
            tla_vars=request["tla_vars"],
            tla_codes=request["tla_codes"],
            import_callback=imported,
        )
    except RuntimeError as error:
        return {"error": str(error)}
    return {"output": str(output)}


def main() -> int:
    answer = evaluate(json.loads(sys.stdin.buffer.read()))
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
