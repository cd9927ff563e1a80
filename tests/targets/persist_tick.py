"""Ticks forever and prints each tick: a breakpoint on the tick line hits on every iteration."""

import os
import time

interval = float(os.environ.get("TICK_SECONDS", "0.02"))
count = 0
while True:
    count += 1  # tick
    print("tick", count, flush=True)
    time.sleep(interval)
