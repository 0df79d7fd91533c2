#include "chat_template/json_value.h"

#include "chat_template/unicode.h"

namespace day0::chat_template {

namespace {

constexpr int kMaxJsonDepth = 256;

Value string_value(const std::string& s) {
  if (find_invalid_utf8(s) != std::string::npos) fail(ErrorKind::value, "a string in the context is not valid UTF-8");
  return Value::string(s);
}

Value convert(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxJsonDepth) fail(ErrorKind::value, "the context nests deeper than 256 levels");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::integer(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return Value::floating(static_cast<double>(u));
      return Value::integer(static_cast<std::int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value::floating(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return string_value(j.get_ref<const std::string&>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(convert(e, depth + 1));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      DictData d;
      d.entries.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        d.entries.emplace_back(string_value(it.key()), convert(it.value(), depth + 1));
      return Value::dict(std::move(d));
    }
    default:
      fail(ErrorKind::value, "the context holds a JSON value of an unsupported kind");
  }
}

}  // namespace

Value json_to_value(const nlohmann::ordered_json& j) { return convert(j, 0); }

DictData json_object_to_dict(const nlohmann::ordered_json& object) {
  DictData d;
  for (auto it = object.begin(); it != object.end(); ++it)
    d.entries.emplace_back(string_value(it.key()), convert(it.value(), 1));
  return d;
}

}  // namespace day0::chat_template
