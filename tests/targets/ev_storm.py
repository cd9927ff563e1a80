"""An exception storm: a tight loop raises and swallows exceptions."""

import time


def parse(text):
    try:
        return int(text)
    except ValueError:  # storm-catch
        return None


print("started", flush=True)
while True:
    for _ in range(500):
        parse("not a number")
    time.sleep(0.001)
