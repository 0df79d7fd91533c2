// jinja2's builtin filters and tests (jinja2 3.1 semantics, autoescape off, as transformers
// configures it) plus transformers' tojson.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "chat_template/builtins.h"
#include "chat_template/objects.h"
#include "chat_template/unicode.h"

namespace day0::chat_template {

namespace {

const char* const kFilters[] = {"abs",    "attr",       "batch",       "capitalize", "center",   "count",
                                "d",      "default",    "dictsort",    "e",          "escape",   "filesizeformat",
                                "first",  "float",      "forceescape", "format",     "groupby",  "indent",
                                "int",    "items",      "join",        "last",       "length",   "list",
                                "lower",  "map",        "max",         "min",        "pprint",   "random",
                                "reject", "rejectattr", "replace",     "reverse",    "round",    "safe",
                                "select", "selectattr", "slice",       "sort",       "string",   "striptags",
                                "sum",    "title",      "tojson",      "trim",       "truncate", "unique",
                                "upper",  "urlencode",  "urlize",      "wordcount",  "wordwrap", "xmlattr"};

const char* const kTests[] = {
    "boolean",  "callable", "defined",  "divisibleby", "eq",          "equalto", "escaped", "even",
    "false",    "filter",   "float",    "ge",          "greaterthan", "gt",      "in",      "integer",
    "iterable", "le",       "lessthan", "lower",       "lt",          "mapping", "ne",      "none",
    "number",   "odd",      "sameas",   "sequence",    "string",      "test",    "true",    "undefined",
    "upper",    "==",       "!=",       ">",           ">=",          "<",       "<="};

// soft_str: Markup stays Markup, everything else becomes str(value).
Value soft_str(const Value& v) {
  if (v.is_string()) return v;
  return Value::string(py_str(v));
}

// make_attrgetter: "a.b.0" walks environment.getitem; a missing step gives `dflt` when set.
Value attr_path(const Value& item, const Value& attribute, const Value& dflt) {
  Value cur = item;
  if (attribute.is_int()) {
    cur = get_item(cur, attribute);
  } else {
    const std::string path = py_str(attribute);
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = path.find('.', start);
      const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      const bool numeric =
          !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
      cur = get_item(cur, numeric ? Value::integer(std::stoll(part)) : Value::string(part));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  }
  if (cur.is_undefined() && !dflt.is_undefined()) return dflt;
  return cur;
}

// Sort key: strings lower-cased unless case_sensitive.
Value ignore_case(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(py_lower(v.str()));
  return v;
}

CallArgs rest_args(const CallArgs& in, std::size_t skip) {
  CallArgs out;
  for (std::size_t i = skip; i < in.args.size(); ++i) out.args.push_back(in.args[i]);
  out.kwargs = in.kwargs;
  return out;
}

bool test_or_truth(const CallArgs& args, std::size_t name_at, const Value& v) {
  if (args.args.size() <= name_at) return truthy(v);
  const Value& name = args.args[name_at];
  return call_test(py_str(name), v, rest_args(args, name_at + 1));
}

Value select_reject(const Value& input, const CallArgs& args, bool select, bool by_attr) {
  std::vector<Value> out;
  // jinja2 yields nothing for a falsy input (None included) without iterating it.
  if (!truthy(input)) return Value::generator({});
  const std::size_t test_at = by_attr ? 1 : 0;
  if (by_attr && args.args.empty()) fail(ErrorKind::runtime, "Missing parameter for attribute name");
  for (const Value& item : iterate(input)) {
    const Value probe = by_attr ? attr_path(item, args.args[0], Value()) : item;
    if (test_or_truth(args, test_at, probe) == select) out.push_back(item);
  }
  return Value::generator(std::move(out));
}

std::vector<Value> sorted_values(std::vector<Value> items, bool reverse, bool case_sensitive, const Value& attribute) {
  std::vector<std::pair<Value, Value>> keyed;
  keyed.reserve(items.size());
  for (auto& v : items) {
    Value key = attribute.is_undefined() || attribute.is_none() ? v : attr_path(v, attribute, Value());
    keyed.emplace_back(ignore_case(key, case_sensitive), std::move(v));
  }
  charge(keyed.size());
  std::stable_sort(keyed.begin(), keyed.end(), [reverse](const auto& a, const auto& b) {
    return reverse ? py_compare(b.first, a.first, "<") < 0 : py_compare(a.first, b.first, "<") < 0;
  });
  std::vector<Value> out;
  out.reserve(keyed.size());
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return out;
}

double to_double(const Value& v, bool* ok) {
  *ok = true;
  if (v.is_number()) return v.as_double();
  if (v.is_undefined()) fail_undefined(v);
  if (v.is_string()) {
    std::string s = v.str();
    const auto cps = decode_utf8(s);
    std::size_t b = 0, e = cps.size();
    while (b < e && py_isspace(cps[b])) ++b;
    while (e > b && py_isspace(cps[e - 1])) --e;
    s = encode_utf8(cps, b, e);
    std::string cleaned;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '_' && i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
          std::isdigit(static_cast<unsigned char>(s[i + 1])))
        continue;
      cleaned += s[i];
    }
    const std::string low = py_lower(cleaned);
    const std::string body = (!low.empty() && (low[0] == '+' || low[0] == '-')) ? low.substr(1) : low;
    const bool neg = !low.empty() && low[0] == '-';
    if (body == "inf" || body == "infinity") return neg ? -INFINITY : INFINITY;
    if (body == "nan") return NAN;
    if (!body.empty() && std::all_of(body.begin(), body.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' || c == '-';
        })) {
      char* end = nullptr;
      const double d = std::strtod(cleaned.c_str(), &end);
      if (end && *end == '\0' && end != cleaned.c_str()) return d;
    }
  }
  *ok = false;
  return 0.0;
}

bool parse_int(const std::string& text, int base, std::int64_t* out) {
  const auto cps = decode_utf8(text);
  std::size_t b = 0, e = cps.size();
  while (b < e && py_isspace(cps[b])) ++b;
  while (e > b && py_isspace(cps[e - 1])) --e;
  std::string s = encode_utf8(cps, b, e);
  bool neg = false;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (base == 0 || base == 16 || base == 8 || base == 2) {
    if (i + 1 < s.size() && s[i] == '0') {
      const char k = static_cast<char>(s[i + 1] | 0x20);
      const int prefixed = k == 'x' ? 16 : k == 'o' ? 8 : k == 'b' ? 2 : 0;
      if (prefixed && (base == 0 || base == prefixed)) {
        base = prefixed;
        i += 2;
      }
    }
    if (base == 0) base = 10;
  }
  if (base < 2 || base > 36 || i >= s.size()) return false;
  std::uint64_t v = 0;
  bool any = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_' && any && i + 1 < s.size()) continue;
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') d = (c | 0x20) - 'a' + 10;
    if (d < 0 || d >= base) return false;
    if (v > (static_cast<std::uint64_t>(INT64_MAX) + 1 - static_cast<unsigned>(d)) / static_cast<unsigned>(base))
      return false;
    v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    any = true;
  }
  if (!any) return false;
  if (!neg && v > static_cast<std::uint64_t>(INT64_MAX)) return false;
  *out = neg ? -static_cast<std::int64_t>(v - 1) - 1 : static_cast<std::int64_t>(v);
  return true;
}

Value do_round(const Value& value, const Value& precision_v, const Value& method_v) {
  const std::int64_t precision = precision_v.is_undefined() ? 0 : precision_v.as_int();
  const std::string method = method_v.is_undefined() ? "common" : py_str(method_v);
  if (method != "common" && method != "ceil" && method != "floor")
    fail(ErrorKind::runtime, "method must be common, ceil or floor");
  if (value.is_undefined()) fail(ErrorKind::type, "type Undefined doesn't define __round__ method");
  if (!value.is_number()) fail(ErrorKind::type, "type " + type_name(value) + " doesn't define __round__ method");
  if (method == "common") {
    if (!value.is_float()) return Value::integer(value.as_int());
    const double d = value.as_double();
    if (std::isinf(d) || std::isnan(d)) return value;
    if (precision > 300 || precision < -300) return value;
    if (precision >= 0) {
      char buf[512];
      std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(precision), d);
      return Value::floating(std::strtod(buf, nullptr));
    }
    const double scale = std::pow(10.0, static_cast<double>(-precision));
    return Value::floating(std::nearbyint(d / scale) * scale);
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = value.as_double() * scale;
  return Value::floating((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
}

std::string do_indent(const Value& input, const Value& width_v, bool first, bool blank) {
  if (input.is_undefined()) fail_undefined(input);
  // jinja2 appends "\n" to the value itself and calls splitlines(): only strings get through.
  if (input.is_list() && !input.is_tuple()) fail(ErrorKind::type, "'list' object has no attribute 'splitlines'");
  if (!input.is_string())
    fail(ErrorKind::type, "unsupported operand type(s) for +=: '" + type_name(input) + "' and 'str'");
  std::string indention;
  if (width_v.is_undefined()) {
    indention = "    ";
  } else if (width_v.is_string()) {
    indention = width_v.str();
  } else {
    const std::int64_t w = width_v.as_int();
    check_size(w > 0 ? static_cast<std::size_t>(w) : 0);
    indention = std::string(w > 0 ? static_cast<std::size_t>(w) : 0, ' ');
  }
  const std::string s = py_str(input) + "\n";
  CallArgs none;
  const Value lines_v = get_attr(Value::string(s), "splitlines");
  std::vector<Value> lines = iterate(call_builtin(lines_v, none));
  std::string rv;
  if (blank) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + indention;
      rv += lines[i].str();
    }
  } else {
    rv = lines.empty() ? "" : lines[0].str();
    if (lines.size() > 1) {
      rv += "\n";
      for (std::size_t i = 1; i < lines.size(); ++i) {
        if (i > 1) rv += "\n";
        if (!lines[i].str().empty()) rv += indention;
        rv += lines[i].str();
      }
    }
  }
  if (first) rv = indention + rv;
  return rv;
}

std::string url_quote(const std::string& s, bool for_qs) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~' || (!for_qs && c == '/')) {
      out += ch;
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  if (for_qs) {
    std::string r;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out.compare(i, 3, "%20") == 0) {
        r += '+';
        i += 2;
      } else {
        r += out[i];
      }
    }
    return r;
  }
  return out;
}

std::string strip_tags(const std::string& s) {
  std::string text;
  std::size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, 4, "<!--") == 0) {
      const std::size_t e = s.find("-->", i + 4);
      if (e == std::string::npos) break;
      i = e + 3;
    } else if (s[i] == '<') {
      const std::size_t e = s.find('>', i + 1);
      if (e == std::string::npos) {
        text += s.substr(i);
        break;
      }
      i = e + 1;
    } else {
      text += s[i++];
    }
  }
  std::string collapsed;
  for (const char32_t c : decode_utf8(text)) {
    if (py_isspace(c)) {
      if (!collapsed.empty() && collapsed.back() != ' ') collapsed += ' ';
    } else {
      append_utf8(collapsed, c);
    }
  }
  while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
  static const char* const kEntities[][2] = {{"&amp;", "&"},   {"&lt;", "<"},  {"&gt;", ">"},         {"&#34;", "\""},
                                             {"&quot;", "\""}, {"&#39;", "'"}, {"&nbsp;", "\xc2\xa0"}};
  std::string out;
  for (std::size_t k = 0; k < collapsed.size();) {
    bool replaced = false;
    for (const auto& e : kEntities) {
      const std::size_t n = std::strlen(e[0]);
      if (collapsed.compare(k, n, e[0]) == 0) {
        out += e[1];
        k += n;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += collapsed[k++];
  }
  return out;
}

Value min_max(const Value& input, const CallArgs& args, bool is_max) {
  const auto a = args.bind(is_max ? "max" : "min", {"case_sensitive", "attribute"});
  const bool case_sensitive = truthy(a[0]);
  std::vector<Value> items = iterate(input);
  if (items.empty()) return Value::undefined_with_message("", "No aggregated item, sequence was empty.");
  std::size_t best = 0;
  auto key = [&](const Value& v) {
    return ignore_case(a[1].is_undefined() || a[1].is_none() ? v : attr_path(v, a[1], Value()), case_sensitive);
  };
  for (std::size_t i = 1; i < items.size(); ++i) {
    const int c = py_compare(key(items[i]), key(items[best]), "<");
    if (is_max ? c > 0 : c < 0) best = i;
  }
  return items[best];
}

Value filter_impl(std::string_view name, const Value& in, const CallArgs& args) {
  if (name == "default" || name == "d") {
    const auto a = args.bind("default", {"default_value", "boolean"});
    if (in.is_undefined() || (truthy(a[1]) && !truthy(in))) return a[0].is_undefined() ? Value::string("") : a[0];
    return in;
  }
  if (name == "length" || name == "count") return args.bind("length", {}), Value::integer(py_len(in));
  if (name == "tojson") {
    const auto a = args.bind("tojson", {"ensure_ascii", "indent", "separators", "sort_keys"});
    return Value::string(json_dumps(in, a[0].is_undefined() ? false : truthy(a[0]),
                                    a[1].is_undefined() ? Value::none() : a[1],
                                    a[2].is_undefined() ? Value::none() : a[2], truthy(a[3])));
  }
  if (name == "trim") {
    const auto a = args.bind("trim", {"chars"});
    const Value s = soft_str(in);
    return call_builtin(get_attr(s, "strip"), CallArgs{{a[0].is_undefined() ? Value::none() : a[0]}, {}});
  }
  if (name == "upper") return args.bind("upper", {}), Value::string(py_upper(py_str(in)), in.safe());
  if (name == "lower") return args.bind("lower", {}), Value::string(py_lower(py_str(in)), in.safe());
  if (name == "capitalize") return args.bind("capitalize", {}), call_builtin(get_attr(soft_str(in), "capitalize"), {});
  if (name == "title") {
    args.bind("title", {});
    // Words start after whitespace, '-', '(', '{', '[', '<'.
    std::string out;
    bool start = true;
    for (const char32_t c : decode_utf8(py_str(in))) {
      const bool sep = py_isspace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
      if (sep) {
        append_utf8(out, c);
        start = true;
      } else {
        append_utf8(out, start ? py_to_upper(c) : py_to_lower(c));
        start = false;
      }
    }
    return Value::string(std::move(out), in.safe());
  }
  if (name == "replace") {
    const auto a = args.bind("replace", {"old", "new", "count"});
    const Value s = Value::string(py_str(in));
    const Value count = a[2].is_undefined() || a[2].is_none() ? Value::integer(-1) : a[2];
    return call_builtin(get_attr(s, "replace"),
                        CallArgs{{Value::string(py_str(a[0])), Value::string(py_str(a[1])), count}, {}});
  }
  if (name == "string") return args.bind("string", {}), soft_str(in);
  if (name == "list") return args.bind("list", {}), Value::list(iterate(in));
  if (name == "join") {
    const auto a = args.bind("join", {"d", "attribute"});
    std::string out;
    const std::string sep = a[0].is_undefined() ? "" : py_str(a[0]);
    bool first = true;
    for (const Value& item : iterate(in)) {
      if (!first) out += sep;
      first = false;
      out += py_str(a[1].is_undefined() || a[1].is_none() ? item : attr_path(item, a[1], Value()));
      check_size(out.size());
    }
    return Value::string(std::move(out));
  }
  if (name == "items") {
    args.bind("items", {});
    if (in.is_undefined()) return Value::generator({});
    if (!in.is_dict()) fail(ErrorKind::type, "Can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& [k, v] : in.dict_data().entries) out.push_back(Value::tuple({k, v}));
    return Value::generator(std::move(out));
  }
  if (name == "dictsort") {
    const auto a = args.bind("dictsort", {"case_sensitive", "by", "reverse"});
    if (in.is_undefined()) fail_undefined(in);
    if (!in.is_dict()) fail(ErrorKind::undefined, repr_string(object_type_repr(in)) + " has no attribute 'items'");
    const std::string by = a[1].is_undefined() ? "key" : py_str(a[1]);
    if (by != "key" && by != "value") fail(ErrorKind::runtime, "You can only sort by either \"key\" or \"value\"");
    std::vector<Value> pairs;
    for (const auto& [k, v] : in.dict_data().entries) pairs.push_back(Value::tuple({k, v}));
    return Value::list(
        sorted_values(std::move(pairs), truthy(a[2]), truthy(a[0]), Value::integer(by == "key" ? 0 : 1)));
  }
  if (name == "first") {
    args.bind("first", {});
    const auto items = iterate(in);
    if (items.empty()) return Value::undefined_with_message("", "No first item, sequence was empty.");
    return items.front();
  }
  if (name == "last") {
    args.bind("last", {});
    if (in.is_iterator() && !in.iterator_data().indexable && in.iterator_data().type_name == "generator")
      fail(ErrorKind::type, "'generator' object is not reversible");
    const auto items = iterate(in);
    if (items.empty()) return Value::undefined_with_message("", "No last item, sequence was empty.");
    return items.back();
  }
  if (name == "int") {
    const auto a = args.bind("int", {"default", "base"});
    const Value dflt = a[0].is_undefined() ? Value::integer(0) : a[0];
    if (in.is_undefined()) fail_undefined(in);
    if (in.is_string()) {
      std::int64_t v;
      if (parse_int(in.str(), a[1].is_undefined() ? 10 : static_cast<int>(a[1].as_int()), &v)) return Value::integer(v);
    } else if (in.is_int() || in.is_bool()) {
      return Value::integer(in.as_int());
    } else if (in.is_float()) {
      const double d = in.as_double();
      if (std::isnan(d) || std::isinf(d)) return dflt;
      if (std::fabs(d) >= 9.2e18) fail(ErrorKind::overflow, "integer result out of range");
      return Value::integer(static_cast<std::int64_t>(std::trunc(d)));
    }
    bool ok;
    const double d = to_double(in, &ok);
    if (ok && !std::isnan(d) && !std::isinf(d) && std::fabs(d) < 9.2e18)
      return Value::integer(static_cast<std::int64_t>(std::trunc(d)));
    return dflt;
  }
  if (name == "float") {
    const auto a = args.bind("float", {"default"});
    bool ok;
    const double d = to_double(in, &ok);
    if (ok) return Value::floating(d);
    return a[0].is_undefined() ? Value::floating(0.0) : a[0];
  }
  if (name == "abs") {
    args.bind("abs", {});
    if (!in.is_number()) fail(ErrorKind::type, "bad operand type for abs(): '" + type_name(in) + "'");
    if (in.is_float()) return Value::floating(std::fabs(in.as_double()));
    if (in.as_int() == INT64_MIN) fail(ErrorKind::overflow, "integer result out of range");
    return Value::integer(in.as_int() < 0 ? -in.as_int() : in.as_int());
  }
  if (name == "round") {
    const auto a = args.bind("round", {"precision", "method"});
    return do_round(in, a[0], a[1]);
  }
  if (name == "sort") {
    const auto a = args.bind("sort", {"reverse", "case_sensitive", "attribute"});
    return Value::list(sorted_values(iterate(in), truthy(a[0]), truthy(a[1]), a[2]));
  }
  if (name == "unique") {
    const auto a = args.bind("unique", {"case_sensitive", "attribute"});
    std::vector<Value> out, seen;
    for (const Value& item : iterate(in)) {
      const Value key =
          ignore_case(a[1].is_undefined() || a[1].is_none() ? item : attr_path(item, a[1], Value()), truthy(a[0]));
      bool dup = false;
      for (const auto& s : seen)
        if (py_equal(s, key)) dup = true;
      charge(seen.size() / 16);
      if (!dup) {
        seen.push_back(key);
        out.push_back(item);
      }
    }
    return Value::generator(std::move(out));
  }
  if (name == "reverse") {
    args.bind("reverse", {});
    if (in.is_string()) {
      auto cps = decode_utf8(in.str());
      std::reverse(cps.begin(), cps.end());
      return Value::string(encode_utf8(cps, 0, cps.size()), in.safe());
    }
    auto items = iterate(in);
    std::reverse(items.begin(), items.end());
    if (in.is_list() || (in.is_iterator() && in.iterator_data().indexable) || in.is_dict()) {
      auto it = std::make_shared<IteratorData>();
      it->type_name = in.is_dict()                     ? "dict_reversekeyiterator"
                      : in.is_list() && !in.is_tuple() ? "list_reverseiterator"
                                                       : "reversed";
      it->items = std::move(items);
      it->repr = "<" + it->type_name + " object>";
      return Value::iterator(std::move(it));
    }
    return Value::list(std::move(items));
  }
  if (name == "map") {
    std::vector<Value> out;
    if (!truthy(in)) return Value::generator({});
    const auto items = iterate(in);
    if (args.args.empty()) {
      Value attribute, dflt;
      for (const auto& [k, v] : args.kwargs) {
        if (k == "attribute") {
          attribute = v;
        } else if (k == "default") {
          dflt = v;
        } else {
          fail(ErrorKind::runtime, "Unexpected keyword argument '" + k + "'");
        }
      }
      if (attribute.is_undefined()) fail(ErrorKind::runtime, "map requires a filter argument");
      for (const Value& item : items) out.push_back(attr_path(item, attribute, dflt));
    } else {
      const std::string filter = py_str(args.args[0]);
      const CallArgs rest = rest_args(args, 1);
      for (const Value& item : items) out.push_back(call_filter(filter, item, rest));
    }
    return Value::generator(std::move(out));
  }
  if (name == "select") return select_reject(in, args, true, false);
  if (name == "reject") return select_reject(in, args, false, false);
  if (name == "selectattr") return select_reject(in, args, true, true);
  if (name == "rejectattr") return select_reject(in, args, false, true);
  if (name == "batch" || name == "slice") {
    const auto a = args.bind(name == "batch" ? "batch" : "slice", {"count", "fill_with"});
    const std::int64_t n = a[0].as_int();
    const auto items = iterate(in);
    std::vector<Value> out;
    if (name == "batch") {
      if (n <= 0) fail(ErrorKind::value, "batch size must be positive");
      std::vector<Value> tmp;
      for (const Value& item : items) {
        if (static_cast<std::int64_t>(tmp.size()) == n) {
          out.push_back(Value::list(std::move(tmp)));
          tmp.clear();
        }
        tmp.push_back(item);
      }
      if (!tmp.empty()) {
        if (!a[1].is_undefined() && !a[1].is_none())
          while (static_cast<std::int64_t>(tmp.size()) < n) tmp.push_back(a[1]);
        out.push_back(Value::list(std::move(tmp)));
      }
    } else {
      if (n <= 0) fail(ErrorKind::zero_division, "integer division or modulo by zero");
      const std::int64_t len = static_cast<std::int64_t>(items.size());
      const std::int64_t per = len / n, extra = len % n;
      std::int64_t offset = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t start = offset + i * per;
        if (i < extra) ++offset;
        const std::int64_t end = offset + (i + 1) * per;
        std::vector<Value> tmp(items.begin() + start, items.begin() + end);
        if (!a[1].is_undefined() && !a[1].is_none() && i >= extra) tmp.push_back(a[1]);
        out.push_back(Value::list(std::move(tmp)));
      }
    }
    return Value::generator(std::move(out));
  }
  if (name == "sum") {
    const auto a = args.bind("sum", {"attribute", "start"});
    Value total = a[1].is_undefined() ? Value::integer(0) : a[1];
    for (const Value& item : iterate(in))
      total = binary_op("+", total, a[0].is_undefined() || a[0].is_none() ? item : attr_path(item, a[0], Value()));
    return total;
  }
  if (name == "max" || name == "min") return min_max(in, args, name == "max");
  if (name == "indent") {
    const auto a = args.bind("indent", {"width", "first", "blank"});
    return Value::string(do_indent(in, a[0], truthy(a[1]), truthy(a[2])), in.safe());
  }
  if (name == "safe") return args.bind("safe", {}), Value::string(py_str(in), true);
  if (name == "escape" || name == "e" || name == "forceescape") {
    args.bind(std::string(name).c_str(), {});
    if (in.safe() && name != "forceescape") return in;
    return Value::string(html_escape(py_str(in)), true);
  }
  if (name == "format") {
    if (!args.args.empty() && !args.kwargs.empty())
      fail(ErrorKind::runtime, "can't handle positional and keyword arguments at the same time");
    Value fmt_args;
    if (!args.kwargs.empty()) {
      DictData d;
      for (const auto& [k, v] : args.kwargs) d.set(Value::string(k), v);
      fmt_args = Value::dict(std::move(d));
    } else {
      fmt_args = Value::tuple(args.args);
    }
    return Value::string(percent_format(py_str(in), fmt_args), in.safe());
  }
  if (name == "attr") {
    const auto a = args.bind("attr", {"name"});
    const std::string attr = py_str(a[0]);
    if (in.is_undefined()) fail_undefined(in);
    bool unsafe = false;
    if (!attr.empty() && attr[0] == '_') return Value::undefined_unsafe(in, attr);
    if (has_method(in, attr, &unsafe)) return unsafe ? Value::undefined_unsafe(in, attr) : make_bound_method(in, attr);
    if (in.is_ns()) {
      if (const Value* v = in.ns_data().find(attr)) return *v;
    }
    if (in.kind() == Value::Kind::object || in.kind() == Value::Kind::callable) {
      Value out;
      if (static_cast<const ObjectBase&>(*in.heap()).get_attr(attr, &out)) return out;
    }
    return Value::undefined_member(in, attr);
  }
  if (name == "wordcount") {
    args.bind("wordcount", {});
    std::int64_t n = 0;
    bool in_word = false;
    for (const char32_t c : decode_utf8(py_str(in))) {
      const bool w = py_isalnum(c) || c == '_';
      if (w && !in_word) ++n;
      in_word = w;
    }
    return Value::integer(n);
  }
  if (name == "center") {
    const auto a = args.bind("center", {"width"});
    return call_builtin(get_attr(Value::string(py_str(in)), "center"),
                        CallArgs{{a[0].is_undefined() ? Value::integer(80) : a[0]}, {}});
  }
  if (name == "truncate") {
    const auto a = args.bind("truncate", {"length", "killwords", "end", "leeway"});
    const std::int64_t length = a[0].is_undefined() ? 255 : a[0].as_int();
    const std::string end = a[2].is_undefined() ? "..." : py_str(a[2]);
    const std::int64_t leeway = a[3].is_undefined() || a[3].is_none() ? 5 : a[3].as_int();
    const std::int64_t end_len = static_cast<std::int64_t>(utf8_length(end));
    if (length < end_len)
      fail(ErrorKind::runtime, "expected length >= " + std::to_string(end_len) + ", got " + std::to_string(length));
    // jinja2 measures the value itself (no str()): short values come back unchanged.
    if (py_len(in) <= length + leeway) return in;
    if (!in.is_string())
      fail(ErrorKind::type, "can only concatenate " + type_name(in) + " (not \"str\") to " + type_name(in));
    const auto cps = decode_utf8(in.str());
    std::string head = encode_utf8(cps, 0, static_cast<std::size_t>(length - end_len));
    if (!truthy(a[1])) {
      const std::size_t sp = head.rfind(' ');
      if (sp != std::string::npos) head = head.substr(0, sp);
    }
    return Value::string(head + end);
  }
  if (name == "filesizeformat") {
    const auto a = args.bind("filesizeformat", {"binary"});
    bool ok;
    const double bytes = to_double(in, &ok);
    if (!ok) fail(ErrorKind::value, "could not convert string to float");
    const bool binary = truthy(a[0]);
    const double base = binary ? 1024 : 1000;
    static const char* const kDec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static const char* const kBin[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    if (bytes == 1) return Value::string("1 Byte");
    if (bytes < base) return Value::string(std::to_string(static_cast<std::int64_t>(bytes)) + " Bytes");
    char buf[64];
    double unit = base;
    for (int i = 0; i < 8; ++i) {
      unit = std::pow(base, i + 2);
      if (bytes < unit || i == 7) {
        std::snprintf(buf, sizeof buf, "%.1f %s", base * bytes / unit, binary ? kBin[i] : kDec[i]);
        break;
      }
    }
    return Value::string(buf);
  }
  if (name == "urlencode") {
    args.bind("urlencode", {});
    if (in.is_string()) return Value::string(url_quote(in.str(), false));
    std::string out;
    std::vector<Value> pairs;
    if (in.is_dict()) {
      for (const auto& [k, v] : in.dict_data().entries) pairs.push_back(Value::tuple({k, v}));
    } else {
      pairs = iterate(in);
    }
    for (const Value& p : pairs) {
      const auto kv = iterate(p);
      if (kv.size() != 2) fail(ErrorKind::value, "urlencode expects pairs");
      if (!out.empty()) out += '&';
      out += url_quote(py_str(kv[0]), true) + "=" + url_quote(py_str(kv[1]), true);
    }
    return Value::string(out);
  }
  if (name == "striptags") return args.bind("striptags", {}), Value::string(strip_tags(py_str(in)));
  if (name == "pprint") return args.bind("pprint", {}), Value::string(py_repr(in));
  if (name == "groupby") {
    const auto a = args.bind("groupby", {"attribute", "default", "case_sensitive"});
    const bool cs = truthy(a[2]);
    std::vector<std::pair<Value, Value>> keyed;
    for (const Value& item : iterate(in)) keyed.emplace_back(attr_path(item, a[0], a[1]), item);
    std::stable_sort(keyed.begin(), keyed.end(), [cs](const auto& x, const auto& y) {
      return py_compare(ignore_case(x.first, cs), ignore_case(y.first, cs), "<") < 0;
    });
    std::vector<Value> groups;
    for (std::size_t i = 0; i < keyed.size();) {
      std::size_t j = i;
      std::vector<Value> members;
      while (j < keyed.size() && py_equal(ignore_case(keyed[j].first, cs), ignore_case(keyed[i].first, cs)))
        members.push_back(keyed[j++].second);
      auto data = std::make_shared<ListData>();
      data->items = {keyed[i].first, Value::list(std::move(members))};
      for (const Value& item : data->items) note_child(*data, item);
      data->is_tuple = true;
      data->field_names = {"grouper", "list"};
      groups.push_back(Value::object(Value::Kind::list, data));
      i = j;
    }
    return Value::list(std::move(groups));
  }
  fail(ErrorKind::runtime, "the filter '" + std::string(name) + "' is not available in Day0's template engine");
}

bool is_sequence(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::string:
    case Value::Kind::list:
    case Value::Kind::dict:
      return true;
    case Value::Kind::iterator:
      return v.iterator_data().has_len && v.iterator_data().indexable;
    default:
      return false;
  }
}

bool is_callable(const Value& v) {
  if (v.is_undefined()) return true;
  if (v.kind() == Value::Kind::callable) return true;
  if (v.kind() == Value::Kind::object) return static_cast<const ObjectBase&>(*v.heap()).type_name() == "LoopContext";
  return false;
}

bool test_impl(std::string_view name, const Value& v, const CallArgs& args) {
  auto arg = [&](const char* fn) {
    const auto a = args.bind(fn, {"other"});
    return a[0];
  };
  if (name == "defined") return args.bind("defined", {}), !v.is_undefined();
  if (name == "undefined") return args.bind("undefined", {}), v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "sequence") return is_sequence(v);
  if (name == "iterable") {
    switch (v.kind()) {
      case Value::Kind::undefined:
      case Value::Kind::string:
      case Value::Kind::list:
      case Value::Kind::dict:
      case Value::Kind::iterator:
        return true;
      default:
        return false;
    }
  }
  if (name == "callable") return is_callable(v);
  if (name == "escaped") return v.safe();
  if (name == "lower" || name == "upper") {
    const Value s = Value::string(py_str(v));
    return truthy(call_builtin(get_attr(s, name == "lower" ? "islower" : "isupper"), {}));
  }
  if (name == "even" || name == "odd") {
    const Value r = binary_op("%", v, Value::integer(2));
    return name == "even" ? py_equal(r, Value::integer(0)) : py_equal(r, Value::integer(1));
  }
  if (name == "divisibleby") {
    const auto a = args.bind("divisibleby", {"num"});
    return py_equal(binary_op("%", v, a[0]), Value::integer(0));
  }
  if (name == "eq" || name == "equalto" || name == "==") return py_equal(v, arg("eq"));
  if (name == "ne" || name == "!=") return !py_equal(v, arg("ne"));
  if (name == "gt" || name == "greaterthan" || name == ">") return py_compare(v, arg("gt"), ">") > 0;
  if (name == "ge" || name == ">=") return py_compare(v, arg("ge"), ">=") >= 0;
  if (name == "lt" || name == "lessthan" || name == "<") return py_compare(v, arg("lt"), "<") < 0;
  if (name == "le" || name == "<=") return py_compare(v, arg("le"), "<=") <= 0;
  if (name == "in") {
    const auto a = args.bind("in", {"seq"});
    return py_in(v, a[0]);
  }
  if (name == "sameas") {
    const Value other = arg("sameas");
    if (v.is_list() || v.is_dict() || v.is_ns() || v.is_iterator()) return v.heap() == other.heap();
    return v.kind() == other.kind() && py_equal(v, other);
  }
  if (name == "filter") return v.is_string() && has_filter(v.str());
  if (name == "test") return v.is_string() && has_test(v.str());
  fail(ErrorKind::runtime, "the test '" + std::string(name) + "' is not available in Day0's template engine");
}

}  // namespace

bool has_filter(std::string_view name) {
  for (const char* f : kFilters)
    if (name == f) return true;
  return false;
}

bool has_test(std::string_view name) {
  for (const char* t : kTests)
    if (name == t) return true;
  return false;
}

Value call_filter(std::string_view name, const Value& input, const CallArgs& args) {
  charge(1);
  if (!has_filter(name)) fail(ErrorKind::runtime, "No filter named '" + std::string(name) + "' found.");
  return filter_impl(name, input, args);
}

bool call_test(std::string_view name, const Value& input, const CallArgs& args) {
  charge(1);
  if (!has_test(name)) fail(ErrorKind::runtime, "No test named '" + std::string(name) + "' found.");
  return test_impl(name, input, args);
}

}  // namespace day0::chat_template
