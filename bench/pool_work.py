"""A CPU-bound multiprocessing pool: WORKERS processes share TASKS tasks of SIZE loop turns each (with
0 workers the program runs them itself and starts no process).

python bench/pool_work.py [WORKERS [TASKS [SIZE [START_METHOD]]]]
"""

import multiprocessing
import sys


def work(size):
    total = 0
    for i in range(size):
        total += i * i % 7  # work-line
    return total


if __name__ == "__main__":
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    tasks = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 3_000_000
    method = sys.argv[4] if len(sys.argv) > 4 else "fork"
    if workers == 0:  # no child process at all: the tasks run in the program itself
        print(sum(work(size) for _ in range(tasks)), flush=True)
    else:
        with multiprocessing.get_context(method).Pool(workers) as pool:
            print(sum(pool.map(work, [size] * tasks)), flush=True)
