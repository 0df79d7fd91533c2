#pragma once
// config.json with typed access. Multimodal checkpoints nest the language model's fields in
// `text_config` and the vision tower's in `vision_config`; text() and vision() hide that.
// Every accessor returns an error naming the file and the field ("config.json:
// text_config.hidden_size must be an integer, got \"4096\"").
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "day0/status.h"

namespace day0::io {

struct IntRange {
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
};

// A view of one JSON object inside a config (the root, text_config, vision_config, ...).
class ConfigView {
 public:
  ConfigView(const nlohmann::json* node, std::string prefix, std::string origin)
      : node_(node), prefix_(std::move(prefix)), origin_(std::move(origin)) {}

  bool has(const std::string& key) const;  // present and not null
  // Required fields.
  Result<std::int64_t> get_int(const std::string& key, IntRange range = {}) const;
  Result<double> get_float(const std::string& key) const;
  Result<bool> get_bool(const std::string& key) const;
  Result<std::string> get_string(const std::string& key) const;
  Result<std::vector<std::string>> get_string_list(const std::string& key) const;
  Result<std::vector<std::int64_t>> get_int_list(const std::string& key, IntRange range = {}) const;
  // Optional fields: the default when absent or null, an error when present with a wrong type.
  Result<std::int64_t> get_int_or(const std::string& key, std::int64_t fallback, IntRange range = {}) const;
  Result<double> get_float_or(const std::string& key, double fallback) const;
  Result<bool> get_bool_or(const std::string& key, bool fallback) const;
  Result<std::string> get_string_or(const std::string& key, std::string fallback) const;

  Result<ConfigView> child(const std::string& key) const;
  std::optional<ConfigView> optional_child(const std::string& key) const;
  const nlohmann::json& json() const { return *node_; }
  std::string field_name(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }

 private:
  Status field_error(const std::string& key, const std::string& expected) const;
  const nlohmann::json* lookup(const std::string& key) const;

  const nlohmann::json* node_;
  std::string prefix_;
  std::string origin_;
};

class ModelConfig {
 public:
  // Reads `<dir>/config.json` (or the file itself when given a file).
  static Result<ModelConfig> load(const std::filesystem::path& path);
  static Result<ModelConfig> parse(const std::string& text, const std::string& origin = "config.json");

  const std::string& model_type() const { return model_type_; }
  const std::string& origin() const { return origin_; }
  ConfigView root() const { return {json_.get(), "", origin_}; }
  // text_config when present, else the root.
  ConfigView text() const;
  // vision_config, when present.
  std::optional<ConfigView> vision() const;
  const nlohmann::json& json() const { return *json_; }

 private:
  std::shared_ptr<nlohmann::json> json_;  // shared so views stay valid when configs are copied
  std::string model_type_;
  std::string origin_;
};

}  // namespace day0::io
