"""Ends with sys.exit(3): how a program says it failed, not a crash."""

import sys

print("bye", flush=True)
sys.exit(3)
