"""The program does its work, then fails at module level on its way out: an uncaught exception at exit."""

import sys

results = [n * n for n in range(5)]
print("computed", len(results))
sys.stdout.flush()
if sum(results) != 31:
    raise SystemError(f"checksum mismatch: {sum(results)}")  # exit-raise
