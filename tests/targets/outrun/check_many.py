"""600 small passing tests, each printing a line: a run that writes fast and ends with its summary."""

import pytest


@pytest.mark.parametrize("n", range(600))
def test_square(n):
    print("checking", n)
    assert n * n >= n
