"""The baseline: today's findings recorded in a file, so an old repository adopts check without fixing
everything first (`--write-baseline FILE`), and later runs fail only on what is new (`--baseline FILE`).

The file is JSON a reviewer can read in a diff: one entry per finding with its identity's fields (code, the
object, the apps) and the fingerprint SARIF gives the same finding. Reading it trusts the fields, not the
fingerprint, so an entry edited by hand (an app removed from `apps`) means what it says.
"""

from __future__ import annotations

import json
from typing import Any

from cmp.check.analysis.conflicts import Report
from cmp.check.analysis.identity import Identity, baselined

FORMAT = "chartshare-check-baseline"
VERSION = 1
_FIELDS = ("code", "cluster", "group", "kind", "namespace", "name")


class NotBaseline(Exception):
    """A file that is not a baseline this chartshare writes; the message says where and how to fix it."""


def write(report: Report) -> str:
    """Every finding a baseline may hold, sorted, one JSON document."""
    findings = sorted(set(baselined(report)))
    entries = [{**dict(zip(_FIELDS, found[:6], strict=True)), "apps": list(found.apps)} for found in findings]
    for entry, found in zip(entries, findings, strict=True):
        entry["fingerprint"] = found.fingerprint
    return json.dumps({"format": FORMAT, "version": VERSION, "findings": entries}, indent=2) + "\n"


def read(text: str, path: str) -> frozenset[Identity]:
    """The identities a baseline holds; NotBaseline naming the file (and the entry) when it is not one."""
    fix = "write it with check --write-baseline"
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as problem:
        raise NotBaseline(f"{path}: not JSON ({problem}): {fix}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise NotBaseline(f'{path}: not a chartshare baseline (no "format": "{FORMAT}"): {fix}')
    if document.get("version") != VERSION:
        found = document.get("version")
        raise NotBaseline(f"{path}: baseline version {found!r}, this chartshare reads {VERSION}: {fix}")
    findings = document.get("findings")
    if not isinstance(findings, list):
        raise NotBaseline(f"{path}: findings must be a list: {fix}")
    return frozenset(_identity(entry, f"{path}: findings[{n}]") for n, entry in enumerate(findings))


def _identity(entry: Any, where: str) -> Identity:
    if not isinstance(entry, dict):
        raise NotBaseline(f"{where} must be a mapping")
    values = [entry.get(field) for field in _FIELDS]
    apps = entry.get("apps")
    if not all(isinstance(value, str) for value in values):
        raise NotBaseline(f"{where}: {', '.join(_FIELDS)} must be strings")
    if not isinstance(apps, list) or not apps or not all(isinstance(app, str) for app in apps):
        raise NotBaseline(f"{where}: apps must be a list of app names")
    code, cluster, group, kind, namespace, name = (str(value) for value in values)
    return Identity(code, cluster, group, kind, namespace, name, tuple(sorted(apps)))
