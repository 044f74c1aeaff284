"""helm's output stream in, Argo CD's input stream out: the only code that reads or writes helm's text.

The stream is cut into pieces as text (stream.py), so each document keeps helm's exact bytes and its
`# Source:` template path, and what holds no object stays where it stood. A document is identified from
its text (identity.py, resting on structure.py and reach.py) and read whole by the exact reading
(exact.py), the reference every fast path is held to, only when something needs its object;
`parse(stream, exact=True)` reads every document that way, and every such reading is recorded
(`exact_readings`); what the scan found may be kept across renders by a caller's `Memory`. A document no
stage changed is written back byte for byte (emit.py); a change confined to `metadata` rewrites that entry
alone; JSON patches, label and annotation edits and the names a
rename fixes are carried out on the text itself where it allows (textpatch.py, metapatch.py, names.py,
on blocks.py).
"""

from __future__ import annotations

from cmp.manifests.documents import Foreseen, Memory, foresee, parse
from cmp.manifests.emit import emit_json, emit_yaml, refuse_oversize
from cmp.manifests.identity import Scanned, scan
from cmp.manifests.resource import Head, Resource, exact_readings, searchable, surely_lacks
from cmp.manifests.stream import Chunk, split

__all__ = [
    "Chunk",
    "Foreseen",
    "Head",
    "Memory",
    "Resource",
    "Scanned",
    "emit_json",
    "emit_yaml",
    "exact_readings",
    "foresee",
    "parse",
    "refuse_oversize",
    "scan",
    "searchable",
    "split",
    "surely_lacks",
]
