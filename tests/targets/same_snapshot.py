"""Values a snapshot and a capture point read, the program noting every call of its own code: a
``__repr__`` and a property it wrote. The stop is in a function without values of its own, so that
only the snapshot reads them. It prints what it saw; run plain, it prints the same."""

import collections
import threading

calls = []


class Order:
    def __init__(self, n):
        self.n = n
        self.items = ["apple"] * n

    def __repr__(self):
        calls.append("Order.__repr__")
        return f"Order({self.n})"


class Guarded:
    def __init__(self):
        self._lock = threading.Lock()

    @property
    def lock(self):
        calls.append("Guarded.lock")
        return self._lock


def read_here():
    return 0  # snapshot-here


def work(order, guarded):
    tally = collections.Counter({order: 2})
    nested = {"order": order, "orders": [order, order], order.n: (order,)}
    total = len(nested) + len(tally)  # capture-here
    with guarded.lock:
        return total + read_here()


print(work(Order(3), Guarded()))
print("calls", calls)
