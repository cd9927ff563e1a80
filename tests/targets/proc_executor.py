"""A ProcessPoolExecutor (the platform's default start method)."""

from concurrent.futures import ProcessPoolExecutor


def cube(n):
    result = n * n * n  # worker-line
    return result


if __name__ == "__main__":
    with ProcessPoolExecutor(max_workers=2) as executor:
        print("cubes", list(executor.map(cube, range(4))), flush=True)
    print("EXECUTOR-END", flush=True)
