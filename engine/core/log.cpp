#include "day0/log.h"

#include <memory>
#include <mutex>
#include <system_error>
#include <vector>

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "day0/paths.h"

namespace day0::log {
namespace {

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::trace: return spdlog::level::trace;
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
    case Level::off: return spdlog::level::off;
  }
  return spdlog::level::info;
}

struct State {
  std::mutex mutex;
  std::shared_ptr<spdlog::logger> logger;
  std::shared_ptr<spdlog::sinks::sink> console;
};

State& state() {
  static State s;
  return s;
}

std::shared_ptr<spdlog::logger> make_default_logger(State& s) {
  s.console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  s.console->set_level(spdlog::level::info);
  s.console->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  auto logger = std::make_shared<spdlog::logger>("day0", s.console);
  logger->set_level(spdlog::level::trace);
  return logger;
}

std::shared_ptr<spdlog::logger> logger() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.logger) s.logger = make_default_logger(s);
  return s.logger;
}

}  // namespace

std::filesystem::path init(const Options& options) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  console->set_level(to_spdlog(options.console_level));
  console->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  std::vector<spdlog::sink_ptr> sinks{console};

  std::filesystem::path file_path;
  std::string file_problem;
  if (options.file) {
    const auto dir = options.file_dir.empty() ? user_data_dir() / "logs" : options.file_dir;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      file_problem = "cannot create log folder " + dir.string() + ": " + ec.message();
    } else {
      try {
        auto file = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
            (dir / "day0.log").string(), 5 * 1024 * 1024, 3);
        file->set_level(to_spdlog(options.file_level));
        file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] [thread %t] %v");
        sinks.push_back(file);
        file_path = dir / "day0.log";
      } catch (const spdlog::spdlog_ex& e) {
        file_problem = std::string("cannot open log file: ") + e.what();
      }
    }
  }
  auto logger = std::make_shared<spdlog::logger>("day0", sinks.begin(), sinks.end());
  logger->set_level(spdlog::level::trace);
  logger->flush_on(spdlog::level::warn);
  s.console = console;
  s.logger = logger;
  if (!file_problem.empty()) logger->warn("{}; logging to the console only", file_problem);
  return file_path;
}

void set_console_level(Level level) {
  State& s = state();
  logger();  // makes sure the console sink exists
  std::lock_guard lock(s.mutex);
  s.console->set_level(to_spdlog(level));
}

bool parse_level(std::string_view text, Level* out) {
  static constexpr std::pair<std::string_view, Level> names[] = {
      {"trace", Level::trace}, {"debug", Level::debug}, {"info", Level::info},
      {"warn", Level::warn},   {"error", Level::error}, {"off", Level::off}};
  for (const auto& [name, level] : names) {
    if (name == text) {
      *out = level;
      return true;
    }
  }
  return false;
}

void write(Level level, std::string_view message) { logger()->log(to_spdlog(level), message); }

}  // namespace day0::log
