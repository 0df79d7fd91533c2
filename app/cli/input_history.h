#pragma once
// The messages typed into `day0-cli chat`, kept between runs in a file of the data folder so
// Up brings back what was sent before. One entry a line, a backslash and a newline written as
// \\ and \n; the file is readable by its owner only (what people type can be private).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace day0::cli {

class InputHistory {
 public:
  // Entries longer than this are kept for the session only (a pasted document is not history).
  static constexpr std::size_t kMaxEntryBytes = 16 << 10;

  InputHistory(std::filesystem::path file, std::size_t max_entries);
  // The entries in the file, oldest first (none when it is missing or unreadable).
  std::vector<std::string> load() const;
  // Adds an entry at the end; the file is rewritten with the newest max_entries when it has
  // grown to twice that. False when it cannot be written.
  bool append(const std::string& entry);

  static std::string encode(const std::string& entry);
  static std::string decode(const std::string& line);

 private:
  std::filesystem::path file_;
  std::size_t max_entries_;
};

}  // namespace day0::cli
