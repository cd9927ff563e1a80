"""A cache that only grows: a dict gains entries forever."""

import time

sessions_cache = {}


def handle(n):
    sessions_cache[f"request-{n}"] = "x" * 10  # leak-add


print("started", flush=True)
n = 0
while True:
    for _ in range(2000):
        handle(n)
        n += 1
    time.sleep(0.01)
