"""A loop of N steps; prints its wall time (for a capture point at the loop's line)."""

import sys
import time

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
started = time.perf_counter()
total = 0
for i in range(steps):
    total += i * i  # loop-body
elapsed = time.perf_counter() - started
print(f"done total={total} elapsed={elapsed:.6f}", flush=True)
