#include <csignal>
#include <cstdio>
#include <cstring>

#include "calibration.h"
#include "ring_buffer.h"
#include "sensor_reader.h"

namespace {
volatile std::sig_atomic_t stop_requested = 0;
void on_signal(int) { stop_requested = 1; }
}  // namespace

int main(int argc, char** argv) {
  const char* port = "/dev/ttyUSB0";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--port") == 0) port = argv[i + 1];
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  tidepool::SensorReader reader(port);
  if (!reader.open()) {
    std::fprintf(stderr, "cannot open the serial port %s\n", port);
    return 1;
  }
  const auto calibration = tidepool::load_calibration("/etc/tidepool/station.toml");
  tidepool::RingBuffer<tidepool::Reading, 360> pending;
  while (!stop_requested) {
    if (auto raw = reader.next_reading(5000)) pending.push(tidepool::apply_calibration(*raw, calibration));
  }
  std::printf("stopped after %llu corrupt frames\n", static_cast<unsigned long long>(reader.corrupt_frames()));
  return 0;
}
