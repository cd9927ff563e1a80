"""A CPU-bound program for "debuggee overhead": its own wall time, plain and under the debugger."""

import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def counts(n):
    seen = {}
    for i in range(n):
        seen[i % 1000] = seen.get(i % 1000, 0) + i
    return seen


def never_called():
    return 0  # bench-never-hit


start = time.perf_counter()
fib(30)
counts(2_000_000)
print(f"workload_s {time.perf_counter() - start:.4f} python {sys.version_info[0]}.{sys.version_info[1]}")
