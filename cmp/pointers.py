"""JSON Pointers (RFC 6901), as rules, reference rows and text patches write paths into an object."""

from __future__ import annotations


def pointer_parts(path: str) -> list[str]:
    """`/a/b~1c/*` -> [`a`, `b/c`, `*`] (JSON Pointer unescaping; `*` stays a wildcard in reference paths)."""
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]]


def token(key: str) -> str:
    """A key as one reference token of a JSON Pointer: `~` written ~0, `/` written ~1."""
    return key.replace("~", "~0").replace("/", "~1")
