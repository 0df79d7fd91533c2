#include "cli/input_history.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace day0::cli {
namespace {

bool write_fd(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

InputHistory::InputHistory(std::filesystem::path file, std::size_t max_entries)
    : file_(std::move(file)), max_entries_(max_entries) {}

std::string InputHistory::encode(const std::string& entry) {
  std::string out;
  out.reserve(entry.size() + 8);
  for (const char c : entry) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else
      out += c;
  }
  return out;
}

std::string InputHistory::decode(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\' || i + 1 == line.size()) {
      out += line[i];
      continue;
    }
    const char next = line[++i];
    out += next == 'n' ? '\n' : next == 'r' ? '\r' : next;
  }
  return out;
}

std::vector<std::string> InputHistory::load() const {
  std::vector<std::string> entries;
  std::ifstream in(file_, std::ios::binary);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.size() > 2 * kMaxEntryBytes) continue;
    entries.push_back(decode(line));
  }
  if (entries.size() > max_entries_) entries.erase(entries.begin(), entries.end() - static_cast<long>(max_entries_));
  return entries;
}

bool InputHistory::append(const std::string& entry) {
  if (entry.empty() || entry.size() > kMaxEntryBytes) return true;
  std::error_code ec;
  if (!file_.parent_path().empty()) std::filesystem::create_directories(file_.parent_path(), ec);
  const int fd = open(file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  fchmod(fd, 0600);  // also a file made before with wider permissions
  const bool ok = write_fd(fd, encode(entry) + "\n");
  struct stat st;
  const bool large = fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) > 2 * max_entries_ * 64;
  close(fd);
  if (!ok) return false;
  if (!large) return true;
  // Grown: keep the newest entries, written beside it and renamed over it.
  const std::vector<std::string> entries = load();
  std::ifstream in(file_, std::ios::binary);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  if (lines < 2 * max_entries_) return true;
  const std::filesystem::path tmp = file_.string() + ".new";
  const int out = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) return false;
  std::string text;
  for (const auto& e : entries) text += encode(e) + "\n";
  const bool written = write_fd(out, text) && fsync(out) == 0;
  close(out);
  if (!written) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  std::filesystem::rename(tmp, file_, ec);
  return !ec;
}

}  // namespace day0::cli
