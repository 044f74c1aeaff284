"""chartshare: an Argo CD config-management plugin that lets several Applications share one Helm chart."""

__version__ = "0.1.0"
