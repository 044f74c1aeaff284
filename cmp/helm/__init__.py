"""helm as a subprocess: the template invocation, the process runner with its deadline, the early start."""
