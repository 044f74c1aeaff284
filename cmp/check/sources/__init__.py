"""Each source rendered as Argo CD's repo-server renders it (chartshare, Helm, kustomize, directory,
jsonnet), with the published charts and dependencies it needs, into claims."""
