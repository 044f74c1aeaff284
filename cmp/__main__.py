"""`python -m cmp` runs the same entry point as the `chartshare` console script."""

from .launch import main

main()
