"""Orders priced one by one: one of 10,000 comes out wrong. For function traces: many calls, one wrong; a call
that raises; recursion; a method, a nested function, a generator, an async def; two threads; a secret passed in."""

import asyncio
import sys
import threading


def price(qty, unit):
    total = qty * unit
    if qty == 7777:
        total = total * 10  # tr-wrong
    discount = 0
    if qty > 5000:
        discount = 1
    return total - discount


def parse(text):
    value = int(text)  # tr-parse
    return value


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


class Cart:
    def __init__(self):
        self.items = []

    def total(self, rate):
        subtotal = sum(self.items)
        return subtotal * rate


def outer(x):
    def inner(y):
        return x + y

    return inner(2)


def countdown(n):
    while n > 0:
        yield n
        n -= 1


async def fetch(key):
    await asyncio.sleep(0)
    value = key * 2
    await asyncio.sleep(0)
    return value


def work(name, count):
    done = 0
    for _ in range(count):
        done += 1
    return done


def login(user, password):
    ok = len(password) > 3
    return ok


def main():
    totals = [price(qty, 3) for qty in range(1, 10_001)]
    bad = [text for text in ("1", "x2", "3") if not _parses(text)]
    cart = Cart()
    cart.items = [1, 2, 3]
    threads = [threading.Thread(target=work, args=(name, 5), name=name) for name in ("left", "right")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results = (fact(4), cart.total(2), outer(1), list(countdown(3)), asyncio.run(fetch(21)))
    results += (login("ada", "hunter2-s3cret"), tally(range(500)))
    print("order 7777 priced", totals[7776], "expected", 7777 * 3 - 1)
    print("sum", sum(totals), "bad", bad, "results", results)
    sys.stdout.flush()


def _parses(text):
    try:
        parse(text)
    except ValueError:
        return False
    return True


def tally(values):
    total = 0
    for value in values:
        if value == 250:
            total -= 1  # tr-odd
        else:
            total += value
    return total


if __name__ == "__main__":
    main()  # tr-main
