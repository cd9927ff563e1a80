"""A pool of workers all blocked on one queue nobody fills."""

import queue
import threading

jobs: queue.Queue[int] = queue.Queue()


def worker():
    while True:
        job = jobs.get()  # worker-waits
        print("job", job)


workers = [threading.Thread(target=worker, name=f"worker-{n}", daemon=True) for n in range(4)]
for w in workers:
    w.start()
print("started", flush=True)
for w in workers:
    w.join()
