"""Two threads take two locks in opposite orders and hang for good."""

import threading
import time

lock_a = threading.Lock()
lock_b = threading.Lock()
both_hold = threading.Barrier(3)  # the two threads, each holding its first lock, and the main thread


def transfer():
    with lock_a:
        both_hold.wait()
        with lock_b:  # transfer-waits
            pass


def audit():
    with lock_b:
        both_hold.wait()
        with lock_a:  # audit-waits
            pass


threads = [threading.Thread(target=transfer, name="transfer"), threading.Thread(target=audit, name="audit")]
for t in threads:
    t.start()
both_hold.wait()  # each thread now goes straight for the other's lock
print("started", flush=True)
for t in threads:
    t.join()
time.sleep(0)
