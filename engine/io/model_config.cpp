#include "io/model_config.h"

#include <cmath>

#include "io/json_util.h"

namespace day0::io {
namespace {

std::string type_name(const nlohmann::json& value) {
  if (value.is_number_integer()) return "the integer " + value.dump();
  if (value.is_number_float()) return "the number " + value.dump();
  if (value.is_string()) return "the string " + value.dump();
  if (value.is_boolean()) return value.dump();
  if (value.is_array()) return "a list";
  if (value.is_object()) return "an object";
  return value.dump();
}

}  // namespace

const nlohmann::json* ConfigView::lookup(const std::string& key) const {
  if (!node_->is_object()) return nullptr;
  const auto it = node_->find(key);
  if (it == node_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool ConfigView::has(const std::string& key) const { return lookup(key) != nullptr; }

Status ConfigView::field_error(const std::string& key, const std::string& expected) const {
  const auto* value = lookup(key);
  if (value == nullptr)
    return error(ErrorCode::not_found, origin_ + ": the field " + field_name(key) + " is missing");
  return error(ErrorCode::corrupt_data,
               origin_ + ": " + field_name(key) + " must be " + expected + ", got " + type_name(*value));
}

Result<std::int64_t> ConfigView::get_int(const std::string& key, IntRange range) const {
  const auto* value = lookup(key);
  if (value == nullptr || !value->is_number()) return field_error(key, "an integer");
  std::int64_t v = 0;
  if (value->is_number_unsigned()) {
    if (value->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return field_error(key, "an integer below 2^63");
    v = static_cast<std::int64_t>(value->get<std::uint64_t>());
  } else if (value->is_number_integer()) {
    v = value->get<std::int64_t>();
  } else {
    // Some writers store integers as 4096.0; accept exact values only.
    const double d = value->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e15) return field_error(key, "an integer");
    v = static_cast<std::int64_t>(d);
  }
  if (v < range.min || v > range.max)
    return error(ErrorCode::corrupt_data, origin_ + ": " + field_name(key) + " must be between " +
                                              std::to_string(range.min) + " and " + std::to_string(range.max) +
                                              ", got " + std::to_string(v));
  return v;
}

Result<double> ConfigView::get_float(const std::string& key) const {
  const auto* value = lookup(key);
  if (value == nullptr || !value->is_number()) return field_error(key, "a number");
  return value->get<double>();
}

Result<bool> ConfigView::get_bool(const std::string& key) const {
  const auto* value = lookup(key);
  if (value == nullptr || !value->is_boolean()) return field_error(key, "true or false");
  return value->get<bool>();
}

Result<std::string> ConfigView::get_string(const std::string& key) const {
  const auto* value = lookup(key);
  if (value == nullptr || !value->is_string()) return field_error(key, "a string");
  return value->get<std::string>();
}

Result<std::vector<std::string>> ConfigView::get_string_list(const std::string& key) const {
  const auto* value = lookup(key);
  if (value == nullptr || !value->is_array()) return field_error(key, "a list of strings");
  std::vector<std::string> out;
  for (const auto& item : *value) {
    if (!item.is_string()) return field_error(key, "a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::vector<std::int64_t>> ConfigView::get_int_list(const std::string& key, IntRange range) const {
  const auto* value = lookup(key);
  if (value == nullptr || !value->is_array()) return field_error(key, "a list of integers");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const auto& item = (*value)[i];
    if (!item.is_number_integer()) return field_error(key, "a list of integers");
    const auto v = item.get<std::int64_t>();
    if (v < range.min || v > range.max)
      return error(ErrorCode::corrupt_data, origin_ + ": " + field_name(key) + "[" + std::to_string(i) +
                                                "] must be between " + std::to_string(range.min) + " and " +
                                                std::to_string(range.max) + ", got " + std::to_string(v));
    out.push_back(v);
  }
  return out;
}

Result<std::int64_t> ConfigView::get_int_or(const std::string& key, std::int64_t fallback, IntRange range) const {
  return has(key) ? get_int(key, range) : Result<std::int64_t>(fallback);
}
Result<double> ConfigView::get_float_or(const std::string& key, double fallback) const {
  return has(key) ? get_float(key) : Result<double>(fallback);
}
Result<bool> ConfigView::get_bool_or(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : Result<bool>(fallback);
}
Result<std::string> ConfigView::get_string_or(const std::string& key, std::string fallback) const {
  return has(key) ? get_string(key) : Result<std::string>(std::move(fallback));
}

Result<ConfigView> ConfigView::child(const std::string& key) const {
  const auto* value = lookup(key);
  if (value == nullptr || !value->is_object()) return field_error(key, "an object");
  return ConfigView(value, field_name(key), origin_);
}

std::optional<ConfigView> ConfigView::optional_child(const std::string& key) const {
  const auto* value = lookup(key);
  if (value == nullptr || !value->is_object()) return std::nullopt;
  return ConfigView(value, field_name(key), origin_);
}

Result<ModelConfig> ModelConfig::parse(const std::string& text, const std::string& origin) {
  DAY0_ASSIGN_OR_RETURN(nlohmann::json parsed, parse_json(text, origin));
  if (!parsed.is_object()) return error(ErrorCode::corrupt_data, origin + " is not a JSON object");
  ModelConfig config;
  config.json_ = std::make_shared<nlohmann::json>(std::move(parsed));
  config.origin_ = origin;
  auto model_type = config.root().get_string("model_type");
  if (!model_type) {
    return error(ErrorCode::corrupt_data,
                 origin + " has no model_type string: it does not say which architecture the model is");
  }
  config.model_type_ = model_type.value();
  if (config.root().has("text_config") && !config.root().optional_child("text_config"))
    return error(ErrorCode::corrupt_data, origin + ": text_config must be an object");
  if (config.root().has("vision_config") && !config.root().optional_child("vision_config"))
    return error(ErrorCode::corrupt_data, origin + ": vision_config must be an object");
  return config;
}

Result<ModelConfig> ModelConfig::load(const std::filesystem::path& path) {
  std::error_code ec;
  const auto file = std::filesystem::is_directory(path, ec) ? path / "config.json" : path;
  DAY0_ASSIGN_OR_RETURN(const std::string text, read_text_file(file, 16ull << 20));
  return parse(text, file.string());
}

ConfigView ModelConfig::text() const {
  if (auto text = root().optional_child("text_config")) return *text;
  return root();
}

std::optional<ConfigView> ModelConfig::vision() const { return root().optional_child("vision_config"); }

}  // namespace day0::io
