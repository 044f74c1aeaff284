"""The `init` command: the chart's dependencies made present before `generate` renders it."""
