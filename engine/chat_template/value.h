#pragma once
// Values of the template language, with Python's semantics (what jinja2 does under
// transformers): none, bool, int, float, str (UTF-8; `safe` marks markupsafe.Markup), list,
// tuple, dict (insertion-ordered), lazy iterators (generators, dict views, range), callables,
// namespaces and Undefined. Containers are immutable and shared (transformers renders in an
// ImmutableSandboxedEnvironment); only namespaces and loop objects change in place.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace day0::chat_template {

// Python exception classes a template can raise; kept so errors read like transformers'.
enum class ErrorKind {
  syntax,         // TemplateSyntaxError / TemplateAssertionError
  undefined,      // UndefinedError
  type,           // TypeError
  value,          // ValueError
  zero_division,  // ZeroDivisionError
  security,       // SecurityError (sandbox)
  overflow,       // OverflowError
  raised,         // TemplateError from raise_exception()
  runtime,        // TemplateRuntimeError
  index,          // IndexError
  key,            // KeyError
  budget,         // a step, output, size or depth budget of Day0 ran out
};
const char* error_kind_name(ErrorKind kind);

// Thrown inside the interpreter and turned into day0::Status at its boundary.
struct TemplateError {
  ErrorKind kind;
  std::string message;
  int line = 0;  // 1-based; 0 when not yet known
  int column = 0;
};
[[noreturn]] void fail(ErrorKind kind, std::string message);

// Limits of one render: every evaluation step and every byte of every value built counts.
struct Budget {
  std::uint64_t steps_left = 0;
  std::size_t max_value_bytes = 0;  // largest string (or list length) one value may reach
};
// The budget of the render running on this thread (null outside a render: no limits).
Budget* current_budget();
void set_current_budget(Budget* budget);
// Counts `steps` work units; fails when the budget is spent.
void charge(std::uint64_t steps);
// Fails when a value of `size` bytes or elements would exceed the limit.
void check_size(std::size_t size);

class Value;

struct HeapObject {
  virtual ~HeapObject() = default;
  // How deeply containers nest inside this one (bounded, so printing, comparing and freeing
  // a value never recurses deeper than kMaxValueDepth).
  int depth = 1;
};
inline constexpr int kMaxValueDepth = 256;
// Records that `parent` holds `child`; fails when nesting would pass kMaxValueDepth.
void note_child(HeapObject& parent, const Value& child);
// Namespaces are the one container a template changes in place, so the depth noted when a value
// was built can go stale: one namespace held (directly or through a list, a dict, a macro's scope
// or a loop) inside another could form a cycle, or chains deeper than any budget sees that
// overflow the stack when printed or freed. Namespace attributes therefore take plain data only
// (none, bools, numbers, strings and lists, tuples and dicts of them); anything else fails.
void check_namespace_value(const Value& v);
// Callables and other objects the evaluator owns say how Python would show and name them.
struct ObjectBase : HeapObject {
  virtual std::string repr() const = 0;
  virtual std::string type_name() const = 0;
  virtual std::string module() const { return "builtins"; }
  // Attribute lookup (`loop.index`, `macro.name`); false when there is no such attribute.
  virtual bool get_attr(const std::string& /*name*/, Value* /*out*/) const { return false; }
};

struct StringData : HeapObject {
  std::string text;
};
// The containers' destructors are defined in value.cpp, where Value is complete: clang
// instantiates an inline virtual destructor (and with it ~vector<Value>) right here otherwise.
struct ListData : HeapObject {
  ~ListData() override;
  std::vector<Value> items;
  bool is_tuple = false;
  std::vector<std::string> field_names;  // a named tuple (groupby's (grouper, list))
};
struct DictData : HeapObject {
  ~DictData() override;
  std::vector<std::pair<Value, Value>> entries;
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(Value key, Value value);
};
// Python iterables that are not lists: a generator is consumed by its first iteration and has
// no len(); views and range can be iterated again and have a length.
struct IteratorData : HeapObject {
  ~IteratorData() override;
  std::string type_name;  // "generator", "dict_items", "range", "list_reverseiterator", ...
  std::vector<Value> items;
  bool has_len = false;
  bool indexable = false;
  bool one_shot = true;
  mutable bool consumed = false;
  std::string repr;  // how str() shows it
};
struct NamespaceData : HeapObject {
  ~NamespaceData() override;
  mutable std::vector<std::pair<std::string, Value>> attrs;
  Value* find(std::string_view name) const;
};
struct UndefinedData : HeapObject {
  std::string name;   // the variable, attribute or item asked for
  std::string owner;  // "dict object", ... (empty: a plain missing variable)
  bool has_owner = false;
  bool name_is_string = true;
  ErrorKind kind = ErrorKind::undefined;
  std::string message;  // overrides the derived message (sandbox refusals)
};

class Value {
 public:
  enum class Kind : std::uint8_t {
    undefined,
    none,
    boolean,
    integer,
    floating,
    string,
    list,  // list or tuple
    dict,
    iterator,
    ns,
    callable,  // builtins, bound methods, macros, caller, joiner, ...
    object,    // loop, cycler and other evaluator-owned objects
  };

  Value() = default;  // Undefined
  static Value none();
  static Value boolean(bool b);
  static Value integer(std::int64_t i);
  static Value floating(double d);
  static Value string(std::string s, bool safe = false);
  static Value list(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  static Value dict(std::shared_ptr<const DictData> d);
  static Value dict(DictData d);
  static Value iterator(std::shared_ptr<IteratorData> it);
  static Value generator(std::vector<Value> items);
  static Value ns(std::shared_ptr<NamespaceData> n);
  static Value undefined_named(std::string name);
  // An Undefined whose error reads `message` ("parameter 'x' was not provided").
  static Value undefined_with_message(std::string name, std::string message);
  static Value undefined_member(const Value& owner, std::string name, bool name_is_string = true);
  static Value undefined_unsafe(const Value& owner, const std::string& attribute);
  static Value object(Kind kind, std::shared_ptr<const HeapObject> obj);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::undefined; }
  bool is_none() const { return kind_ == Kind::none; }
  bool is_bool() const { return kind_ == Kind::boolean; }
  bool is_int() const { return kind_ == Kind::integer; }
  bool is_float() const { return kind_ == Kind::floating; }
  // int, float or bool (bool is an int in Python).
  bool is_number() const { return kind_ == Kind::integer || kind_ == Kind::floating || kind_ == Kind::boolean; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_list() const { return kind_ == Kind::list; }
  bool is_tuple() const { return kind_ == Kind::list && list_data().is_tuple; }
  bool is_dict() const { return kind_ == Kind::dict; }
  bool is_iterator() const { return kind_ == Kind::iterator; }
  bool is_ns() const { return kind_ == Kind::ns; }
  bool is_callable() const { return kind_ == Kind::callable; }
  bool safe() const { return safe_; }

  bool as_bool() const { return b_; }
  std::int64_t as_int() const { return kind_ == Kind::boolean ? (b_ ? 1 : 0) : i_; }
  double as_double() const { return kind_ == Kind::floating ? d_ : static_cast<double>(as_int()); }
  const std::string& str() const { return static_cast<const StringData&>(*obj_).text; }
  const ListData& list_data() const { return static_cast<const ListData&>(*obj_); }
  const std::vector<Value>& items() const { return list_data().items; }
  const DictData& dict_data() const { return static_cast<const DictData&>(*obj_); }
  const std::shared_ptr<const HeapObject>& heap() const { return obj_; }
  const IteratorData& iterator_data() const { return static_cast<const IteratorData&>(*obj_); }
  const NamespaceData& ns_data() const { return static_cast<const NamespaceData&>(*obj_); }
  const UndefinedData* undefined_data() const { return static_cast<const UndefinedData*>(obj_.get()); }

 private:
  Kind kind_ = Kind::undefined;
  bool safe_ = false;
  union {
    bool b_;
    std::int64_t i_ = 0;
    double d_;
  };
  std::shared_ptr<const HeapObject> obj_;
};

// Python semantics.
bool truthy(const Value& v);
bool py_equal(const Value& a, const Value& b);
// -1, 0, 1 for <, ==, >; TypeError where Python refuses to order the pair.
int py_compare(const Value& a, const Value& b, const char* op);
// str(v) (Undefined prints as ''), repr(v).
std::string py_str(const Value& v);
std::string py_repr(const Value& v);
void append_str(std::string& out, const Value& v);
void append_repr(std::string& out, const Value& v);
std::string repr_string(std::string_view s);
std::string float_repr(double d);
// Python's type name: "int", "str", "dict", "NoneType", "generator", ...
std::string type_name(const Value& v);
// "'dict object'"-style owner names used in undefined-attribute messages.
std::string object_type_repr(const Value& v);
// The message UndefinedError carries.
std::string undefined_message(const Value& v);
[[noreturn]] void fail_undefined(const Value& v);

// Python's binary operators + - * / // % ** (templates' `%` on a string formats it), unary
// minus / plus, and `in`.
Value binary_op(const std::string& op, const Value& a, const Value& b);
Value unary_op(char op, const Value& a);
bool py_in(const Value& needle, const Value& haystack);

// The elements Python's iter() yields; strings yield code points, dicts their keys.
// Fails (TypeError) for values that are not iterable. Consumes one-shot iterators.
std::vector<Value> iterate(const Value& v);
// len(), or TypeError.
std::int64_t py_len(const Value& v);

}  // namespace day0::chat_template
