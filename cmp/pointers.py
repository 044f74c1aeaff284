"""JSON Pointers (RFC 6901), as rules, reference rows and text patches write paths into an object."""

from __future__ import annotations


def pointer_parts(path: str) -> list[str]:
    """`/a/b~1c/*` -> [`a`, `b/c`, `*`] (JSON Pointer unescaping; `*` stays a wildcard in reference paths)."""
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]]
