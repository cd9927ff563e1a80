"""Writes 2,000 lines and ends with os._exit at once: no interpreter shutdown, no flush at exit."""

import os
import sys

for n in range(2000):
    sys.stdout.write(f"row {n}\n")
sys.stdout.write("LAST-ROW\n")
sys.stdout.flush()
os._exit(7)
