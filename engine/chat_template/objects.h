#pragma once
// Builtin callables shared by the builtins and the evaluator: bound methods of str / dict /
// list, global functions, and the stateful helpers (cycler, joiner).
#include <memory>
#include <string>

#include "chat_template/builtins.h"
#include "chat_template/value.h"

namespace day0::chat_template {

struct BuiltinCallable : ObjectBase {
  virtual Value call(const CallArgs& args) const = 0;
};

// `"abc".upper`, `d.items`: the receiver and the method name.
struct BoundMethod : BuiltinCallable {
  Value self;
  std::string name;
  std::string repr() const override;
  std::string type_name() const override { return "builtin_function_or_method"; }
  Value call(const CallArgs& args) const override;
};

struct GlobalFunction : BuiltinCallable {
  std::string name;
  std::string repr() const override { return "<function " + name + ">"; }
  std::string type_name() const override { return "function"; }
  Value call(const CallArgs& args) const override;
};

Value make_bound_method(const Value& self, std::string name);
// Does Python's type of `v` have a method `name`? (`unsafe`: one the sandbox refuses.)
bool has_method(const Value& v, const std::string& name, bool* unsafe);

// Python slicing indices (PySlice_AdjustIndices): fills the positions a slice selects.
std::vector<std::int64_t> slice_positions(std::int64_t length, const Value& start, const Value& stop,
                                          const Value& step);

}  // namespace day0::chat_template
