"""Writes 500 numbered lines to stdout and 500 to stderr, alternating, then a last line on each."""

import sys

for n in range(500):
    print("out", n, flush=True)
    print("err", n, file=sys.stderr, flush=True)
print("OUT-END", flush=True)
print("ERR-END", file=sys.stderr, flush=True)
