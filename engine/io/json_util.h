#pragma once
// Reading JSON files from model folders: bounded size, and errors that name the file.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "day0/status.h"

namespace day0::io {

// Reads a whole text file, refusing files over `max_bytes`.
Result<std::string> read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes);
// Reads and parses a JSON file (at most `max_bytes`).
Result<nlohmann::json> read_json_file(const std::filesystem::path& path, std::uint64_t max_bytes = 64ull << 20);
Result<nlohmann::json> parse_json(std::string_view text, const std::string& origin);

}  // namespace day0::io
