"""Two threads deadlock on two RLocks taken with acquire() calls (no 'with' to read)."""

import threading

first = threading.RLock()
second = threading.RLock()
both_hold = threading.Barrier(2)


def writer():
    first.acquire()
    both_hold.wait()
    second.acquire()  # writer-waits


def reader():
    second.acquire()
    both_hold.wait()
    first.acquire()  # reader-waits


threads = [threading.Thread(target=writer, name="writer"), threading.Thread(target=reader, name="reader")]
for t in threads:
    t.start()
print("started", flush=True)
for t in threads:
    t.join()
