"""Writes 12,000 single characters, flushing after each, then a last line."""

import sys

for n in range(12000):
    sys.stdout.write("abcdefghij"[n % 10])
    sys.stdout.flush()
print()
print("LAST-LINE")
