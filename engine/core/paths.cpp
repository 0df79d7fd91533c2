#include "day0/paths.h"

#include <cstdlib>
#include <unistd.h>
#include <pwd.h>

namespace day0 {
namespace {

std::filesystem::path home_dir() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return std::filesystem::temp_directory_path();
}

// The spec says relative values are invalid and must be ignored.
std::filesystem::path xdg_dir(const char* variable, const char* fallback) {
  if (const char* value = std::getenv(variable); value && *value == '/') return value;
  return home_dir() / fallback;
}

}  // namespace

std::filesystem::path user_data_dir() { return xdg_dir("XDG_DATA_HOME", ".local/share") / "day0"; }
std::filesystem::path user_config_dir() { return xdg_dir("XDG_CONFIG_HOME", ".config") / "day0"; }

}  // namespace day0
