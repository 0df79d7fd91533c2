#pragma once
// Shared helpers for the chat template tests: the fixture folder, the fixed clock the
// fixtures were rendered with, and file reading.
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace day0::test {

inline std::filesystem::path template_data_dir() {
  return std::filesystem::path(DAY0_TEST_DATA_DIR) / "chat_templates";
}

// tools/reference/make_template_fixtures.py renders with strftime_now frozen at this time.
inline std::tm fixture_clock() {
  std::tm t{};
  t.tm_year = 2025 - 1900;
  t.tm_mon = 2;
  t.tm_mday = 7;
  t.tm_hour = 9;
  t.tm_min = 4;
  t.tm_sec = 5;
  const std::time_t normalized = timegm(&t);  // fills tm_wday and tm_yday
  gmtime_r(&normalized, &t);
  return t;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace day0::test
