"""A failing test under a test runner: the runner (stdlib unittest) catches the test's AssertionError."""

import unittest


def value():
    return 41


class ValueTest(unittest.TestCase):
    def test_value(self):
        assert value() == 42  # assert-here


unittest.main(exit=False)
