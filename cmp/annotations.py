"""Argo CD's annotations chartshare reads and writes: the tracking id and the sync options.

Argo CD tracks an object by `argocd.argoproj.io/tracking-id`, and only `Prune=false` or `Prune=confirm`
among the sync options already on a live object stops a sync with prune from deleting it. `generate`
writes the protection, `check` reads both, so the grammar lives once, here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TRACKING_ID = "argocd.argoproj.io/tracking-id"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
PROTECTION = ("Prune=false", "Delete=false")  # what `protect` adds to the owner's copy
PRUNE_SAFE = ("Prune=false", "Prune=confirm")  # the only live settings that stop a prune


def sync_options(annotations: Mapping[str, Any]) -> list[str]:
    """The comma-separated options of the sync-options annotation, blanks dropped."""
    raw = annotations.get(SYNC_OPTIONS)
    return [option.strip() for option in str(raw or "").split(",") if option.strip()]


def prune_safe(annotations: Mapping[str, Any]) -> bool:
    """Whether these annotations stop a sync with prune from deleting the object."""
    return any(option in PRUNE_SAFE for option in sync_options(annotations))
