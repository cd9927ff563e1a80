"""The program the benchmark debugs: a loop with locals worth inspecting, stepping forever.

Lines are found by their ``# marker`` comments, as in the tests.
"""

import os


def untouched():
    return 1  # bench-toggle


def work(i):
    data = {"i": i, "items": list(range(10)), "name": f"item-{i}"}
    total = 0  # bench-work
    for x in data["items"]:
        total += x
    return total


def main():
    limit = int(os.environ.get("BENCH_LIMIT", "1000000"))
    i = 0
    results = []
    while i < limit:
        i += 1
        results.append(work(i))  # bench-loop
        del results[:-5]


main()
