"""Prints numbered lines until the file named by its first argument exists, then a last line."""

import os
import sys
import time

gate = sys.argv[1]
n = 0
while not os.path.exists(gate):
    print("tick", n, flush=True)
    n += 1
    time.sleep(0.02)  # slow enough that a slow relay restart stays within the output kept (10,000 lines)
print("DONE-END", flush=True)
