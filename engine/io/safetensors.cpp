#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "common/json_error.h"

namespace day0::io {
namespace {

using nlohmann::json;

std::string bytes_text(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

Status corrupt(const std::string& file, const std::string& message) {
  return error(ErrorCode::corrupt_data, file + ": " + message);
}

// Parses JSON while rejecting duplicate keys in any object (nlohmann keeps the last silently).
Result<json> parse_json_strict(std::string_view text, const std::string& file) {
  std::vector<std::set<std::string>> keys_by_depth;
  std::string duplicate;
  json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json& parsed) {
    const auto d = static_cast<std::size_t>(depth);
    if (event == json::parse_event_t::object_start) {
      if (keys_by_depth.size() <= d + 1) keys_by_depth.resize(d + 2);
      keys_by_depth[d + 1].clear();
    } else if (event == json::parse_event_t::key) {
      if (keys_by_depth.size() <= d) keys_by_depth.resize(d + 1);
      const auto& key = parsed.get_ref<const std::string&>();
      if (!keys_by_depth[d].insert(key).second && duplicate.empty()) duplicate = key;
    }
    return true;
  };
  json parsed;
  try {
    parsed = json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    return error(ErrorCode::corrupt_data, common::json_parse_problem(file + ": the header", e));
  }
  if (!duplicate.empty()) return corrupt(file, "the header names \"" + duplicate + "\" twice");
  return parsed;
}

Result<std::uint64_t> as_u64(const json& value, const std::string& file, const std::string& what) {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
    return corrupt(file, what + " must be a non-negative integer, got " + value.dump());
  return value.get<std::uint64_t>();
}

Result<TensorInfo> parse_tensor(const std::string& name, const json& entry, const std::string& file) {
  const std::string where = "tensor " + name;
  if (!entry.is_object()) return corrupt(file, where + " is described by " + entry.dump() + ", not an object");
  if (!entry.contains("dtype") || !entry["dtype"].is_string())
    return corrupt(file, where + " has no dtype string");
  if (!entry.contains("shape") || !entry["shape"].is_array())
    return corrupt(file, where + " has no shape array");
  if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
      entry["data_offsets"].size() != 2)
    return corrupt(file, where + " needs data_offsets [begin, end]");

  TensorInfo t;
  t.name = name;
  const auto dtype_text = entry["dtype"].get<std::string>();
  const auto dtype = dtype_from_safetensors(dtype_text);
  if (!dtype) return corrupt(file, where + " has an unknown dtype \"" + dtype_text + "\"");
  t.dtype = *dtype;
  std::uint64_t bits = static_cast<std::uint64_t>(dtype_bits(t.dtype));
  for (std::size_t i = 0; i < entry["shape"].size(); ++i) {
    DAY0_ASSIGN_OR_RETURN(const std::uint64_t dim,
                          as_u64(entry["shape"][i], file, where + " shape[" + std::to_string(i) + "]"));
    t.shape.push_back(dim);
    if (__builtin_mul_overflow(t.numel, dim, &t.numel))
      return corrupt(file, where + " has a shape whose element count overflows 64 bits");
  }
  std::uint64_t total_bits = 0;
  if (__builtin_mul_overflow(t.numel, bits, &total_bits))
    return corrupt(file, where + " has a shape whose byte size overflows 64 bits");
  if (total_bits % 8 != 0)
    return corrupt(file, where + " (" + dtype_text + ") does not fill whole bytes: " +
                             std::to_string(t.numel) + " elements of " + std::to_string(bits) + " bits");
  DAY0_ASSIGN_OR_RETURN(t.begin, as_u64(entry["data_offsets"][0], file, where + " begin offset"));
  DAY0_ASSIGN_OR_RETURN(t.end, as_u64(entry["data_offsets"][1], file, where + " end offset"));
  if (t.end < t.begin)
    return corrupt(file, where + " ends at byte " + std::to_string(t.end) + " before it begins at " +
                             std::to_string(t.begin));
  if (t.end - t.begin != total_bits / 8)
    return corrupt(file, where + " has shape x " + dtype_text + " = " + bytes_text(total_bits / 8) +
                             " but its offsets span " + bytes_text(t.end - t.begin));
  return t;
}

}  // namespace

Result<SafetensorsHeader> parse_safetensors_header(std::span<const std::uint8_t> prefix,
                                                   std::uint64_t file_size, const std::string& file) {
  if (file_size < 8 || prefix.size() < 8)
    return corrupt(file, "the file has " + bytes_text(file_size) +
                             ", too few for the 8-byte header length of a safetensors file");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[static_cast<std::size_t>(i)];
  if (n > kSafetensorsMaxHeaderBytes)
    return corrupt(file, "the header claims " + bytes_text(n) + ", over the limit of " +
                             bytes_text(kSafetensorsMaxHeaderBytes) + " (not a safetensors file?)");
  if (8 + n > file_size)
    return corrupt(file, "the header claims " + bytes_text(n) + " but the file has only " +
                             bytes_text(file_size) + " (truncated?)");
  if (prefix.size() < 8 + n) return error(ErrorCode::internal, file + ": header prefix too short");
  const std::string_view text(reinterpret_cast<const char*>(prefix.data()) + 8, n);
  if (text.empty() || text.front() != '{')
    return corrupt(file, "the header does not start with '{' (not a safetensors file?)");

  DAY0_ASSIGN_OR_RETURN(const json root, parse_json_strict(text, file));
  if (!root.is_object()) return corrupt(file, "the header is not a JSON object");

  SafetensorsHeader header;
  header.header_bytes = n;
  header.data_offset = 8 + n;
  header.data_bytes = file_size - header.data_offset;
  for (const auto& [name, entry] : root.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return corrupt(file, "__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) return corrupt(file, "__metadata__." + key + " is not a string");
        header.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    DAY0_ASSIGN_OR_RETURN(TensorInfo tensor, parse_tensor(name, entry, file));
    header.tensors.push_back(std::move(tensor));
  }

  // Offsets must tile the data section from 0, without gaps or overlaps, to its very end.
  std::sort(header.tensors.begin(), header.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t expected = 0;
  for (const auto& t : header.tensors) {
    if (t.begin != expected) {
      return corrupt(file, "tensor " + t.name + " begins at data byte " + std::to_string(t.begin) +
                               " but the previous tensor ends at " + std::to_string(expected) +
                               (t.begin > expected ? " (a gap)" : " (an overlap)"));
    }
    expected = t.end;
  }
  if (expected != header.data_bytes) {
    const std::string last = header.tensors.empty() ? "the header" : "tensor " + header.tensors.back().name;
    return corrupt(file, last + " ends at data byte " + std::to_string(expected) +
                             " but the file's data section has " + bytes_text(header.data_bytes) +
                             (expected > header.data_bytes ? " (truncated?)" : " (trailing bytes)"));
  }
  return header;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  DAY0_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::open(path));
  SafetensorsFile file;
  DAY0_ASSIGN_OR_RETURN(file.header_, parse_safetensors_header(mapped.bytes(), mapped.size(), path.string()));
  file.file_ = std::move(mapped);
  for (std::size_t i = 0; i < file.header_.tensors.size(); ++i) file.by_name_[file.header_.tensors[i].name] = i;
  return file;
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &header_.tensors[it->second];
}

std::span<const std::uint8_t> SafetensorsFile::data(const TensorInfo& tensor) const {
  return {file_.data() + header_.data_offset + tensor.begin, tensor.nbytes()};
}

Result<SafetensorsHeader> read_safetensors_header(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return error(ec == std::errc::no_such_file_or_directory ? ErrorCode::not_found : ErrorCode::io_error,
                 "cannot read " + path.string() + ": " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(ErrorCode::io_error, "cannot open " + path.string());
  std::vector<std::uint8_t> prefix(8);
  if (!in.read(reinterpret_cast<char*>(prefix.data()), 8) && size >= 8)
    return error(ErrorCode::io_error, "cannot read " + path.string());
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[static_cast<std::size_t>(i)];
  if (size >= 8 && n <= kSafetensorsMaxHeaderBytes && 8 + n <= size) {
    prefix.resize(8 + n);
    if (!in.read(reinterpret_cast<char*>(prefix.data()) + 8, static_cast<std::streamsize>(n)))
      return error(ErrorCode::io_error, "cannot read the header of " + path.string());
  }
  return parse_safetensors_header(prefix, size, path.string());
}

}  // namespace day0::io
