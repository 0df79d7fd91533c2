#include "tokenizer/json_read.h"

#include "tokenizer/unicode.h"

namespace day0::tokenizer {

std::string json_type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "number";
    default:
      return "value";
  }
}

Status wrong_type(const std::string& path, const char* expected, const json& found) {
  return error(ErrorCode::corrupt_data, path + ": expected " + expected + ", found " + json_type_name(found));
}

Status wrong_type(const std::string& path, const char* expected, const json* found) {
  if (found == nullptr) return error(ErrorCode::corrupt_data, path + ": expected " + expected + ", found nothing");
  return wrong_type(path, expected, *found);
}

Result<std::string> component_type(const json& j, const std::string& path) {
  if (!j.is_object()) return wrong_type(path, "an object", j);
  const auto it = j.find("type");
  if (it == j.end()) return error(ErrorCode::corrupt_data, path + " has no \"type\"");
  if (!it->is_string()) return wrong_type(path + ".type", "a string", *it);
  return it->get<std::string>();
}

Result<bool> read_bool(const json& obj, const char* key, bool fallback, const std::string& path) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return wrong_type(path + "." + key, "true or false", *it);
  return it->get<bool>();
}

Result<std::string> read_string(const json& obj, const char* key, const std::string& path) {
  const auto it = obj.find(key);
  if (it == obj.end()) return error(ErrorCode::corrupt_data, path + " has no \"" + key + "\"");
  if (!it->is_string()) return wrong_type(path + "." + key, "a string", *it);
  return it->get<std::string>();
}

Result<std::optional<std::string>> read_optional_string(const json& obj, const char* key, const std::string& path) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return wrong_type(path + "." + key, "a string or null", *it);
  return std::optional<std::string>(it->get<std::string>());
}

Result<std::uint64_t> read_count(const json& obj, const char* key, std::uint64_t fallback, std::uint64_t max,
                                 const std::string& path) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0))
    return wrong_type(path + "." + key, "a non-negative integer", *it);
  const auto v = it->get<std::uint64_t>();
  if (v > max)
    return error(ErrorCode::corrupt_data,
                 path + "." + key + " is " + std::to_string(v) + ", over the limit of " + std::to_string(max));
  return v;
}

Result<std::uint32_t> read_id(const json& value, const std::string& path) {
  if (value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
    const auto v = value.get<std::uint64_t>();
    if (v > kMaxTokenId)
      return error(ErrorCode::corrupt_data,
                   path + ": id " + std::to_string(v) + " is over the limit of " + std::to_string(kMaxTokenId));
    return static_cast<std::uint32_t>(v);
  }
  if (value.is_number_integer())
    return error(ErrorCode::corrupt_data, path + ": id " + std::to_string(value.get<std::int64_t>()) + " is negative");
  return wrong_type(path, "a token id (non-negative integer)", value);
}

Result<std::uint32_t> read_char(const json& obj, const char* key, const std::string& path) {
  DAY0_ASSIGN_OR_RETURN(const std::string s, read_string(obj, key, path));
  std::size_t i = 0;
  if (s.empty() || (next_code_point(s, i), i != s.size()))
    return error(ErrorCode::corrupt_data, path + "." + key + " must be exactly one character, found \"" + s + "\"");
  i = 0;
  return next_code_point(s, i);
}

}  // namespace day0::tokenizer
