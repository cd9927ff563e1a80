"""A pool worker raises for one input and the parent does not catch it: the parent stops at the exception
re-raised from map(); the traced calls made in the worker are named there."""

import multiprocessing


def inverse(n):
    return 1 / n  # tr-pool-raise


if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(1) as pool:
        print(pool.map(inverse, [2, 0]))
