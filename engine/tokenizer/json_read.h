#pragma once
// Typed reads from tokenizer.json with errors that name the field path
// ("pre_tokenizer.pretokenizers[1].pattern: expected a string, found number").
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "day0/status.h"

namespace day0::tokenizer {

using nlohmann::json;

// Components nest (Sequence inside Sequence); real files use two or three levels.
inline constexpr int kMaxComponentDepth = 16;

std::string json_type_name(const json& j);
Status wrong_type(const std::string& path, const char* expected, const json& found);
// `found` null: the field is missing. (Never copy a json value to report it: copies recurse.)
Status wrong_type(const std::string& path, const char* expected, const json* found);

// The object's "type" field (or an error naming `path`).
Result<std::string> component_type(const json& j, const std::string& path);
// Optional fields: absent or null gives `fallback`.
Result<bool> read_bool(const json& obj, const char* key, bool fallback, const std::string& path);
Result<std::string> read_string(const json& obj, const char* key, const std::string& path);
Result<std::optional<std::string>> read_optional_string(const json& obj, const char* key, const std::string& path);
Result<std::uint64_t> read_count(const json& obj, const char* key, std::uint64_t fallback, std::uint64_t max,
                                 const std::string& path);
// A token id: an integer in [0, kMaxTokenId].
inline constexpr std::uint64_t kMaxTokenId = (1u << 24) - 1;
Result<std::uint32_t> read_id(const json& value, const std::string& path);
// A single character given as a one-character string (Metaspace's replacement, Strip's content).
Result<std::uint32_t> read_char(const json& obj, const char* key, const std::string& path);

}  // namespace day0::tokenizer
