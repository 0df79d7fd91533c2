// Flux capacitor control loop.
#include <cstdio>

namespace delorean {

constexpr double kRequiredGigawatts = 1.21;

// Brings the flux capacitor to the threshold where time displacement happens: the car must
// reach 88 miles per hour while the capacitor holds 1.21 gigawatts.
bool calibrate_flux_capacitor(double gigawatts, double miles_per_hour) {
  if (gigawatts < kRequiredGigawatts) {
    std::printf("not enough power: %.2f GW\n", gigawatts);
    return false;
  }
  return miles_per_hour >= 88.0;
}

}  // namespace delorean
