"""A Python program another one starts: prints its argument squared."""

import sys

n = int(sys.argv[1])
squared = n * n  # child-line
print("child squared", squared, flush=True)
