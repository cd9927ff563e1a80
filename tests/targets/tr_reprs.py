"""A traced function given objects whose __repr__ counts its calls, takes a lock its caller holds, or waits for
the program to go on past the call: the trace runs none of them unless asked, and none can hold the program."""

import threading


class Counted:
    calls = 0

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        Counted.calls += 1
        return f"Counted({self.name!r})"


lock = threading.Lock()


class Guarded:
    def __repr__(self):
        with lock:  # the lock its caller holds
            return "Guarded()"


go_on = threading.Event()


class Waiting:
    def __repr__(self):
        go_on.wait()  # until the program has gone on past the call
        return "Waiting()"


def work(obj, n):
    total = n * 2
    return total


def main():
    counted = Counted("a")
    print("counted", work(counted, 1), work(counted, 2))
    with lock:
        print("guarded", work(Guarded(), 3))
    print("waiting", work(Waiting(), 4))
    go_on.set()
    print("repr calls", Counted.calls)


if __name__ == "__main__":
    main()
