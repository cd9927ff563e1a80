"""Counts up for a long time: for pause, conditional and hit-count breakpoints."""

import time

total = 0
for i in range(1000):
    total += i  # loop-line
print("done", total)
time.sleep(0.001)
while True:
    time.sleep(0.01)  # forever
