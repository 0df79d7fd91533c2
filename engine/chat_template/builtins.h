#pragma once
// What templates call besides their own macros: jinja2's filters and tests, transformers'
// tojson / raise_exception / strftime_now, the globals (range, dict, namespace, cycler,
// joiner), Python's str / dict / list methods, and the sandboxed attribute and item lookup.
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat_template/value.h"

namespace day0::chat_template {

struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;

  // Python's binding of positional and keyword arguments to a builtin's parameters:
  // fails (TypeError) on unknown keywords, duplicates or too many positionals.
  // Unbound parameters come back Undefined (is_undefined()) so callers apply defaults.
  std::vector<Value> bind(const char* function, std::initializer_list<const char*> params) const;
};

bool has_filter(std::string_view name);
bool has_test(std::string_view name);
Value call_filter(std::string_view name, const Value& input, const CallArgs& args);
bool call_test(std::string_view name, const Value& input, const CallArgs& args);

// environment.getattr / getitem of jinja2's ImmutableSandboxedEnvironment: `obj.name` looks
// for a method first and then an item; `obj[key]` the other way round. Missing gives Undefined;
// methods that would mutate (list.append, dict.update, ...) give an Undefined that raises
// SecurityError when used.
Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// The template's global names (range, dict, namespace, raise_exception, strftime_now, ...).
bool lookup_global(std::string_view name, Value* out);

// Calls a builtin function, bound method or builtin object (not macros: the evaluator owns those).
Value call_builtin(const Value& callee, const CallArgs& args);

// The clock strftime_now reads during a render on this thread (null: the real time).
void set_fixed_clock(const std::tm* now);

// Python's json.dumps with transformers' tojson arguments.
std::string json_dumps(const Value& v, bool ensure_ascii, const Value& indent, const Value& separators, bool sort_keys);
// markupsafe.escape
std::string html_escape(std::string_view s);
// printf-style `fmt % args`.
std::string percent_format(const std::string& fmt, const Value& args);
// str.format(*args, **kwargs).
std::string str_format(const std::string& fmt, const CallArgs& args);

}  // namespace day0::chat_template
