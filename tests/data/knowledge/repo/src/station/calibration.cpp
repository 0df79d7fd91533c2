#include "calibration.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace tidepool {

Calibration load_calibration(const std::string& toml_path) {
  Calibration c;
  std::ifstream in(toml_path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key, equals;
    double value = 0;
    if (!(words >> key >> equals >> value) || equals != "=") continue;
    if (key == "temperature_offset") c.temperature_offset_c = value;
    else if (key == "humidity_scale") c.humidity_scale = value;
    else if (key == "altitude") c.station_altitude_m = value;
  }
  return c;
}

// Reduces the pressure measured at the station to sea level with the barometric formula, so
// stations at different heights can be compared.
double sea_level_pressure(double station_hpa, double temperature_c, double altitude_m) {
  const double kelvin = temperature_c + 273.15;
  return station_hpa * std::pow(1.0 - 0.0065 * altitude_m / (kelvin + 0.0065 * altitude_m), -5.257);
}

Reading apply_calibration(const Reading& raw, const Calibration& calibration) {
  Reading r = raw;
  r.temperature_c += calibration.temperature_offset_c;
  r.humidity_percent = std::fmin(100.0, raw.humidity_percent * calibration.humidity_scale);
  r.pressure_hpa = sea_level_pressure(raw.pressure_hpa, r.temperature_c, calibration.station_altitude_m);
  return r;
}

}  // namespace tidepool
