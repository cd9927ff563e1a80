"""Ticks until the file named on its command line exists, then prints how many ticks it made."""

import os
import sys
import time


def tick(n):
    return n + 1  # tick-here


def main(stop):
    n = 0
    while not os.path.exists(stop):
        n = tick(n)
        time.sleep(0.001)
    print("ticks", n)


main(sys.argv[1])
