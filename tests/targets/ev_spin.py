"""A busy loop: a thread spins on a flag nobody sets."""

import threading

ready = {"done": False}


def wait_for_ready():
    while not ready["done"]:  # spin
        pass


threading.Thread(target=wait_for_ready, name="spinner", daemon=True).start()
print("started", flush=True)
threading.Event().wait()
