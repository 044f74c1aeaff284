"""What `generate` prints: the manifests (bytes, as Argo CD counts them) and the report lines for stderr.

`Output` loads nothing: a render-cache hit builds one without the pipeline (cmp/generate/cached.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from cmp.inputs.config import Config
    from cmp.ownership.outcome import Outcome


class Output(NamedTuple):
    """stdout's bytes and stderr's lines (each without the `chartshare: ` prefix or a newline)."""

    data: bytes
    lines: tuple[str, ...]


def output(config: Config, outcome: Outcome) -> Output:
    """The stream in the asked format, refused when it is over Argo CD's message limit."""
    from cmp import manifests
    from cmp.ownership.report import summary

    emit = manifests.emit_json if config.output == "json" else manifests.emit_yaml
    text = emit(outcome.resources)
    data = text.encode("utf-8")  # the bytes Argo CD receives are what the limit counts
    manifests.refuse_oversize(data, config.max_output)
    return Output(data, tuple(summary(outcome)))
