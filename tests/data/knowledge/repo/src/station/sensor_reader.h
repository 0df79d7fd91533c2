#pragma once
// Reads measurement frames from the sensor board over a serial port.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tidepool {

struct Reading {
  double temperature_c = 0;
  double humidity_percent = 0;
  double pressure_hpa = 0;
  std::int64_t timestamp_ms = 0;
};

class SensorReader {
 public:
  explicit SensorReader(std::string device);
  bool open(int baud_rate = 9600);
  // Blocks until one complete frame arrived; empty on timeout or a corrupt frame.
  std::optional<Reading> next_reading(int timeout_ms);
  std::uint64_t corrupt_frames() const { return corrupt_frames_; }

 private:
  std::optional<Reading> decodeFrame(const std::vector<std::uint8_t>& frame);
  std::string device_;
  int fd_ = -1;
  std::uint64_t corrupt_frames_ = 0;
};

std::uint8_t crc8_maxim(const std::uint8_t* data, std::size_t length);

}  // namespace tidepool
