#pragma once
// Small POSIX file helpers for the history's own files: flushing to disk, and copies and
// writes that appear under their final name only once complete.
#include <filesystem>
#include <string_view>

#include "storage/store_result.h"

namespace day0::storage {

// fsync of a file, or of a folder so that a rename or a new entry in it survives power loss.
StoreStatus sync_path(const std::filesystem::path& path);
// Copies `from` to `to` through `to`.partial, synced, then renamed into place.
StoreStatus copy_file_durably(const std::filesystem::path& from, const std::filesystem::path& to);
// Writes `bytes` to `to` the same way.
StoreStatus write_file_durably(const std::filesystem::path& to, std::string_view bytes);

}  // namespace day0::storage
