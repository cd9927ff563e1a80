"""Counts to 20, printing each step, then exits with the code given as its first argument."""

import sys

for i in range(1, 21):
    print("i", i, flush=True)
    square = i * i  # count
print("done", flush=True)
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
