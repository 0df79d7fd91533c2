#pragma once
// Walking a folder for indexing: the files to read, in path order, and the ones left out with
// the reason. Private to knowledge/.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "knowledge/index.h"

namespace day0::knowledge {

struct WalkedFile {
  std::string relative;  // '/'-separated, valid UTF-8
  std::filesystem::path absolute;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
};

struct WalkResult {
  std::vector<WalkedFile> files;
  std::vector<SkippedFile> skipped;
  std::int64_t ignored = 0;  // left out by .gitignore or as build/vendor folders
  bool cancelled = false;
};

// Folders never indexed: version control, dependencies, build output, caches.
bool is_excluded_folder_name(std::string_view name);

// Honours .gitignore files (nested ones too), follows symlinks unless told not to, and visits
// each real folder once (device + inode), so a symlink loop is reported instead of followed.
WalkResult walk_folder(const std::filesystem::path& root, const WalkOptions& options, const std::atomic<bool>* cancel);

}  // namespace day0::knowledge
