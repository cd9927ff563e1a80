"""Waits until the file named by its first argument exists, prints five lines, passes its stop line,
and exits with the code given as its second argument."""

import os
import sys
import time

gate = sys.argv[1]
print("waiting", flush=True)
while not os.path.exists(gate):
    time.sleep(0.01)
for n in range(1, 6):
    print("line", n, flush=True)
reached = True  # stop here
print("after", flush=True)
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
