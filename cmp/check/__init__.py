"""The `check` command: a fleet of Applications rendered offline, and the objects they would fight over."""
