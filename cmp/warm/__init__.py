"""The warm process: a resident chartshare that forks one child per request, the caller's hand-over to it,
and the launcher that writes the image's `chartshare` program."""
