"""A loop to step through: a running total, a counter and a list that grows."""


def accumulate(values):
    total = 0
    seen = []
    label = "start"
    for v in values:
        total += v  # loop-body
        seen.append(v)
        label = "running"
    return total, seen, label


accumulate([3, 4, 5])
