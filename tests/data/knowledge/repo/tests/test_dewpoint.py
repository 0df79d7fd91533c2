import unittest

from tools.dewpoint import dew_point, frost_point_risk


class DewPointTest(unittest.TestCase):
    def test_saturated_air(self):
        self.assertAlmostEqual(dew_point(20.0, 100.0), 20.0, places=6)

    def test_known_value(self):
        self.assertAlmostEqual(dew_point(25.0, 60.0), 16.7, places=1)

    def test_frost_risk(self):
        self.assertTrue(frost_point_risk(1.0, 70.0))
        self.assertFalse(frost_point_risk(10.0, 70.0))


if __name__ == "__main__":
    unittest.main()
