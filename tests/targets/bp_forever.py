"""Spins until killed: for breakpoints set while the target runs."""

import time

count = 0
while True:
    count += 1  # spin
    time.sleep(0.005)  # nap
