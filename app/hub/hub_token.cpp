#include "hub/hub_token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "day0/paths.h"

namespace day0::hub {
namespace {

namespace fs = std::filesystem;

std::string trim(std::string s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

std::string read_first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return trim(line);
}

fs::path huggingface_token_file() {
  if (const char* p = std::getenv("HF_TOKEN_PATH"); p && *p) return p;
  if (const char* home = std::getenv("HF_HOME"); home && *home) return fs::path(home) / "token";
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache) return fs::path(cache) / "huggingface/token";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache/huggingface/token";
  return {};
}

}  // namespace

fs::path token_file() { return user_config_dir() / "hf-token"; }

std::string read_token() {
  if (const char* t = std::getenv("HF_TOKEN"); t && *t) return trim(t);
  if (std::string t = read_first_line(token_file()); !t.empty()) return t;
  if (const fs::path hf = huggingface_token_file(); !hf.empty()) return read_first_line(hf);
  return {};
}

bool has_saved_token() { return !read_first_line(token_file()).empty(); }

Status save_token(const std::string& token) {
  const fs::path path = token_file();
  const std::string value = trim(token);
  std::error_code ec;
  if (value.empty()) {
    fs::remove(path, ec);
    if (ec) return error(ErrorCode::io_error, "cannot remove " + path.string() + ": " + ec.message());
    return Status::ok();
  }
  if (value.find_first_of(" \t\r\n") != std::string::npos || value.size() > 4096)
    return error(ErrorCode::invalid_argument, "a Hugging Face token is one word (it starts with hf_)");
  fs::create_directories(path.parent_path(), ec);
  if (ec) return error(ErrorCode::io_error, "cannot create " + path.parent_path().string() + ": " + ec.message());
  // Written beside the target with 0600 from the start, then renamed over it: the token is never
  // readable by others, not even for a moment.
  const fs::path temp = path.string() + ".new";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return error(ErrorCode::io_error, "cannot write " + temp.string() + ": " + std::strerror(errno));
  const std::string line = value + "\n";
  const bool written = ::fchmod(fd, 0600) == 0 &&
                       ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int why = written ? errno : saved;
    fs::remove(temp, ec);
    return error(ErrorCode::io_error, "cannot write " + path.string() + ": " + std::strerror(why));
  }
  return Status::ok();
}

}  // namespace day0::hub
