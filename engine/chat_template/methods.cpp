// Python's str / dict / list methods as templates call them, and the sandboxed attribute and
// item lookup of jinja2's ImmutableSandboxedEnvironment.
#include <algorithm>
#include <cstring>

#include "chat_template/objects.h"
#include "chat_template/unicode.h"

namespace day0::chat_template {

namespace {

const char* const kStrMethods[] = {
    "capitalize",   "casefold",   "center",    "count",       "encode",    "endswith",     "expandtabs",   "find",
    "format",       "format_map", "index",     "isalnum",     "isalpha",   "isascii",      "isdecimal",    "isdigit",
    "isidentifier", "islower",    "isnumeric", "isprintable", "isspace",   "istitle",      "isupper",      "join",
    "ljust",        "lower",      "lstrip",    "maketrans",   "partition", "removeprefix", "removesuffix", "replace",
    "rfind",        "rindex",     "rjust",     "rpartition",  "rsplit",    "rstrip",       "split",        "splitlines",
    "startswith",   "strip",      "swapcase",  "title",       "translate", "upper",        "zfill"};
const char* const kDictMethods[] = {"copy", "fromkeys", "get", "items", "keys", "values"};
const char* const kDictUnsafe[] = {"clear", "pop", "popitem", "setdefault", "update"};
const char* const kListMethods[] = {"copy", "count", "index"};
const char* const kListUnsafe[] = {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};
const char* const kTupleMethods[] = {"count", "index"};

template <std::size_t N>
bool in_list(const char* const (&list)[N], const std::string& name) {
  for (const char* m : list)
    if (name == m) return true;
  return false;
}

[[noreturn]] void arg_type_error(const std::string& what, const Value& got) {
  fail(ErrorKind::type, what + ", not " + type_name(got));
}

const std::string& need_str(const Value& v, const std::string& method) {
  if (!v.is_string()) {
    if (v.is_undefined()) fail_undefined(v);
    arg_type_error(method + "() argument must be str", v);
  }
  return v.str();
}

std::int64_t need_int(const Value& v, const std::string& what) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  if (v.is_undefined()) fail_undefined(v);
  fail(ErrorKind::type, repr_string(type_name(v)) + " object cannot be interpreted as an integer (" + what + ")");
}

// Code points of a string, with a fast path left to callers for ASCII.
std::vector<char32_t> cps_of(const std::string& s) { return decode_utf8(s); }

std::string strip_impl(const std::string& s, const Value& chars, bool left, bool right) {
  std::vector<char32_t> cps = cps_of(s);
  std::vector<char32_t> set;
  const bool whitespace = chars.is_none() || chars.is_undefined();
  if (!whitespace) set = cps_of(need_str(chars, "strip"));
  auto strip_it = [&](char32_t c) {
    return whitespace ? py_isspace(c) : std::find(set.begin(), set.end(), c) != set.end();
  };
  std::size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strip_it(cps[b])) ++b;
  if (right)
    while (e > b && strip_it(cps[e - 1])) --e;
  return encode_utf8(cps, b, e);
}

Value split_impl(const std::string& s, const Value& sep, const Value& maxsplit_v, bool from_right) {
  std::int64_t maxsplit = maxsplit_v.is_undefined() || maxsplit_v.is_none() ? -1 : need_int(maxsplit_v, "maxsplit");
  std::vector<std::string> parts;
  if (sep.is_none() || sep.is_undefined()) {
    std::vector<char32_t> cps = cps_of(s);
    if (!from_right) {
      std::size_t i = 0;
      while (true) {
        while (i < cps.size() && py_isspace(cps[i])) ++i;
        if (i >= cps.size()) break;
        if (maxsplit >= 0 && static_cast<std::int64_t>(parts.size()) == maxsplit) {
          std::size_t e = cps.size();
          while (e > i && py_isspace(cps[e - 1])) --e;
          parts.push_back(encode_utf8(cps, i, e));
          break;
        }
        std::size_t j = i;
        while (j < cps.size() && !py_isspace(cps[j])) ++j;
        parts.push_back(encode_utf8(cps, i, j));
        i = j;
      }
    } else {
      std::int64_t i = static_cast<std::int64_t>(cps.size());
      while (true) {
        while (i > 0 && py_isspace(cps[i - 1])) --i;
        if (i <= 0) break;
        if (maxsplit >= 0 && static_cast<std::int64_t>(parts.size()) == maxsplit) {
          std::size_t b = 0;
          while (b < static_cast<std::size_t>(i) && py_isspace(cps[b])) ++b;
          parts.push_back(encode_utf8(cps, b, i));
          break;
        }
        std::int64_t j = i;
        while (j > 0 && !py_isspace(cps[j - 1])) --j;
        parts.push_back(encode_utf8(cps, j, i));
        i = j;
      }
      std::reverse(parts.begin(), parts.end());
    }
  } else {
    const std::string& d = need_str(sep, "split");
    if (d.empty()) fail(ErrorKind::value, "empty separator");
    if (!from_right) {
      std::size_t start = 0;
      while (true) {
        if (maxsplit >= 0 && static_cast<std::int64_t>(parts.size()) == maxsplit) break;
        const std::size_t f = s.find(d, start);
        if (f == std::string::npos) break;
        parts.push_back(s.substr(start, f - start));
        start = f + d.size();
        charge(1);
      }
      parts.push_back(s.substr(start));
    } else {
      std::size_t end = s.size();
      while (true) {
        if (maxsplit >= 0 && static_cast<std::int64_t>(parts.size()) == maxsplit) break;
        if (end < d.size()) break;
        const std::size_t f = s.rfind(d, end - d.size());
        if (f == std::string::npos) break;
        parts.push_back(s.substr(f + d.size(), end - f - d.size()));
        end = f;
        charge(1);
      }
      parts.push_back(s.substr(0, end));
      std::reverse(parts.begin(), parts.end());
    }
  }
  std::vector<Value> out;
  out.reserve(parts.size());
  for (auto& p : parts) out.push_back(Value::string(std::move(p)));
  return Value::list(std::move(out));
}

bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
         c == 0x2028 || c == 0x2029;
}

Value splitlines_impl(const std::string& s, bool keepends) {
  std::vector<char32_t> cps = cps_of(s);
  std::vector<Value> out;
  std::size_t i = 0, start = 0;
  while (i < cps.size()) {
    if (!is_line_break(cps[i])) {
      ++i;
      continue;
    }
    std::size_t eol = i + 1;
    if (cps[i] == '\r' && eol < cps.size() && cps[eol] == '\n') ++eol;
    out.push_back(Value::string(encode_utf8(cps, start, keepends ? eol : i)));
    start = i = eol;
  }
  if (start < cps.size()) out.push_back(Value::string(encode_utf8(cps, start, cps.size())));
  return Value::list(std::move(out));
}

bool affix_match(const std::string& s, const Value& affix, bool prefix, const char* method) {
  auto one = [&](const Value& a) {
    if (!a.is_string()) arg_type_error(std::string(method) + " first arg must be str or a tuple of str", a);
    const std::string& x = a.str();
    if (x.size() > s.size()) return false;
    return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.is_tuple()) {
    for (const Value& a : affix.items())
      if (one(a)) return true;
    return false;
  }
  return one(affix);
}

std::int64_t cp_index(const std::string& s, std::size_t byte_pos) {
  return static_cast<std::int64_t>(utf8_length(std::string_view(s).substr(0, byte_pos)));
}

std::string replace_impl(const std::string& s, const std::string& old, const std::string& repl, std::int64_t count) {
  std::string out;
  if (old.empty()) {
    std::vector<char32_t> cps = cps_of(s);
    std::int64_t done = 0;
    for (std::size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
        check_size(out.size());
      }
      if (i < cps.size()) append_utf8(out, cps[i]);
    }
    return out;
  }
  std::size_t start = 0;
  std::int64_t done = 0;
  while (count < 0 || done < count) {
    const std::size_t f = s.find(old, start);
    if (f == std::string::npos) break;
    out.append(s, start, f - start);
    out += repl;
    check_size(out.size());
    start = f + old.size();
    ++done;
  }
  out.append(s, start, std::string::npos);
  return out;
}

std::string pad_impl(const std::string& s, std::int64_t width, const Value& fill_v, int mode) {
  std::string fill = " ";
  if (!fill_v.is_undefined()) {
    fill = need_str(fill_v, "pad");
    if (utf8_length(fill) != 1) fail(ErrorKind::type, "The fill character must be exactly one character long");
  }
  const std::int64_t len = static_cast<std::int64_t>(utf8_length(s));
  if (width <= len) return s;
  check_size(static_cast<std::size_t>(width) * fill.size());
  const std::int64_t marg = width - len;
  std::int64_t left = 0;
  if (mode == 0) left = marg / 2 + (marg & width & 1);  // center, as CPython
  if (mode == 2) left = marg;                           // rjust
  std::string out;
  for (std::int64_t i = 0; i < left; ++i) out += fill;
  out += s;
  for (std::int64_t i = 0; i < marg - left; ++i) out += fill;
  return out;
}

std::string title_case(const std::string& s) {
  std::string out;
  bool prev_cased = false;
  for (const char32_t c : decode_utf8(s)) {
    const bool upper = py_is_upper_cased(c), lower = py_is_lower_cased(c);
    if (upper || lower) {
      append_utf8(out, prev_cased ? py_to_lower(c) : py_to_upper(c));
      prev_cased = true;
    } else {
      append_utf8(out, c);
      prev_cased = false;
    }
  }
  return out;
}

Value str_method(const Value& self, const std::string& name, const CallArgs& call) {
  const std::string& s = self.str();
  const bool safe = self.safe();
  auto str_result = [&](std::string r, bool keep_safe = true) {
    return Value::string(std::move(r), safe && keep_safe);
  };
  if (name == "upper") return call.bind("upper", {}), str_result(py_upper(s));
  if (name == "lower" || name == "casefold") return call.bind("lower", {}), str_result(py_lower(s));
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const auto a = call.bind(name.c_str(), {"chars"});
    return str_result(strip_impl(s, a[0], name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    const auto a = call.bind(name.c_str(), {"sep", "maxsplit"});
    return split_impl(s, a[0], a[1], name == "rsplit");
  }
  if (name == "splitlines") {
    const auto a = call.bind("splitlines", {"keepends"});
    return splitlines_impl(s, truthy(a[0]));
  }
  if (name == "startswith" || name == "endswith") {
    const auto a = call.bind(name.c_str(), {"prefix", "start", "end"});
    std::string sub = s;
    if (!a[1].is_undefined() || !a[2].is_undefined()) {
      const auto cps = cps_of(s);
      const auto pos =
          slice_positions(static_cast<std::int64_t>(cps.size()), a[1].is_undefined() ? Value::none() : a[1],
                          a[2].is_undefined() ? Value::none() : a[2], Value::none());
      sub.clear();
      for (const auto p : pos) append_utf8(sub, cps[p]);
    }
    return Value::boolean(affix_match(sub, a[0], name == "startswith", name.c_str()));
  }
  if (name == "replace") {
    const auto a = call.bind("replace", {"old", "new", "count"});
    const std::int64_t count = a[2].is_undefined() ? -1 : need_int(a[2], "count");
    std::string repl = need_str(a[1], "replace");
    std::string old = need_str(a[0], "replace");
    if (safe && !a[0].safe()) old = html_escape(old);
    if (safe && !a[1].safe()) repl = html_escape(repl);
    return str_result(replace_impl(s, old, repl, count));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    const auto a = call.bind(name.c_str(), {"sub", "start", "end"});
    const std::string& sub = need_str(a[0], name);
    if (name == "count") {
      if (sub.empty()) return Value::integer(static_cast<std::int64_t>(utf8_length(s)) + 1);
      std::int64_t n = 0;
      for (std::size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value::integer(n);
    }
    const bool reverse = name[0] == 'r';
    const std::size_t f = reverse ? s.rfind(sub) : s.find(sub);
    if (f == std::string::npos) {
      if (name == "index" || name == "rindex") fail(ErrorKind::value, "substring not found");
      return Value::integer(-1);
    }
    return Value::integer(cp_index(s, f));
  }
  if (name == "join") {
    const auto a = call.bind("join", {"iterable"});
    std::string out;
    std::size_t i = 0;
    for (const Value& item : iterate(a[0])) {
      if (!item.is_string())
        fail(ErrorKind::type,
             "sequence item " + std::to_string(i) + ": expected str instance, " + type_name(item) + " found");
      if (i++) out += s;
      out += safe && !item.safe() ? html_escape(item.str()) : item.str();
      check_size(out.size());
    }
    return str_result(std::move(out));
  }
  if (name == "format") return str_result(str_format(s, call));
  if (name == "title") return call.bind("title", {}), str_result(title_case(s));
  if (name == "capitalize") {
    call.bind("capitalize", {});
    std::vector<char32_t> cps = cps_of(s);
    std::string out;
    for (std::size_t i = 0; i < cps.size(); ++i) append_utf8(out, i == 0 ? py_to_upper(cps[i]) : py_to_lower(cps[i]));
    return str_result(std::move(out));
  }
  if (name == "swapcase") {
    call.bind("swapcase", {});
    std::string out;
    for (const char32_t c : cps_of(s))
      append_utf8(out, py_is_upper_cased(c) ? py_to_lower(c) : py_is_lower_cased(c) ? py_to_upper(c) : c);
    return str_result(std::move(out));
  }
  if (name.rfind("is", 0) == 0) {
    call.bind(name.c_str(), {});
    const auto cps = cps_of(s);
    if (name == "isascii") return Value::boolean(is_ascii(s));
    if (cps.empty()) return Value::boolean(false);
    bool ok = true;
    if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") {
      for (const char32_t c : cps) ok = ok && py_isdigit(c);
    } else if (name == "isalpha") {
      for (const char32_t c : cps) ok = ok && py_isalpha(c);
    } else if (name == "isalnum") {
      for (const char32_t c : cps) ok = ok && py_isalnum(c);
    } else if (name == "isspace") {
      for (const char32_t c : cps) ok = ok && py_isspace(c);
    } else if (name == "isupper" || name == "islower") {
      bool any_cased = false;
      for (const char32_t c : cps) {
        const bool up = py_is_upper_cased(c), low = py_is_lower_cased(c);
        any_cased = any_cased || up || low;
        if (name == "isupper" ? low : up) ok = false;
      }
      ok = ok && any_cased;
    } else if (name == "istitle") {
      ok = title_case(s) == s;
      bool any = false;
      for (const char32_t c : cps) any = any || py_is_upper_cased(c) || py_is_lower_cased(c);
      ok = ok && any;
    } else if (name == "isprintable") {
      for (const char32_t c : cps) ok = ok && py_isprintable(c);
    } else if (name == "isidentifier") {
      ok = !py_isdigit(cps[0]);
      for (const char32_t c : cps) ok = ok && (py_isalnum(c) || c == '_');
    }
    return Value::boolean(ok);
  }
  if (name == "zfill") {
    const auto a = call.bind("zfill", {"width"});
    const std::int64_t width = need_int(a[0], "width");
    const std::int64_t len = static_cast<std::int64_t>(utf8_length(s));
    if (width <= len) return str_result(s);
    check_size(static_cast<std::size_t>(width));
    std::string out = s;
    std::size_t at = (!out.empty() && (out[0] == '+' || out[0] == '-')) ? 1 : 0;
    out.insert(at, static_cast<std::size_t>(width - len), '0');
    return str_result(std::move(out));
  }
  if (name == "center" || name == "ljust" || name == "rjust") {
    const auto a = call.bind(name.c_str(), {"width", "fillchar"});
    return str_result(pad_impl(s, need_int(a[0], "width"), a[1], name == "center" ? 0 : name == "ljust" ? 1 : 2));
  }
  if (name == "partition" || name == "rpartition") {
    const auto a = call.bind(name.c_str(), {"sep"});
    const std::string& sep = need_str(a[0], name);
    if (sep.empty()) fail(ErrorKind::value, "empty separator");
    const std::size_t f = name == "partition" ? s.find(sep) : s.rfind(sep);
    if (f == std::string::npos) {
      if (name == "partition") return Value::tuple({str_result(s), Value::string(""), Value::string("")});
      return Value::tuple({Value::string(""), Value::string(""), str_result(s)});
    }
    return Value::tuple({str_result(s.substr(0, f)), Value::string(sep), str_result(s.substr(f + sep.size()))});
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const auto a = call.bind(name.c_str(), {"affix"});
    const std::string& x = need_str(a[0], name);
    if (name == "removeprefix" && s.compare(0, x.size(), x) == 0) return str_result(s.substr(x.size()));
    if (name == "removesuffix" && !x.empty() && s.size() >= x.size() &&
        s.compare(s.size() - x.size(), x.size(), x) == 0)
      return str_result(s.substr(0, s.size() - x.size()));
    return str_result(s);
  }
  if (name == "expandtabs") {
    const auto a = call.bind("expandtabs", {"tabsize"});
    const std::int64_t tab = a[0].is_undefined() ? 8 : need_int(a[0], "tabsize");
    std::string out;
    std::int64_t col = 0;
    for (const char32_t c : cps_of(s)) {
      if (c == '\t') {
        const std::int64_t n = tab > 0 ? tab - col % tab : 0;
        out.append(static_cast<std::size_t>(n), ' ');
        col += n;
      } else {
        append_utf8(out, c);
        col = (c == '\n' || c == '\r') ? 0 : col + 1;
      }
    }
    return str_result(std::move(out));
  }
  fail(ErrorKind::type, "str." + name + "() is not available in Day0's template engine");
}

Value view(const Value& dict, const char* kind) {
  auto it = std::make_shared<IteratorData>();
  it->type_name = std::string("dict_") + kind;
  it->has_len = true;
  it->one_shot = false;
  std::vector<Value> shown;
  for (const auto& [k, v] : dict.dict_data().entries) {
    if (std::strcmp(kind, "keys") == 0) {
      it->items.push_back(k);
    } else if (std::strcmp(kind, "values") == 0) {
      it->items.push_back(v);
    } else {
      it->items.push_back(Value::tuple({k, v}));
    }
  }
  it->repr = it->type_name + "(" + py_repr(Value::list(it->items)) + ")";
  return Value::iterator(std::move(it));
}

Value dict_method(const Value& self, const std::string& name, const CallArgs& call) {
  if (name == "get") {
    const auto a = call.bind("get", {"key", "default"});
    if (const Value* v = self.dict_data().find(a[0])) return *v;
    return a[1].is_undefined() ? Value::none() : a[1];
  }
  if (name == "items" || name == "keys" || name == "values") {
    call.bind(name.c_str(), {});
    return view(self, name.c_str());
  }
  if (name == "copy") return call.bind("copy", {}), self;
  fail(ErrorKind::type, "dict." + name + "() is not available in Day0's template engine");
}

Value list_method(const Value& self, const std::string& name, const CallArgs& call) {
  const auto& items = self.items();
  if (name == "count") {
    const auto a = call.bind("count", {"value"});
    std::int64_t n = 0;
    for (const auto& v : items) n += py_equal(v, a[0]) ? 1 : 0;
    return Value::integer(n);
  }
  if (name == "index") {
    const auto a = call.bind("index", {"value", "start", "stop"});
    for (std::size_t i = 0; i < items.size(); ++i)
      if (py_equal(items[i], a[0])) return Value::integer(static_cast<std::int64_t>(i));
    fail(ErrorKind::value, py_repr(a[0]) + " is not in " + type_name(self));
  }
  if (name == "copy") return call.bind("copy", {}), Value::list(items);
  fail(ErrorKind::type, type_name(self) + "." + name + "() is not available in Day0's template engine");
}

}  // namespace

std::vector<Value> CallArgs::bind(const char* function, std::initializer_list<const char*> params) const {
  std::vector<Value> out(params.size());
  if (args.size() > params.size())
    fail(ErrorKind::type, std::string(function) + "() takes at most " + std::to_string(params.size()) +
                              " argument(s) (" + std::to_string(args.size()) + " given)");
  for (std::size_t i = 0; i < args.size(); ++i) out[i] = args[i];
  for (const auto& [key, value] : kwargs) {
    std::size_t idx = 0;
    bool found = false;
    for (const char* p : params) {
      if (key == p) {
        found = true;
        break;
      }
      ++idx;
    }
    if (!found) fail(ErrorKind::type, std::string(function) + "() got an unexpected keyword argument '" + key + "'");
    if (idx < args.size())
      fail(ErrorKind::type, std::string(function) + "() got multiple values for argument '" + key + "'");
    out[idx] = value;
  }
  return out;
}

std::string BoundMethod::repr() const {
  return "<built-in method " + name + " of " + ::day0::chat_template::type_name(self) + " object>";
}

Value BoundMethod::call(const CallArgs& args) const {
  charge(1);
  if (self.is_string()) return str_method(self, name, args);
  if (self.is_dict()) return dict_method(self, name, args);
  if (self.is_list()) return list_method(self, name, args);
  fail(ErrorKind::type, "cannot call " + name);
}

Value make_bound_method(const Value& self, std::string name) {
  auto m = std::make_shared<BoundMethod>();
  m->self = self;
  m->name = std::move(name);
  return Value::object(Value::Kind::callable, std::move(m));
}

bool has_method(const Value& v, const std::string& name, bool* unsafe) {
  *unsafe = false;
  if (v.is_string()) return in_list(kStrMethods, name);
  if (v.is_dict()) {
    if (in_list(kDictUnsafe, name)) return *unsafe = true;
    return in_list(kDictMethods, name);
  }
  if (v.is_list()) {
    if (v.is_tuple()) return in_list(kTupleMethods, name);
    if (in_list(kListUnsafe, name)) return *unsafe = true;
    return in_list(kListMethods, name);
  }
  return false;
}

std::vector<std::int64_t> slice_positions(std::int64_t length, const Value& start_v, const Value& stop_v,
                                          const Value& step_v) {
  auto index = [](const Value& v) -> std::int64_t {
    if (v.is_int() || v.is_bool()) return v.as_int();
    fail(ErrorKind::type, "slice indices must be integers or None or have an __index__ method");
  };
  const std::int64_t step = step_v.is_none() ? 1 : index(step_v);
  if (step == 0) fail(ErrorKind::value, "slice step cannot be zero");
  const std::int64_t lower = step > 0 ? 0 : -1;
  const std::int64_t upper = step > 0 ? length : length - 1;
  auto adjust = [&](const Value& v, std::int64_t dflt) {
    if (v.is_none()) return dflt;
    std::int64_t x = index(v);
    if (x < 0) {
      x += length;
      if (x < lower) x = lower;
    } else if (x > upper) {
      x = upper;
    }
    return x;
  };
  const std::int64_t start = adjust(start_v, step > 0 ? lower : upper);
  const std::int64_t stop = adjust(stop_v, step > 0 ? upper : lower);
  std::vector<std::int64_t> out;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
  return out;
}

Value get_attr(const Value& obj, const std::string& name) {
  charge(1);
  if (obj.is_undefined()) fail_undefined(obj);
  if (!name.empty() && name[0] == '_') return Value::undefined_unsafe(obj, name);
  bool unsafe = false;
  if (has_method(obj, name, &unsafe)) {
    if (unsafe) return Value::undefined_unsafe(obj, name);
    return make_bound_method(obj, name);
  }
  switch (obj.kind()) {
    case Value::Kind::dict:
      if (const Value* v = obj.dict_data().find(std::string_view(name))) return *v;
      break;
    case Value::Kind::ns:
      if (const Value* v = obj.ns_data().find(name)) return *v;
      break;
    case Value::Kind::list: {
      const auto& fields = obj.list_data().field_names;
      for (std::size_t i = 0; i < fields.size() && i < obj.items().size(); ++i)
        if (fields[i] == name) return obj.items()[i];
      break;
    }
    case Value::Kind::integer:
    case Value::Kind::boolean:
      if (name == "real" || name == "numerator") return Value::integer(obj.as_int());
      if (name == "imag") return Value::integer(0);
      if (name == "denominator") return Value::integer(1);
      break;
    case Value::Kind::floating:
      if (name == "real") return obj;
      if (name == "imag") return Value::floating(0.0);
      break;
    case Value::Kind::callable:
    case Value::Kind::object: {
      Value out;
      if (static_cast<const ObjectBase&>(*obj.heap()).get_attr(name, &out)) return out;
      break;
    }
    default:
      break;
  }
  return Value::undefined_member(obj, name);
}

Value get_item(const Value& obj, const Value& key) {
  charge(1);
  if (obj.is_undefined()) fail_undefined(obj);
  switch (obj.kind()) {
    case Value::Kind::dict:
      if (const Value* v = obj.dict_data().find(key)) return *v;
      break;
    case Value::Kind::list:
    case Value::Kind::string:
    case Value::Kind::iterator: {
      if (!(key.is_int() || key.is_bool())) break;
      if (obj.is_iterator() && !obj.iterator_data().indexable) break;
      const std::int64_t len = py_len(obj);
      std::int64_t i = key.as_int();
      if (i < 0) i += len;
      if (i < 0 || i >= len) return Value::undefined_member(obj, std::to_string(key.as_int()), false);
      if (obj.is_list()) return obj.items()[static_cast<std::size_t>(i)];
      if (obj.is_iterator()) return obj.iterator_data().items[static_cast<std::size_t>(i)];
      const std::string& s = obj.str();
      if (is_ascii(s)) return Value::string(std::string(1, s[static_cast<std::size_t>(i)]), obj.safe());
      const auto cps = decode_utf8(s);
      return Value::string(encode_utf8(cps, static_cast<std::size_t>(i), static_cast<std::size_t>(i) + 1), obj.safe());
    }
    default:
      break;
  }
  if (key.is_string()) {
    const std::string& name = key.str();
    if (!name.empty() && name[0] == '_') return Value::undefined_unsafe(obj, name);
    bool unsafe = false;
    if (has_method(obj, name, &unsafe)) {
      if (unsafe) return Value::undefined_unsafe(obj, name);
      return make_bound_method(obj, name);
    }
    if (obj.is_ns()) {
      if (const Value* v = obj.ns_data().find(name)) return *v;
    }
    if (obj.kind() == Value::Kind::object || obj.kind() == Value::Kind::callable) {
      Value out;
      if (static_cast<const ObjectBase&>(*obj.heap()).get_attr(name, &out)) return out;
    }
    return Value::undefined_member(obj, name);
  }
  return Value::undefined_member(obj, py_repr(key), false);
}

Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  charge(1);
  if (obj.is_undefined()) fail_undefined(obj);
  for (const Value* v : {&start, &stop, &step})
    if (v->is_undefined()) fail(ErrorKind::type, "slice indices must be integers or None or have an __index__ method");
  if (obj.is_list()) {
    const auto& items = obj.items();
    std::vector<Value> out;
    for (const auto i : slice_positions(static_cast<std::int64_t>(items.size()), start, stop, step))
      out.push_back(items[static_cast<std::size_t>(i)]);
    return obj.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
  }
  if (obj.is_string()) {
    const std::string& s = obj.str();
    std::string out;
    if (is_ascii(s)) {
      for (const auto i : slice_positions(static_cast<std::int64_t>(s.size()), start, stop, step))
        out += s[static_cast<std::size_t>(i)];
    } else {
      const auto cps = decode_utf8(s);
      for (const auto i : slice_positions(static_cast<std::int64_t>(cps.size()), start, stop, step))
        append_utf8(out, cps[static_cast<std::size_t>(i)]);
    }
    return Value::string(std::move(out), obj.safe());
  }
  if (obj.is_iterator() && obj.iterator_data().indexable) {
    const auto& items = obj.iterator_data().items;
    std::vector<Value> out;
    for (const auto i : slice_positions(static_cast<std::int64_t>(items.size()), start, stop, step))
      out.push_back(items[static_cast<std::size_t>(i)]);
    return Value::list(std::move(out));
  }
  // jinja2 slices with Python's own subscription (not environment.getitem), so a value that
  // cannot be sliced raises instead of giving Undefined.
  if (obj.is_dict()) fail(ErrorKind::type, "unhashable type: 'slice'");
  fail(ErrorKind::type, repr_string(type_name(obj)) + " object is not subscriptable");
}

}  // namespace day0::chat_template
