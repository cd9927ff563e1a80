"""Four tests for pytest-xdist's workers; one of them fails at its assert."""


def total(values):
    return sum(values)


def check_small():
    assert total([1, 2]) == 3


def check_wrong():
    values = [1, 2, 3]
    assert total(values) == 7  # failing-assert


def check_empty():
    assert total([]) == 0


def check_more():
    assert total(range(5)) == 10
