#pragma once
// JSON contexts as template values: objects become insertion-ordered dicts (as Python's
// json.load gives), integers int, other numbers float.
#include <nlohmann/json.hpp>

#include "chat_template/value.h"

namespace day0::chat_template {

// Fails (TemplateError) on strings that are not UTF-8 and on nesting deeper than 256.
Value json_to_value(const nlohmann::ordered_json& j);
DictData json_object_to_dict(const nlohmann::ordered_json& object);

}  // namespace day0::chat_template
