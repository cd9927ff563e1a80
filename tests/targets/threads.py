"""Two worker threads that reach the same breakpoint: for per-thread status (seed 004, 4.3)."""

import threading

ready = threading.Barrier(3)


def work(n):
    ready.wait()
    result = n * 10  # worker-line
    return result


workers = [threading.Thread(target=work, args=(i,), name=f"Worker-{i}") for i in (1, 2)]
for w in workers:
    w.start()
ready.wait()
for w in workers:
    w.join()
print("joined")
