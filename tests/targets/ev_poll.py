"""A hang that counts: a thread polls for a reply nobody sends, counting its attempts."""

import threading

replies = {}


def wait_for_reply():
    attempts = 0
    while "order-7" not in replies:  # poll
        attempts += 1


threading.Thread(target=wait_for_reply, name="poller", daemon=True).start()
print("started", flush=True)
threading.Event().wait()
