#include "io/json_util.h"

#include <fstream>
#include <sstream>

#include "common/json_error.h"

namespace day0::io {

Result<std::string> read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return error(ec == std::errc::no_such_file_or_directory ? ErrorCode::not_found : ErrorCode::io_error,
                 "cannot read " + path.string() + ": " + ec.message());
  if (size > max_bytes)
    return error(ErrorCode::corrupt_data, path.string() + " has " + std::to_string(size) +
                                              " bytes, over the limit of " + std::to_string(max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(ErrorCode::io_error, "cannot open " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return error(ErrorCode::io_error, "cannot read " + path.string());
  return text.str();
}

Result<nlohmann::json> parse_json(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    return error(ErrorCode::corrupt_data, common::json_parse_problem(origin, e));
  }
}

Result<nlohmann::json> read_json_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  DAY0_ASSIGN_OR_RETURN(const std::string text, read_text_file(path, max_bytes));
  return parse_json(text, path.string());
}

}  // namespace day0::io
