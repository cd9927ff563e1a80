"""A pool worker that raises for one input: the parent sees the error re-raised from map()."""

import multiprocessing


def inverse(n):
    return 1 / n  # raise-line


if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(1) as pool:
        try:
            pool.map(inverse, [2, 0])
        except ZeroDivisionError as exc:
            print("parent caught", type(exc).__name__, flush=True)
    print("RAISE-END", flush=True)
