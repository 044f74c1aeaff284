"""Protection: the owner's copy of a shared object carries Prune=false,Delete=false."""

from __future__ import annotations

from cmp.annotations import PROTECTION, SYNC_OPTIONS, sync_options
from cmp.manifests import Resource


def protect(resource: Resource) -> bool:
    """Merge Prune=false,Delete=false into the sync-options annotation, keeping any Prune=/Delete= already
    set (Prune=confirm stays). Returns whether the object changed."""
    metadata = resource.mutable_metadata()
    if metadata is None:
        return False
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
    options = sync_options(annotations)
    present = {option.partition("=")[0] for option in options}
    missing = [option for option in PROTECTION if option.partition("=")[0] not in present]
    if not missing:
        return False
    annotations[SYNC_OPTIONS] = ",".join(options + missing)
    metadata["annotations"] = annotations
    resource.mark_changed(metadata_only=True)
    return True
