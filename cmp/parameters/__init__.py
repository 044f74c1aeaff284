"""The `parameters` command: the dynamic parameter announcement for Argo CD's Parameters tab."""
