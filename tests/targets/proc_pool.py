"""A multiprocessing pool under a start method given as the first argument (fork, spawn, forkserver)."""

import multiprocessing
import sys


def square(n):
    result = n * n  # worker-line
    return result


if __name__ == "__main__":
    context = multiprocessing.get_context(sys.argv[1] if len(sys.argv) > 1 else "fork")
    with context.Pool(2) as pool:
        print("squares", pool.map(square, range(4)), flush=True)
    print("POOL-END", flush=True)
