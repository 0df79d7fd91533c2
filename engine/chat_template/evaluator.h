#pragma once
// Renders a parsed template: jinja2's scoping (a new scope per loop iteration, macro and with
// body; `if` shares its enclosing scope), loops with `loop.*`, macros with caller(), namespaces,
// and the budgets that stop hostile templates (steps, value and output size, nesting depth).
#include <cstdint>
#include <ctime>
#include <string>

#include "chat_template/ast.h"
#include "chat_template/value.h"

namespace day0::chat_template {

struct RenderLimits {
  std::uint64_t max_steps = 2'000'000;
  std::size_t max_output_bytes = 16u << 20;  // the output, and any single value built on the way
  int max_depth = 500;                       // nested statements, expressions and macro calls
};

// Throws TemplateError (with line and column) when the template fails. `clock` fixes what
// strftime_now reads (null: the current local time).
std::string render_template(const Template& tmpl, const DictData& variables, const RenderLimits& limits,
                            const std::tm* clock);

}  // namespace day0::chat_template
