"""Carrying out decisions on what one app emits: renames, the references that follow them, patches, protection.

The steps run in a fixed order (apply.py). Renames first; then every reference to a renamed object, from the
table in reference_fields.py plus the file's `references:`; then the rules' JSON patches, so that they see
the final names; then the protective annotation, last, so that no patch can take it away (a patch may
still set Prune=confirm, which protection keeps). Only resources a step really changed are marked changed,
and a change confined to `metadata` is marked as such.
"""
