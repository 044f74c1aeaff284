"""ApplicationSet generators expanded offline: list, git, clusters, matrix, merge (one module each), the
selector every generator may carry, and the expansion that renders the template once per parameter set."""
