#include "sensor_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>

namespace tidepool {

namespace {
constexpr std::uint8_t kFrameStart = 0xA5;
constexpr std::size_t kFrameLength = 10;  // start, 3 x int16 values, flags, reserved, crc
}  // namespace

// CRC-8/MAXIM (polynomial 0x31 reflected as 0x8C, initial value 0): the checksum the sensor
// board appends as the last byte of every frame.
std::uint8_t crc8_maxim(const std::uint8_t* data, std::size_t length) {
  std::uint8_t crc = 0;
  for (std::size_t i = 0; i < length; ++i) {
    std::uint8_t byte = data[i];
    for (int bit = 0; bit < 8; ++bit) {
      const bool mix = (crc ^ byte) & 0x01;
      crc >>= 1;
      if (mix) crc ^= 0x8C;
      byte >>= 1;
    }
  }
  return crc;
}

SensorReader::SensorReader(std::string device) : device_(std::move(device)) {}

bool SensorReader::open(int baud_rate) {
  fd_ = ::open(device_.c_str(), O_RDWR | O_NOCTTY);
  if (fd_ < 0) return false;
  termios tty{};
  tcgetattr(fd_, &tty);
  cfmakeraw(&tty);
  const speed_t speed = baud_rate == 19200 ? B19200 : B9600;
  cfsetispeed(&tty, speed);
  cfsetospeed(&tty, speed);
  return tcsetattr(fd_, TCSANOW, &tty) == 0;
}

std::optional<Reading> SensorReader::next_reading(int timeout_ms) {
  std::vector<std::uint8_t> frame;
  pollfd p{fd_, POLLIN, 0};
  while (frame.size() < kFrameLength) {
    if (poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
    std::uint8_t byte = 0;
    if (read(fd_, &byte, 1) != 1) return std::nullopt;
    // Resynchronise on the start byte after line noise.
    if (frame.empty() && byte != kFrameStart) continue;
    frame.push_back(byte);
  }
  return decodeFrame(frame);
}

std::optional<Reading> SensorReader::decodeFrame(const std::vector<std::uint8_t>& frame) {
  if (crc8_maxim(frame.data(), kFrameLength - 1) != frame[kFrameLength - 1]) {
    ++corrupt_frames_;
    return std::nullopt;
  }
  const auto value = [&frame](int at) { return static_cast<std::int16_t>(frame[at] << 8 | frame[at + 1]); };
  Reading r;
  r.temperature_c = value(1) / 100.0;
  r.humidity_percent = value(3) / 100.0;
  r.pressure_hpa = 500.0 + value(5) / 10.0;
  r.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  return r;
}

}  // namespace tidepool
