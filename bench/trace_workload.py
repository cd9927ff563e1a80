"""A program for the function-trace bench: one small function called 100,000 times (the traced one)
while untraced code does clearly more of the work, then an untraced-only phase. It times itself:

    loop_s      the loop: per iteration one call of ``priced`` and the untraced ``busy``
    untraced_s  the same ``busy`` work alone, 100,000 times, after the loop (no traced call in it)
"""

import sys
import time

CALLS = 100_000


def priced(qty, unit):
    total = qty * unit
    if qty % 1000 == 777:
        total += 1
    return total


def busy(i):
    acc = 0
    for k in range(80):
        acc += (i ^ k) & 7
    return acc


def main():
    checksum = 0
    start = time.perf_counter()
    for i in range(CALLS):
        checksum += priced(i, 3) + busy(i)  # bench-traced-loop
    loop_s = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(CALLS):
        checksum += busy(i)  # bench-untraced-loop
    untraced_s = time.perf_counter() - start
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    print(f"trace_workload loop_s {loop_s:.4f} untraced_s {untraced_s:.4f} calls {CALLS} python {version}")
    print("checksum", checksum)


if __name__ == "__main__":
    main()
