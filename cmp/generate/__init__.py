"""The `generate` command end to end: configuration in, the app's manifests and report lines out."""
