"""Prints its first argument's number of short lines (default 3000), then a last line."""

import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
for n in range(count):
    print("line", n)
print("DONE-END")
