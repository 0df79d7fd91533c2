import math

# Magnus formula coefficients (Alduchov and Eskridge, 1996), valid from -40 to 50 degrees C.
A = 17.625
B = 243.04


def dew_point(temperature_c, relative_humidity):
    """Temperature at which the air would be saturated, in degrees Celsius."""
    if not 0 < relative_humidity <= 100:
        raise ValueError("relative humidity must be in (0, 100]")
    gamma = math.log(relative_humidity / 100.0) + A * temperature_c / (B + temperature_c)
    return B * gamma / (A - gamma)


def frost_point_risk(temperature_c, relative_humidity):
    """True when the dew point is below zero and the night is likely to bring hoar frost."""
    return dew_point(temperature_c, relative_humidity) < 0.0 and temperature_c < 4.0
