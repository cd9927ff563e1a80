"""A traced function called N times (argv[1], default 1,000,000): bounds of a trace's kept calls."""

import sys


def advance(i):
    return i + 1


def main(n):
    total = 0
    for _ in range(n):
        total = advance(total)
    print("calls", total)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
