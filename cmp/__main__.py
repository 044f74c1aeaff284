"""`python -m cmp` runs the same entry point as the `chartshare` console script."""

from cmp.cli.launch import main

main()
