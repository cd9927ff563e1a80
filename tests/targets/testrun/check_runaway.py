"""A test whose recursion has no base case: on Python 3.11 it overflows the debugger's tracer too."""

import unittest


def depth(node, n):
    return depth(node, n + 1)  # runaway


class RunawayTest(unittest.TestCase):
    def test_walk(self):
        depth("root", 0)
