"""The command line: the fast argv path of a plain `generate`, the typer app, and the one place that
prints errors and chooses exit statuses."""
