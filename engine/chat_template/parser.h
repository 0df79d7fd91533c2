#pragma once
// The template parser: jinja2's grammar (statements, expression precedence, filters and tests,
// call arguments, assignment targets) with the loopcontrols extension and transformers'
// {% generation %} tag. Recursion is depth-limited, so hostile nesting fails cleanly.
#include <memory>
#include <string>
#include <string_view>

#include "chat_template/ast.h"

namespace day0::chat_template {

// Deepest nesting of expressions and blocks a template may use.
inline constexpr int kMaxParseDepth = 200;

// Throws TemplateError (syntax, with line and column) on malformed templates.
std::unique_ptr<Template> parse_template(std::string_view source, std::string name);

}  // namespace day0::chat_template
