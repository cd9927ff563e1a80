"""A small program with a bug worth a breakpoint: the average of an empty list."""

import os
import sys


def add(a, b):
    result = a + b  # add-body
    return result


def average(values):
    total = 0
    for value in values:
        total = add(total, value)  # loop-body
    return total / len(values)


def main():
    numbers = [3, 4, 5]
    greeting = os.environ.get("GREETING", "hello")
    print(greeting, "stdout")
    print("warn stderr", file=sys.stderr)
    mean = average(numbers)  # call-average
    print("mean", mean, "args", sys.argv[1:])
    return mean


if __name__ == "__main__":
    main()  # module-main
