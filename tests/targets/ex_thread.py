"""An exception in a worker thread while the main thread waits for it."""

import threading


def work(batch):
    items = list(range(batch))
    return items[batch + 1]  # worker-raise


worker = threading.Thread(target=work, args=(3,), name="worker-1")
worker.start()
worker.join()
print("main done")
