"""Remote charts: Helm repositories and OCI registries, fetched into the chart store and read from it.

`init` and `check` fetch (the network, credentials, the deadline); `generate` only looks an entry up and
never touches the network. Below generate, so all three share one reading of the store.
"""
