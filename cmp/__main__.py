"""`python -m cmp` runs the same CLI as the `chartshare` console script."""

from .cli import main

main()
