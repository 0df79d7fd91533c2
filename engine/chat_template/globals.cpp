// The template's global names: jinja2's defaults (range, dict, namespace, cycler, joiner) under
// the sandbox's range limit, and transformers' raise_exception and strftime_now.
#include <chrono>
#include <cstring>

#include "chat_template/objects.h"

namespace day0::chat_template {

namespace {

thread_local const std::tm* t_fixed_clock = nullptr;

// jinja2.sandbox.MAX_RANGE
constexpr std::int64_t kMaxRange = 100000;

struct Joiner : BuiltinCallable {
  std::string sep;
  mutable bool used = false;
  std::string repr() const override { return "<jinja2.utils.Joiner object>"; }
  std::string type_name() const override { return "Joiner"; }
  std::string module() const override { return "jinja2.utils"; }
  Value call(const CallArgs& args) const override {
    args.bind("joiner", {});
    if (!used) {
      used = true;
      return Value::string("");
    }
    return Value::string(sep);
  }
};

struct Cycler;
struct CyclerMethod : BuiltinCallable {
  std::shared_ptr<const Cycler> cycler;
  std::string name;
  std::string repr() const override { return "<bound method Cycler." + name + ">"; }
  std::string type_name() const override { return "method"; }
  Value call(const CallArgs& args) const override;
};

struct Cycler : ObjectBase, std::enable_shared_from_this<Cycler> {
  std::vector<Value> items;
  mutable std::size_t pos = 0;
  std::string repr() const override { return "<jinja2.utils.Cycler object>"; }
  std::string type_name() const override { return "Cycler"; }
  std::string module() const override { return "jinja2.utils"; }
  bool get_attr(const std::string& name, Value* out) const override {
    if (name == "current") {
      *out = items[pos];
      return true;
    }
    if (name == "next" || name == "reset") {
      auto m = std::make_shared<CyclerMethod>();
      m->cycler = shared_from_this();
      m->name = name;
      *out = Value::object(Value::Kind::callable, std::move(m));
      return true;
    }
    return false;
  }
};

Value CyclerMethod::call(const CallArgs& args) const {
  args.bind(name.c_str(), {});
  if (name == "reset") {
    cycler->pos = 0;
    return Value::none();
  }
  Value v = cycler->items[cycler->pos];
  cycler->pos = (cycler->pos + 1) % cycler->items.size();
  return v;
}

Value make_range(const CallArgs& call) {
  if (!call.kwargs.empty()) fail(ErrorKind::type, "range() takes no keyword arguments");
  const auto& a = call.args;
  if (a.empty() || a.size() > 3)
    fail(ErrorKind::type, "range expected at most 3 arguments, got " + std::to_string(a.size()));
  auto as_int = [](const Value& v) {
    if (v.is_int() || v.is_bool()) return v.as_int();
    if (v.is_undefined()) fail_undefined(v);
    fail(ErrorKind::type, repr_string(type_name(v)) + " object cannot be interpreted as an integer");
  };
  std::int64_t start = 0, stop = 0, step = 1;
  if (a.size() == 1) {
    stop = as_int(a[0]);
  } else {
    start = as_int(a[0]);
    stop = as_int(a[1]);
    if (a.size() == 3) step = as_int(a[2]);
  }
  if (step == 0) fail(ErrorKind::value, "range() arg 3 must not be zero");
  // Elements in the range, computed without overflow (the difference fits in 64 unsigned bits).
  std::uint64_t n = 0;
  if (step > 0 && start < stop) {
    n = (static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start) - 1) / static_cast<std::uint64_t>(step) +
        1;
  } else if (step < 0 && start > stop) {
    const std::uint64_t mag = step == INT64_MIN ? (1ull << 63) : static_cast<std::uint64_t>(-step);
    n = (static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop) - 1) / mag + 1;
  }
  if (n > static_cast<std::uint64_t>(kMaxRange))
    fail(ErrorKind::overflow, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  auto it = std::make_shared<IteratorData>();
  it->type_name = "range";
  it->has_len = true;
  it->indexable = true;
  it->one_shot = false;
  for (std::uint64_t i = 0; i < n; ++i)
    // In unsigned arithmetic: i * step alone can pass 2^63 while start + i * step cannot.
    it->items.push_back(Value::integer(
        static_cast<std::int64_t>(static_cast<std::uint64_t>(start) + i * static_cast<std::uint64_t>(step))));
  it->repr = "range(" + std::to_string(start) + ", " + std::to_string(stop) +
             (step != 1 ? ", " + std::to_string(step) : std::string()) + ")";
  return Value::iterator(std::move(it));
}

void add_pairs(DictData& d, const Value& source) {
  if (source.is_dict()) {
    for (const auto& [k, v] : source.dict_data().entries) d.set(k, v);
    return;
  }
  std::size_t i = 0;
  for (const Value& item : iterate(source)) {
    const auto pair = iterate(item);
    if (pair.size() != 2)
      fail(ErrorKind::value, "dictionary update sequence element #" + std::to_string(i) + " has length " +
                                 std::to_string(pair.size()) + "; 2 is required");
    d.set(pair[0], pair[1]);
    ++i;
  }
}

std::string strftime_python(const std::string& format) {
  std::tm now{};
  if (t_fixed_clock) {
    now = *t_fixed_clock;
  } else {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    localtime_r(&t, &now);
  }
  // datetime.strftime: %f is microseconds; a naive datetime has empty %z and %Z.
  std::string fmt;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '%' && i + 1 < format.size()) {
      const char c = format[i + 1];
      if (c == 'f') {
        fmt += "000000";
        ++i;
        continue;
      }
      if (c == 'z' || c == 'Z') {
        ++i;
        continue;
      }
      fmt += format[i];
      fmt += c;
      ++i;
      continue;
    }
    fmt += format[i];
  }
  if (fmt.empty()) return "";
  std::string out(fmt.size() * 4 + 64, '\0');
  const std::size_t n = std::strftime(out.data(), out.size(), fmt.c_str(), &now);
  out.resize(n);
  return out;
}

}  // namespace

void set_fixed_clock(const std::tm* now) { t_fixed_clock = now; }

Value GlobalFunction::call(const CallArgs& call) const {
  charge(1);
  if (name == "range") return make_range(call);
  if (name == "raise_exception") {
    const auto a = call.bind("raise_exception", {"message"});
    fail(ErrorKind::raised, py_str(a[0]));
  }
  if (name == "strftime_now") {
    const auto a = call.bind("strftime_now", {"format"});
    if (!a[0].is_string())
      fail(ErrorKind::type, "strftime() argument 1 must be str, not " + ::day0::chat_template::type_name(a[0]));
    return Value::string(strftime_python(a[0].str()));
  }
  if (name == "dict") {
    if (call.args.size() > 1)
      fail(ErrorKind::type, "dict expected at most 1 argument, got " + std::to_string(call.args.size()));
    DictData d;
    if (!call.args.empty()) add_pairs(d, call.args[0]);
    for (const auto& [k, v] : call.kwargs) d.set(Value::string(k), v);
    return Value::dict(std::move(d));
  }
  if (name == "namespace") {
    if (call.args.size() > 1)
      fail(ErrorKind::type, "dict expected at most 1 argument, got " + std::to_string(call.args.size()));
    DictData d;
    if (!call.args.empty()) add_pairs(d, call.args[0]);
    for (const auto& [k, v] : call.kwargs) d.set(Value::string(k), v);
    auto ns = std::make_shared<NamespaceData>();
    for (auto& [k, v] : d.entries) {
      if (!k.is_string()) fail(ErrorKind::type, "keywords must be strings");
      check_namespace_value(v);
      note_child(*ns, v);
      ns->attrs.emplace_back(k.str(), v);
    }
    return Value::ns(std::move(ns));
  }
  if (name == "cycler") {
    if (call.args.empty()) fail(ErrorKind::runtime, "at least one item has to be provided");
    auto c = std::make_shared<Cycler>();
    c->items = call.args;
    return Value::object(Value::Kind::object, std::move(c));
  }
  if (name == "joiner") {
    const auto a = call.bind("joiner", {"sep"});
    auto j = std::make_shared<Joiner>();
    j->sep = a[0].is_undefined() ? ", " : py_str(a[0]);
    return Value::object(Value::Kind::callable, std::move(j));
  }
  fail(ErrorKind::type, name + "() is not available in Day0's template engine");
}

bool lookup_global(std::string_view name, Value* out) {
  static const char* const kGlobals[] = {"range",        "dict",   "namespace", "raise_exception",
                                         "strftime_now", "cycler", "joiner",    "lipsum"};
  for (const char* g : kGlobals) {
    if (name == g) {
      auto f = std::make_shared<GlobalFunction>();
      f->name = g;
      *out = Value::object(Value::Kind::callable, std::move(f));
      return true;
    }
  }
  return false;
}

Value call_builtin(const Value& callee, const CallArgs& args) {
  if (callee.is_undefined()) fail_undefined(callee);
  if (callee.kind() == Value::Kind::callable) {
    if (const auto* f = dynamic_cast<const BuiltinCallable*>(callee.heap().get())) return f->call(args);
  }
  fail(ErrorKind::type, repr_string(type_name(callee)) + " object is not callable");
}

}  // namespace day0::chat_template
