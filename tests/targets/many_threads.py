"""Ten workers parked on an event while the main thread steps: for compact multi-threaded stops."""

import threading

go = threading.Event()
workers = [threading.Thread(target=go.wait, name=f"Worker-{i}") for i in range(10)]
for w in workers:
    w.start()
total = 0  # main-start
for _ in workers:
    total += 1  # main-step
go.set()
for w in workers:
    w.join()
print("joined", total)
