"""Counts with a helper and a small class: conditional, hit-count, log and function breakpoints."""


def step(i):
    doubled = i * 2  # step-body
    return int(doubled)


class Point:
    def __init__(self, x):
        self.x = x  # point-init

    def norm(self):
        return abs(self.x)  # point-norm


def main():
    total = 0
    for i in range(1, 21):
        total += step(i)  # loop-call
    point = Point(-3)
    print("total", total, point.norm())  # report
    return total


if __name__ == "__main__":
    main()
