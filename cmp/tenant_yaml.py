"""Tenant YAML (Chart.yaml, chartshare.yaml, patches, values) checked against bounds before anything is
built from it, in one pass over the parser's events: nothing is composed, nothing expanded.

The bounds are go-yaml's, as Kubernetes and helm read these files:
- aliases: go-yaml v2's budget (`allowedAliasRatio`), counted as it counts while decoding, every alias
  expanded in the count but never in memory; an anchor whose value contains itself is refused too. A
  550-byte Chart.yaml that aliases a list nine times over, eight deep, is 43 million strings once a
  reader turns it into text;
- depth: go-yaml stops at 10,000 levels, but chartshare's readers and rewrites recurse, so a tenant file
  stops at MAX_DEPTH, far past any real chart, values file or patch and well inside Python's stack;
- bytes: helm's own limit on one file of a chart (MaxDecompressedFileSize), unless the caller has a
  smaller one (chartshare.yaml's 1 MiB).
Each refusal is `Refused` (the line and the problem, with its fix); `refuse` turns it into the one named
error every caller gives. Syntax errors are left to the caller's own reading, which says them in its words.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml

from cmp.errors import ConfigError

MAX_BYTES = 5 << 20  # helm's MaxDecompressedFileSize: no file of a chart helm loads is larger
MAX_DEPTH = 100  # nested mappings and sequences; go-yaml's limit is 10,000, chartshare's walks recurse
_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep (chartshare reads tenant YAML to {MAX_DEPTH}); flatten it"
_ALIAS_FLOOR = (100, 1000)  # go-yaml v2 checks the ratio only past 100 aliased and 1,000 decoded nodes


class Refused(Exception):
    """A tenant file past a bound: `line` (1-based, 0 when there is none) and what to say."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(problem)
        self.line = line
        self.problem = problem

    def named(self, source: str) -> str:
        """`SOURCE:LINE: problem`, the form of every chartshare error about a file."""
        return f"{source}:{self.line}: {self.problem}" if self.line else f"{source}: {self.problem}"


def allowed_alias_ratio(decoded: int) -> float:
    """go-yaml v2's allowedAliasRatio: 99% of a small document may come from aliases, 10% of a huge one."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


def check(text: str, limit: int = MAX_BYTES) -> None:
    """Raise Refused when `text` is over `limit` bytes (UTF-8), nests deeper than MAX_DEPTH, or aliases
    past go-yaml's budget. Linear in the text; a syntax error ends the check (the caller reports it)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise Refused(0, f"{size} bytes is over the {_mib(limit)} chartshare reads of one file; make it smaller")
    try:
        _walk(yaml.parse(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError as error:
        if "nesting depth" in str(error):  # libyaml's own limit (1,000), met while it scans ahead
            mark = getattr(error, "problem_mark", None)
            raise Refused(mark.line + 1 if mark is not None else 0, _TOO_DEEP) from None


def refuse(text: str, source: str, limit: int = MAX_BYTES) -> None:
    """check(), its refusal a ConfigError naming `source` and the line."""
    try:
        check(text, limit)
    except Refused as refused:
        raise ConfigError(refused.named(source)) from None


def read(path: Path, source: str, limit: int = MAX_BYTES) -> str:
    """A tenant file's text, never more than `limit` bytes of it in memory, checked; ConfigError naming
    `source` otherwise (FileNotFoundError passes: whether a missing file matters is the caller's)."""
    if not path.is_file() and path.exists():  # a FIFO would block open() for ever, a device never end
        raise ConfigError(f"{source}: not a regular file")
    try:
        with path.open("rb") as file:
            raw = file.read(limit + 1)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise ConfigError(f"{source}: cannot read ({error.strerror or error})") from None
    if len(raw) > limit:
        raise ConfigError(f"{source}: over the {_mib(limit)} chartshare reads of one file; make it smaller")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{source}: not UTF-8 text (bad byte at offset {error.start})") from None
    refuse(text, source, limit)
    return text


def _walk(events: Iterable[yaml.Event]) -> None:
    """The bounds over a stream of parser events, one document after another."""
    expanded: dict[str, int] = {}  # anchor -> nodes go-yaml decodes for its value, aliases expanded
    open_anchors: set[str] = set()  # anchors whose collection is still open (an alias to one is a loop)
    stack: list[tuple[str | None, int]] = []  # open collections: (anchor, nodes decoded in them so far)
    decoded = aliased = 0
    for event in events:
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, yaml.DocumentStartEvent):
            expanded.clear()
            decoded, aliased = 1, 0
            continue
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise Refused(line, _TOO_DEEP)
            if event.anchor:
                open_anchors.add(event.anchor)
            stack.append((event.anchor, 1))
            decoded += 1
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            anchor, size = stack.pop()
            if anchor:
                expanded[anchor] = size
                open_anchors.discard(anchor)
            _add(stack, size)
            continue
        if isinstance(event, yaml.ScalarEvent):
            if event.anchor:
                expanded[event.anchor] = 1
            decoded += 1
            _add(stack, 1)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                raise Refused(line, f"the anchor &{event.anchor} contains itself; write the value out")
            size = expanded.get(event.anchor or "", 0)
            decoded += 1 + size
            aliased += size
            _add(stack, size)
        else:
            continue
        if aliased > _ALIAS_FLOOR[0] and decoded > _ALIAS_FLOOR[1] and aliased / decoded > allowed_alias_ratio(decoded):
            raise Refused(
                line,
                "document contains excessive aliasing (as Kubernetes' YAML reader says: aliases expand it to "
                f"{decoded} nodes); write the values out instead of repeating anchors",
            )


def _add(stack: list[tuple[str | None, int]], size: int) -> None:
    if stack:
        anchor, total = stack[-1]
        stack[-1] = (anchor, total + size)


def _mib(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
