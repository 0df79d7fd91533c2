#pragma once
// Helpers shared by the knowledge tests: fixture paths, temporary copies, small file writers.
#include <sys/stat.h>

#include <QtTest>
#include <filesystem>
#include <fstream>
#include <string>

namespace day0::test {

inline std::filesystem::path knowledge_data() { return std::filesystem::path(DAY0_TEST_DATA_DIR) / "knowledge"; }

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A copy of a fixture folder (symlinks copied as links, hidden files included).
inline void copy_tree(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::create_directories(to);
  std::filesystem::copy(from, to,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
}

}  // namespace day0::test
