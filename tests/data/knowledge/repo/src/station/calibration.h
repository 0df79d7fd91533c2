#pragma once
#include "sensor_reader.h"

namespace tidepool {

// Offsets measured against a reference instrument; see docs/calibration.md.
struct Calibration {
  double temperature_offset_c = 0;
  double humidity_scale = 1.0;
  double station_altitude_m = 0;
};

Calibration load_calibration(const std::string& toml_path);
Reading apply_calibration(const Reading& raw, const Calibration& calibration);
double sea_level_pressure(double station_hpa, double temperature_c, double altitude_m);

}  // namespace tidepool
