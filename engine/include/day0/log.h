#pragma once
// Day0's logging front end. spdlog stays private to engine/core/log.cpp; callers format with
// fmt syntax: DAY0_LOG_INFO("loaded {} tensors from {}", n, path).
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace day0::log {

enum class Level { trace, debug, info, warn, error, off };

struct Options {
  Level console_level = Level::info;
  Level file_level = Level::debug;
  // Empty: $XDG_DATA_HOME/day0/logs (default ~/.local/share/day0/logs). The file rotates at
  // 5 MiB and keeps 3 old files.
  std::filesystem::path file_dir;
  bool file = true;
};

// Sets up the console sink (stderr) and the rotating file. Safe to call more than once; the
// last call wins. Returns the log file path, or an empty path when the file could not be made
// (the reason is logged to the console; logging never fails the program).
std::filesystem::path init(const Options& options = {});
void set_console_level(Level level);
bool parse_level(std::string_view text, Level* out);

void write(Level level, std::string_view message);

template <typename... Args>
void logf(Level level, fmt::format_string<Args...> format, Args&&... args) {
  write(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace day0::log

#define DAY0_LOG_TRACE(...) ::day0::log::logf(::day0::log::Level::trace, __VA_ARGS__)
#define DAY0_LOG_DEBUG(...) ::day0::log::logf(::day0::log::Level::debug, __VA_ARGS__)
#define DAY0_LOG_INFO(...) ::day0::log::logf(::day0::log::Level::info, __VA_ARGS__)
#define DAY0_LOG_WARN(...) ::day0::log::logf(::day0::log::Level::warn, __VA_ARGS__)
#define DAY0_LOG_ERROR(...) ::day0::log::logf(::day0::log::Level::error, __VA_ARGS__)
