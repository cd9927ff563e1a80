"""The same kind of failures under unittest."""

import unittest


class CartTest(unittest.TestCase):
    def test_expected_raise(self):
        with self.assertRaises(KeyError):
            {}["missing"]

    @unittest.expectedFailure
    def test_known_bug(self):
        self.assertEqual(1, 2)

    @unittest.skip("not today")
    def test_skipped(self):
        raise AssertionError("never runs")

    def test_total(self):
        total = 4
        self.assertEqual(total, 5)  # unit-assert
