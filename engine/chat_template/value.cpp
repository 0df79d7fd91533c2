#include "chat_template/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat_template/builtins.h"
#include "chat_template/unicode.h"

namespace day0::chat_template {

namespace {
thread_local Budget* t_budget = nullptr;
}  // namespace

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::syntax:
      return "TemplateSyntaxError";
    case ErrorKind::undefined:
      return "UndefinedError";
    case ErrorKind::type:
      return "TypeError";
    case ErrorKind::value:
      return "ValueError";
    case ErrorKind::zero_division:
      return "ZeroDivisionError";
    case ErrorKind::security:
      return "SecurityError";
    case ErrorKind::overflow:
      return "OverflowError";
    case ErrorKind::raised:
      return "TemplateError";
    case ErrorKind::runtime:
      return "TemplateRuntimeError";
    case ErrorKind::index:
      return "IndexError";
    case ErrorKind::key:
      return "KeyError";
    case ErrorKind::budget:
      return "BudgetExceeded";
  }
  return "Error";
}

void fail(ErrorKind kind, std::string message) { throw TemplateError{kind, std::move(message)}; }

Budget* current_budget() { return t_budget; }
void set_current_budget(Budget* budget) { t_budget = budget; }

void charge(std::uint64_t steps) {
  Budget* b = t_budget;
  if (!b) return;
  if (b->steps_left < steps) {
    b->steps_left = 0;
    fail(ErrorKind::budget, "the template ran out of its step budget (an endless or very long loop?)");
  }
  b->steps_left -= steps;
}

void check_size(std::size_t size) {
  Budget* b = t_budget;
  if (b && size > b->max_value_bytes)
    fail(ErrorKind::budget, "a value of " + std::to_string(size) + " bytes would exceed the limit of " +
                                std::to_string(b->max_value_bytes));
}

// ---- containers ----

void note_child(HeapObject& parent, const Value& child) {
  const HeapObject* c = child.heap().get();
  if (!c || child.is_string()) return;
  if (c->depth + 1 > parent.depth) {
    if (c->depth + 1 > kMaxValueDepth)
      fail(ErrorKind::budget, "values nest deeper than " + std::to_string(kMaxValueDepth) + " levels");
    parent.depth = c->depth + 1;
  }
}

void check_namespace_value(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::ns:
    case Value::Kind::object:
    case Value::Kind::callable:
      fail(ErrorKind::security, "a namespace attribute cannot hold a " + type_name(v) +
                                    " (only none, booleans, numbers, strings, lists and dicts of them)");
    case Value::Kind::list:
      for (const Value& item : v.items()) {
        charge(1);
        check_namespace_value(item);
      }
      return;
    case Value::Kind::dict:
      for (const auto& [key, value] : v.dict_data().entries) {
        charge(1);
        check_namespace_value(key);
        check_namespace_value(value);
      }
      return;
    case Value::Kind::iterator:
      for (const Value& item : v.iterator_data().items) {
        charge(1);
        check_namespace_value(item);
      }
      return;
    default:
      return;
  }
}

ListData::~ListData() = default;
DictData::~DictData() = default;
IteratorData::~IteratorData() = default;
NamespaceData::~NamespaceData() = default;

const Value* DictData::find(const Value& key) const {
  for (const auto& [k, v] : entries)
    if (py_equal(k, key)) return &v;
  return nullptr;
}

const Value* DictData::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.is_string() && k.str() == key) return &v;
  return nullptr;
}

void DictData::set(Value key, Value value) {
  for (auto& [k, v] : entries) {
    if (py_equal(k, key)) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

Value* NamespaceData::find(std::string_view name) const {
  for (auto& [k, v] : attrs)
    if (k == name) return &v;
  return nullptr;
}

// ---- construction ----

Value Value::none() {
  Value v;
  v.kind_ = Kind::none;
  return v;
}
Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::boolean;
  v.b_ = b;
  return v;
}
Value Value::integer(std::int64_t i) {
  Value v;
  v.kind_ = Kind::integer;
  v.i_ = i;
  return v;
}
Value Value::floating(double d) {
  Value v;
  v.kind_ = Kind::floating;
  v.d_ = d;
  return v;
}
Value Value::string(std::string s, bool safe) {
  check_size(s.size());
  charge(s.size() / 64);
  auto data = std::make_shared<StringData>();
  data->text = std::move(s);
  Value v;
  v.kind_ = Kind::string;
  v.safe_ = safe;
  v.obj_ = std::move(data);
  return v;
}
Value Value::list(std::vector<Value> items) {
  check_size(items.size());
  charge(items.size() / 8);
  auto data = std::make_shared<ListData>();
  for (const Value& item : items) note_child(*data, item);
  data->items = std::move(items);
  Value v;
  v.kind_ = Kind::list;
  v.obj_ = std::move(data);
  return v;
}
Value Value::tuple(std::vector<Value> items) {
  check_size(items.size());
  auto data = std::make_shared<ListData>();
  for (const Value& item : items) note_child(*data, item);
  data->items = std::move(items);
  data->is_tuple = true;
  Value v;
  v.kind_ = Kind::list;
  v.obj_ = std::move(data);
  return v;
}
Value Value::dict(std::shared_ptr<const DictData> d) {
  Value v;
  v.kind_ = Kind::dict;
  v.obj_ = std::move(d);
  return v;
}
Value Value::dict(DictData d) {
  check_size(d.entries.size());
  for (const auto& [k, v] : d.entries) {
    note_child(d, k);
    note_child(d, v);
  }
  return dict(std::make_shared<const DictData>(std::move(d)));
}
Value Value::iterator(std::shared_ptr<IteratorData> it) {
  check_size(it->items.size());
  for (const Value& item : it->items) note_child(*it, item);
  Value v;
  v.kind_ = Kind::iterator;
  v.obj_ = std::move(it);
  return v;
}
Value Value::generator(std::vector<Value> items) {
  auto it = std::make_shared<IteratorData>();
  it->type_name = "generator";
  it->items = std::move(items);
  it->repr = "<generator object>";
  return iterator(std::move(it));
}
Value Value::ns(std::shared_ptr<NamespaceData> n) {
  Value v;
  v.kind_ = Kind::ns;
  v.obj_ = std::move(n);
  return v;
}
Value Value::undefined_named(std::string name) {
  auto data = std::make_shared<UndefinedData>();
  data->name = std::move(name);
  Value v;
  v.obj_ = std::move(data);
  return v;
}
Value Value::undefined_with_message(std::string name, std::string message) {
  auto data = std::make_shared<UndefinedData>();
  data->name = std::move(name);
  data->message = std::move(message);
  Value v;
  v.obj_ = std::move(data);
  return v;
}
Value Value::undefined_member(const Value& owner, std::string name, bool name_is_string) {
  auto data = std::make_shared<UndefinedData>();
  data->name = std::move(name);
  data->has_owner = true;
  data->owner = object_type_repr(owner);
  data->name_is_string = name_is_string;
  Value v;
  v.obj_ = std::move(data);
  return v;
}
Value Value::undefined_unsafe(const Value& owner, const std::string& attribute) {
  auto data = std::make_shared<UndefinedData>();
  data->name = attribute;
  data->has_owner = true;
  data->owner = object_type_repr(owner);
  data->kind = ErrorKind::security;
  data->message =
      "access to attribute " + repr_string(attribute) + " of " + repr_string(type_name(owner)) + " object is unsafe.";
  Value v;
  v.obj_ = std::move(data);
  return v;
}
Value Value::object(Kind kind, std::shared_ptr<const HeapObject> obj) {
  Value v;
  v.kind_ = kind;
  v.obj_ = std::move(obj);
  return v;
}

// ---- Python semantics ----

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none:
      return false;
    case Value::Kind::boolean:
      return v.as_bool();
    case Value::Kind::integer:
      return v.as_int() != 0;
    case Value::Kind::floating:
      return v.as_double() != 0.0;
    case Value::Kind::string:
      return !v.str().empty();
    case Value::Kind::list:
      return !v.items().empty();
    case Value::Kind::dict:
      return !v.dict_data().entries.empty();
    case Value::Kind::iterator: {
      const auto& it = v.iterator_data();
      return it.has_len ? !it.items.empty() : true;
    }
    default:
      return true;
  }
}

bool py_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none:
      return true;
    case Value::Kind::string:
      return a.str() == b.str();
    case Value::Kind::list: {
      if (a.is_tuple() != b.is_tuple()) return false;
      const auto& x = a.items();
      const auto& y = b.items();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!py_equal(x[i], y[i])) return false;
      return true;
    }
    case Value::Kind::dict: {
      const auto& x = a.dict_data().entries;
      const auto& y = b.dict_data();
      if (x.size() != y.entries.size()) return false;
      for (const auto& [k, val] : x) {
        const Value* other = y.find(k);
        if (!other || !py_equal(val, *other)) return false;
      }
      return true;
    }
    default:
      return a.heap() == b.heap();
  }
}

int py_compare(const Value& a, const Value& b, const char* op) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      const double x = a.as_double(), y = b.as_double();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.str().compare(b.str());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (py_equal(x[i], y[i])) continue;
      return py_compare(x[i], y[i], op);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  fail(ErrorKind::type, std::string("'") + op + "' not supported between instances of '" + type_name(a) + "' and '" +
                            type_name(b) + "'");
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci: [-]d[.ddd]e[+-]XX
  bool negative = false;
  std::size_t pos = 0;
  if (sci[0] == '-') negative = true, pos = 1;
  const std::size_t epos = sci.find('e');
  std::string digits;
  for (std::size_t i = pos; i < epos; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int exp = std::stoi(sci.substr(epos + 1));
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 16) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += e;
    return out;
  }
  const int decpt = exp + 1;
  const int n = static_cast<int>(digits.size());
  if (decpt <= 0) {
    out += "0." + std::string(-decpt, '0') + digits;
  } else if (decpt >= n) {
    out += digits + std::string(decpt - n, '0') + ".0";
  } else {
    out += digits.substr(0, decpt) + "." + digits.substr(decpt);
  }
  return out;
}

std::string repr_string(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out;
  out.reserve(s.size() + 2);
  out += quote;
  auto hex = [&out](const char* fmt, unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, fmt, v);
    out += buf;
  };
  for (const char32_t c : decode_utf8(s)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<char32_t>(quote)) {
      out += '\\';
      out += quote;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (py_isprintable(c)) {
      append_utf8(out, c);
    } else if (c < 0x100) {
      hex("\\x%02x", c);
    } else if (c < 0x10000) {
      hex("\\u%04x", c);
    } else {
      hex("\\U%08x", c);
    }
  }
  out += quote;
  return out;
}

namespace {

void check_out(const std::string& out) {
  if (Budget* b = current_budget(); b && out.size() > b->max_value_bytes) check_size(out.size());
}

void append_sequence(std::string& out, const Value& v) {
  const auto& items = v.items();
  const bool tuple = v.is_tuple();
  out += tuple ? '(' : '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    append_repr(out, items[i]);
    check_out(out);
  }
  if (tuple && items.size() == 1) out += ',';
  out += tuple ? ')' : ']';
}

}  // namespace

namespace {
thread_local int t_repr_depth = 0;
// Namespaces can hold themselves; Python prints such cycles as "...", Day0 stops at the
// nesting limit instead of recursing forever.
struct ReprDepth {
  ReprDepth() {
    if (++t_repr_depth > kMaxValueDepth + 8) {
      t_repr_depth = 0;
      fail(ErrorKind::budget, "the value nests too deeply (or holds itself) to be printed");
    }
  }
  ~ReprDepth() {
    if (t_repr_depth > 0) --t_repr_depth;
  }
};
}  // namespace

void append_repr(std::string& out, const Value& v) {
  charge(1);
  ReprDepth guard;
  switch (v.kind()) {
    case Value::Kind::undefined:
      out += "Undefined";
      return;
    case Value::Kind::string:
      if (v.safe()) {
        out += "Markup(" + repr_string(v.str()) + ")";
      } else {
        out += repr_string(v.str());
      }
      return;
    case Value::Kind::list:
      append_sequence(out, v);
      return;
    case Value::Kind::dict: {
      out += '{';
      bool first = true;
      for (const auto& [k, val] : v.dict_data().entries) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, k);
        out += ": ";
        append_repr(out, val);
        check_out(out);
      }
      out += '}';
      return;
    }
    default:
      append_str(out, v);
  }
}

void append_str(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined:
      return;
    case Value::Kind::none:
      out += "None";
      return;
    case Value::Kind::boolean:
      out += v.as_bool() ? "True" : "False";
      return;
    case Value::Kind::integer:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::floating:
      out += float_repr(v.as_double());
      return;
    case Value::Kind::string:
      out += v.str();
      return;
    case Value::Kind::list:
    case Value::Kind::dict:
      append_repr(out, v);
      return;
    case Value::Kind::iterator:
      // dict views and range show their contents ("dict_items([...])", "range(0, 3)").
      out += v.iterator_data().repr;
      return;
    case Value::Kind::ns: {
      ReprDepth guard;
      out += "<Namespace {";
      bool first = true;
      for (const auto& [k, val] : v.ns_data().attrs) {
        if (!first) out += ", ";
        first = false;
        out += repr_string(k) + ": ";
        append_repr(out, val);
      }
      out += "}>";
      return;
    }
    case Value::Kind::callable:
    case Value::Kind::object:
      out += static_cast<const ObjectBase&>(*v.heap()).repr();
      return;
  }
}

std::string py_str(const Value& v) {
  if (v.is_string()) return v.str();
  std::string out;
  append_str(out, v);
  check_out(out);
  return out;
}

std::string py_repr(const Value& v) {
  std::string out;
  append_repr(out, v);
  check_out(out);
  return out;
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined:
      return "Undefined";
    case Value::Kind::none:
      return "NoneType";
    case Value::Kind::boolean:
      return "bool";
    case Value::Kind::integer:
      return "int";
    case Value::Kind::floating:
      return "float";
    case Value::Kind::string:
      return v.safe() ? "Markup" : "str";
    case Value::Kind::list:
      return v.is_tuple() ? "tuple" : "list";
    case Value::Kind::dict:
      return "dict";
    case Value::Kind::iterator:
      return v.iterator_data().type_name;
    case Value::Kind::ns:
      return "Namespace";
    case Value::Kind::callable:
    case Value::Kind::object:
      return static_cast<const ObjectBase&>(*v.heap()).type_name();
  }
  return "object";
}

std::string object_type_repr(const Value& v) {
  if (v.is_none()) return "None";
  std::string module = "builtins";
  if (v.is_string() && v.safe()) module = "markupsafe";
  if (v.is_ns()) module = "jinja2.utils";
  if (v.is_undefined()) module = "jinja2.runtime";
  if (v.kind() == Value::Kind::callable || v.kind() == Value::Kind::object)
    module = static_cast<const ObjectBase&>(*v.heap()).module();
  if (module == "builtins") return type_name(v) + " object";
  return module + "." + type_name(v) + " object";
}

std::string undefined_message(const Value& v) {
  const UndefinedData* u = v.undefined_data();
  if (!u) return "undefined value";
  if (!u->message.empty()) return u->message;
  if (!u->has_owner) return repr_string(u->name) + " is undefined";
  if (!u->name_is_string) return u->owner + " has no element " + u->name;
  return repr_string(u->owner) + " has no attribute " + repr_string(u->name);
}

void fail_undefined(const Value& v) {
  const UndefinedData* u = v.undefined_data();
  fail(u ? u->kind : ErrorKind::undefined, undefined_message(v));
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined:
      return {};
    case Value::Kind::list:
      return v.items();
    case Value::Kind::string: {
      // Iterating a Markup yields plain str characters (str.__iter__), unlike indexing it.
      const std::string& s = v.str();
      std::vector<Value> out;
      if (is_ascii(s)) {
        out.reserve(s.size());
        for (const char ch : s) out.push_back(Value::string(std::string(1, ch)));
        return out;
      }
      for (const char32_t c : decode_utf8(s)) {
        std::string one;
        append_utf8(one, c);
        out.push_back(Value::string(std::move(one)));
      }
      return out;
    }
    case Value::Kind::dict: {
      std::vector<Value> out;
      out.reserve(v.dict_data().entries.size());
      for (const auto& [k, val] : v.dict_data().entries) out.push_back(k);
      return out;
    }
    case Value::Kind::iterator: {
      const auto& it = v.iterator_data();
      if (it.one_shot) {
        if (it.consumed) return {};
        it.consumed = true;
      }
      return it.items;
    }
    default:
      fail(ErrorKind::type, repr_string(type_name(v)) + " object is not iterable");
  }
}

std::int64_t py_len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined:
      return 0;
    case Value::Kind::string:
      return static_cast<std::int64_t>(utf8_length(v.str()));
    case Value::Kind::list:
      return static_cast<std::int64_t>(v.items().size());
    case Value::Kind::dict:
      return static_cast<std::int64_t>(v.dict_data().entries.size());
    case Value::Kind::iterator:
      if (v.iterator_data().has_len) return static_cast<std::int64_t>(v.iterator_data().items.size());
      [[fallthrough]];
    default:
      fail(ErrorKind::type, "object of type " + repr_string(type_name(v)) + " has no len()");
  }
}

namespace {

[[noreturn]] void unsupported_operands(const std::string& op, const Value& a, const Value& b) {
  fail(ErrorKind::type,
       "unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

[[noreturn]] void int_overflow() {
  fail(ErrorKind::overflow, "integer result out of range (Day0's template integers are 64-bit)");
}

Value repeat(const Value& seq, std::int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const std::string& s = seq.str();
    if (!s.empty() && static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max() / s.size())
      check_size(std::numeric_limits<std::size_t>::max());
    check_size(s.size() * static_cast<std::size_t>(n));
    std::string out;
    out.reserve(s.size() * static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) out += s;
    return Value::string(std::move(out), seq.safe());
  }
  const auto& items = seq.items();
  if (!items.empty() && static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max() / items.size())
    check_size(std::numeric_limits<std::size_t>::max());
  check_size(items.size() * static_cast<std::size_t>(n));
  std::vector<Value> out;
  out.reserve(items.size() * static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return seq.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

bool is_intlike(const Value& v) { return v.is_int() || v.is_bool(); }

}  // namespace

Value binary_op(const std::string& op, const Value& a, const Value& b) {
  charge(1);
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  const char o = op[0];
  if (op == "+") {
    if (a.is_number() && b.is_number()) {
      if (a.is_float() || b.is_float()) return Value::floating(a.as_double() + b.as_double());
      std::int64_t r;
      if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) int_overflow();
      return Value::integer(r);
    }
    if (a.is_string() && b.is_string()) {
      check_size(a.str().size() + b.str().size());
      if (a.safe() || b.safe()) {
        const std::string left = a.safe() || !b.safe() ? a.str() : html_escape(a.str());
        const std::string right = b.safe() || !a.safe() ? b.str() : html_escape(b.str());
        return Value::string(left + right, true);
      }
      return Value::string(a.str() + b.str());
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      check_size(a.items().size() + b.items().size());
      std::vector<Value> out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return a.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
    }
    if (a.is_string() || a.is_list())
      fail(ErrorKind::type,
           "can only concatenate " + type_name(a) + " (not \"" + type_name(b) + "\") to " + type_name(a));
    unsupported_operands(op, a, b);
  }
  if (o == '%' && a.is_string()) return Value::string(percent_format(a.str(), b), a.safe());
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && is_intlike(b)) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && is_intlike(a)) return repeat(b, a.as_int());
  }
  if (!a.is_number() || !b.is_number()) {
    if (op == "*" && (a.is_string() || a.is_list() || b.is_string() || b.is_list()))
      fail(ErrorKind::type,
           "can't multiply sequence by non-int of type '" + type_name(a.is_string() || a.is_list() ? b : a) + "'");
    unsupported_operands(op, a, b);
  }
  const bool floats = a.is_float() || b.is_float();
  if (op == "-") {
    if (floats) return Value::floating(a.as_double() - b.as_double());
    std::int64_t r;
    if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r)) int_overflow();
    return Value::integer(r);
  }
  if (op == "*") {
    if (floats) return Value::floating(a.as_double() * b.as_double());
    std::int64_t r;
    if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r)) int_overflow();
    return Value::integer(r);
  }
  if (op == "/") {
    if (b.as_double() == 0.0) fail(ErrorKind::zero_division, "division by zero");
    return Value::floating(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (floats) {
      const double x = a.as_double(), y = b.as_double();
      if (y == 0.0) fail(ErrorKind::zero_division, op == "//" ? "float floor division by zero" : "float modulo");
      double mod = std::fmod(x, y);
      double div = (x - mod) / y;
      if (mod != 0.0 && ((y < 0) != (mod < 0))) {
        mod += y;
        div -= 1.0;
      }
      if (mod == 0.0) mod = std::copysign(0.0, y);
      double floordiv = 0.0;
      if (div != 0.0) {
        floordiv = std::floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
      } else {
        floordiv = std::copysign(0.0, x / y);
      }
      return Value::floating(op == "//" ? floordiv : mod);
    }
    const std::int64_t x = a.as_int(), y = b.as_int();
    if (y == 0)
      fail(ErrorKind::zero_division, op == "//" ? "integer division or modulo by zero" : "integer modulo by zero");
    if (x == std::numeric_limits<std::int64_t>::min() && y == -1) {
      if (op == "//") int_overflow();
      return Value::integer(0);
    }
    std::int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) {
      r += y;
      q -= 1;
    }
    return Value::integer(op == "//" ? q : r);
  }
  if (op == "**") {
    if (!floats && b.as_int() >= 0) {
      std::int64_t base = a.as_int(), e = b.as_int(), r = 1;
      while (e > 0) {
        if (e & 1)
          if (__builtin_mul_overflow(r, base, &r)) int_overflow();
        e >>= 1;
        if (e > 0 && __builtin_mul_overflow(base, base, &base)) int_overflow();
      }
      return Value::integer(r);
    }
    const double x = a.as_double(), y = b.as_double();
    if (x == 0.0 && y < 0) fail(ErrorKind::zero_division, "0.0 cannot be raised to a negative power");
    if (x < 0 && y != std::floor(y))
      fail(ErrorKind::value, "a negative number raised to a fractional power is complex");
    const double r = std::pow(x, y);
    if (std::isinf(r) && !std::isinf(x)) fail(ErrorKind::overflow, "(34, 'Numerical result out of range')");
    return Value::floating(r);
  }
  unsupported_operands(op, a, b);
}

Value unary_op(char op, const Value& a) {
  if (a.is_undefined()) fail_undefined(a);
  if (!a.is_number())
    fail(ErrorKind::type, std::string("bad operand type for unary ") + op + ": '" + type_name(a) + "'");
  if (a.is_float()) return Value::floating(op == '-' ? -a.as_double() : a.as_double());
  if (op == '-' && a.as_int() == std::numeric_limits<std::int64_t>::min()) int_overflow();
  return Value::integer(op == '-' ? -a.as_int() : a.as_int());
}

bool py_in(const Value& needle, const Value& haystack) {
  charge(1);
  switch (haystack.kind()) {
    case Value::Kind::string:
      if (!needle.is_string()) {
        if (needle.is_undefined()) fail_undefined(needle);
        fail(ErrorKind::type, "'in <string>' requires string as left operand, not " + type_name(needle));
      }
      return haystack.str().find(needle.str()) != std::string::npos;
    case Value::Kind::dict:
      if (needle.is_list() && !needle.is_tuple()) fail(ErrorKind::type, "unhashable type: 'list'");
      if (needle.is_dict()) fail(ErrorKind::type, "unhashable type: 'dict'");
      return haystack.dict_data().find(needle) != nullptr;
    case Value::Kind::list:
    case Value::Kind::iterator:
    case Value::Kind::undefined:
      for (const Value& v : iterate(haystack))
        if (py_equal(v, needle)) return true;
      return false;
    default:
      fail(ErrorKind::type, "argument of type " + repr_string(type_name(haystack)) + " is not iterable");
  }
}

}  // namespace day0::chat_template
