// Python's text formatting as templates reach it: json.dumps (transformers' tojson),
// markupsafe.escape, printf-style `%` and str.format.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "chat_template/builtins.h"
#include "chat_template/unicode.h"

namespace day0::chat_template {

namespace {

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  auto hex4 = [&out](unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", v);
    out += buf;
  };
  auto ascii = [&](unsigned char c) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          hex4(c);
        } else {
          out += static_cast<char>(c);
        }
    }
  };
  if (!ensure_ascii || is_ascii(s)) {
    for (const char ch : s) ascii(static_cast<unsigned char>(ch));
  } else {
    for (const char32_t c : decode_utf8(s)) {
      if (c < 0x80) {
        ascii(static_cast<unsigned char>(c));
      } else if (c < 0x10000) {
        hex4(c);
      } else {
        const char32_t v = c - 0x10000;
        hex4(0xD800 + (v >> 10));
        hex4(0xDC00 + (v & 0x3FF));
      }
    }
  }
  out += '"';
}

std::string json_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return float_repr(d);
}

struct JsonWriter {
  bool ensure_ascii;
  bool pretty;
  std::string indent;
  std::string item_sep;
  std::string key_sep;
  bool sort_keys;
  std::string out;

  void newline(int level) {
    out += '\n';
    for (int i = 0; i < level; ++i) out += indent;
  }

  std::string key_of(const Value& k) {
    if (k.is_string()) return k.str();
    if (k.is_bool()) return k.as_bool() ? "true" : "false";
    if (k.is_int()) return std::to_string(k.as_int());
    if (k.is_float()) return json_float(k.as_double());
    if (k.is_none()) return "null";
    fail(ErrorKind::type, "keys must be str, int, float, bool or None, not " + type_name(k));
  }

  void write(const Value& v, int level) {
    charge(1);
    if (level > 512) fail(ErrorKind::value, "the value nests too deeply to serialize");
    check_size(out.size());
    switch (v.kind()) {
      case Value::Kind::none:
        out += "null";
        return;
      case Value::Kind::boolean:
        out += v.as_bool() ? "true" : "false";
        return;
      case Value::Kind::integer:
        out += std::to_string(v.as_int());
        return;
      case Value::Kind::floating:
        out += json_float(v.as_double());
        return;
      case Value::Kind::string:
        json_string(out, v.str(), ensure_ascii);
        return;
      case Value::Kind::list: {
        const auto& items = v.items();
        if (items.empty()) {
          out += "[]";
          return;
        }
        out += '[';
        if (pretty) newline(level + 1);
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (i) {
            out += item_sep;
            if (pretty) newline(level + 1);
          }
          write(items[i], level + 1);
        }
        if (pretty) newline(level);
        out += ']';
        return;
      }
      case Value::Kind::dict: {
        std::vector<std::pair<Value, Value>> entries = v.dict_data().entries;
        if (entries.empty()) {
          out += "{}";
          return;
        }
        if (sort_keys)
          std::stable_sort(entries.begin(), entries.end(),
                           [](const auto& a, const auto& b) { return py_compare(a.first, b.first, "<") < 0; });
        out += '{';
        if (pretty) newline(level + 1);
        bool first = true;
        for (const auto& [k, val] : entries) {
          if (!first) {
            out += item_sep;
            if (pretty) newline(level + 1);
          }
          first = false;
          json_string(out, key_of(k), ensure_ascii);
          out += key_sep;
          write(val, level + 1);
        }
        if (pretty) newline(level);
        out += '}';
        return;
      }
      default:
        fail(ErrorKind::type, "Object of type " + type_name(v) + " is not JSON serializable");
    }
  }
};

std::string format_number(const char* spec, double d) {
  // Sized first: a precision such as %.600f prints more than any fixed buffer holds.
  const int n = std::snprintf(nullptr, 0, spec, d);
  if (n < 0) fail(ErrorKind::value, std::string("cannot format a number with ") + spec);
  check_size(static_cast<std::size_t>(n));
  std::string out(static_cast<std::size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), spec, d);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// A width or precision written in the format: read with a cap so that "%99999999999d" does not
// overflow an int, and refused when it alone would pass the value size budget.
template <typename Text>  // std::string or code points
int read_count(const Text& s, std::size_t& i) {
  std::int64_t n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9')
    n = std::min<std::int64_t>(n * 10 + (s[i++] - '0'), std::numeric_limits<int>::max());
  check_size(static_cast<std::size_t>(n));
  return static_cast<int>(n);
}

// A width or precision given as an argument (`*`), with the same bounds.
int count_arg(std::int64_t v) {
  const std::int64_t limit = std::numeric_limits<int>::max();
  v = std::clamp<std::int64_t>(v, -limit, limit);
  check_size(static_cast<std::size_t>(v < 0 ? -v : v));
  return static_cast<int>(v);
}

// One printf-style conversion.
std::string convert_one(char type, const std::string& flags, int width, int precision, const Value& v) {
  std::string body;
  auto need_number = [&](const char* what) {
    if (!v.is_number()) {
      if (v.is_undefined()) fail_undefined(v);
      fail(ErrorKind::type, std::string("%") + type + " format: " + what + " is required, not " + type_name(v));
    }
  };
  switch (type) {
    case 's':
      body = py_str(v);
      break;
    case 'r':
    case 'a':
      body = py_repr(v);
      break;
    case 'd':
    case 'i':
    case 'u': {
      need_number("a real number");
      // Python's int(x): a float of any size has an exact integer value (printed exactly by
      // %.0f); magnitudes are unsigned so that -2^63 has one.
      bool negative = false;
      if (v.is_float()) {
        const double d = v.as_double();
        if (std::isnan(d)) fail(ErrorKind::value, "cannot convert float NaN to integer");
        if (std::isinf(d)) fail(ErrorKind::overflow, "cannot convert float infinity to integer");
        const double t = std::trunc(d);
        negative = t < 0;
        body = format_number("%.0f", std::fabs(t));
      } else {
        const std::int64_t i = v.as_int();
        negative = i < 0;
        body = std::to_string(negative ? 0 - static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(i));
      }
      if (precision >= 0 && static_cast<int>(body.size()) < precision)
        body.insert(0, static_cast<std::size_t>(precision) - body.size(), '0');
      if (negative) {
        body.insert(0, "-");
      } else if (flags.find('+') != std::string::npos) {
        body.insert(0, "+");
      } else if (flags.find(' ') != std::string::npos) {
        body.insert(0, " ");
      }
      break;
    }
    case 'x':
    case 'X':
    case 'o': {
      need_number("an integer");
      if (v.is_float()) fail(ErrorKind::type, std::string("%") + type + " format: an integer is required, not float");
      char buf[64];
      const std::int64_t i = v.as_int();
      std::snprintf(
          buf, sizeof buf,
          type == 'x'   ? "%llx"
          : type == 'X' ? "%llX"
                        : "%llo",
          static_cast<unsigned long long>(i < 0 ? 0 - static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(i)));
      body = std::string(i < 0 ? "-" : "") +
             (flags.find('#') != std::string::npos ? (type == 'o'   ? "0o"
                                                      : type == 'x' ? "0x"
                                                                    : "0X")
                                                   : "") +
             buf;
      break;
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
      need_number("a real number");
      std::string spec = "%";
      for (const char f : flags)
        if (f == '+' || f == ' ' || f == '#') spec += f;
      spec += "." + std::to_string(precision >= 0 ? precision : 6) + type;
      const double d = v.as_double();
      if (std::isinf(d) || std::isnan(d)) {
        body = std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf");
        if (type == 'E' || type == 'F' || type == 'G') body = py_upper(body);
      } else {
        body = format_number(spec.c_str(), d);
      }
      break;
    }
    case 'c': {
      if (v.is_string() && utf8_length(v.str()) == 1) {
        body = v.str();
      } else if (v.is_int()) {
        append_utf8(body, static_cast<char32_t>(v.as_int()));
      } else {
        fail(ErrorKind::type, "%c requires int or char");
      }
      break;
    }
    default:
      fail(ErrorKind::value, std::string("unsupported format character '") + type + "'");
  }
  if ((type == 's' || type == 'r' || type == 'a') && precision >= 0) {
    const auto cps = decode_utf8(body);
    if (static_cast<int>(cps.size()) > precision) body = encode_utf8(cps, 0, static_cast<std::size_t>(precision));
  }
  const int len = static_cast<int>(utf8_length(body));
  if (width > len) {
    check_size(static_cast<std::size_t>(width));
    const std::size_t pad = static_cast<std::size_t>(width - len);
    if (flags.find('-') != std::string::npos) {
      body.append(pad, ' ');
    } else if (flags.find('0') != std::string::npos && type != 's' && type != 'r' && type != 'a' && type != 'c') {
      const std::size_t at = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
      body.insert(at, pad, '0');
    } else {
      body.insert(0, pad, ' ');
    }
  }
  return body;
}

std::string spec_format(const Value& v, const std::string& spec) {
  if (spec.empty()) return py_str(v);
  // [[fill]align][sign][#][0][width][,][.precision][type]
  std::size_t i = 0;
  std::string fill = " ";
  char align = 0;
  const auto cps = decode_utf8(spec);
  std::vector<char32_t> s(cps.begin(), cps.end());
  auto is_align = [](char32_t c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (s.size() >= 2 && is_align(s[1])) {
    fill.clear();
    append_utf8(fill, s[0]);
    align = static_cast<char>(s[1]);
    i = 2;
  } else if (!s.empty() && is_align(s[0])) {
    align = static_cast<char>(s[0]);
    i = 1;
  }
  std::string flags;
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) flags += static_cast<char>(s[i++]);
  if (i < s.size() && s[i] == '#') flags += static_cast<char>(s[i++]);
  if (i < s.size() && s[i] == '0') {
    if (!align) fill = "0", align = '=';
    ++i;
  }
  int width = 0;
  width = read_count(s, i);
  if (i < s.size() && (s[i] == ',' || s[i] == '_')) ++i;
  int precision = -1;
  if (i < s.size() && s[i] == '.') {
    ++i;
    precision = 0;
    precision = read_count(s, i);
  }
  char type = i < s.size() ? static_cast<char>(s[i++]) : 0;
  if (i != s.size()) fail(ErrorKind::value, "Invalid format specifier '" + spec + "'");
  std::string body;
  if (type == 0 && v.is_float()) {
    body = precision >= 0 ? convert_one('g', flags, 0, precision, v) : py_str(v);
  } else if (type == 0 || type == 's') {
    if (type == 's' && !v.is_string())
      fail(ErrorKind::value, "Unknown format code 's' for object of type '" + type_name(v) + "'");
    body = convert_one('s', "", 0, precision, v);
  } else if (type == 'd' || type == 'x' || type == 'X' || type == 'o' || type == 'b') {
    if (!(v.is_int() || v.is_bool()))
      fail(ErrorKind::value,
           std::string("Unknown format code '") + type + "' for object of type '" + type_name(v) + "'");
    if (type == 'b') {
      std::int64_t x = v.as_int();
      const bool neg = x < 0;
      std::uint64_t u = static_cast<std::uint64_t>(neg ? -x : x);
      do {
        body.insert(0, 1, static_cast<char>('0' + (u & 1)));
        u >>= 1;
      } while (u);
      if (neg) body.insert(0, "-");
    } else {
      body = convert_one(type == 'd' ? 'd' : type, flags, 0, -1, v);
    }
  } else if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' || type == 'G' || type == '%') {
    if (!v.is_number())
      fail(ErrorKind::value,
           std::string("Unknown format code '") + type + "' for object of type '" + type_name(v) + "'");
    if (type == '%') {
      body = convert_one('f', flags, 0, precision, Value::floating(v.as_double() * 100)) + "%";
    } else {
      body = convert_one(type, flags, 0, precision, v);
    }
  } else {
    fail(ErrorKind::value, std::string("Unknown format code '") + type + "'");
  }
  if (!align) align = (v.is_number() && !v.is_bool()) ? '>' : '<';
  const int len = static_cast<int>(utf8_length(body));
  if (width > len) {
    check_size(static_cast<std::size_t>(width) * fill.size());
    const int pad = width - len;
    const int l = align == '<' ? 0 : align == '^' ? pad / 2 : pad;
    auto repeat = [&fill](int n) {
      if (fill.size() == 1) return std::string(static_cast<std::size_t>(n), fill[0]);
      std::string r;
      r.reserve(static_cast<std::size_t>(n) * fill.size());
      for (int k = 0; k < n; ++k) r += fill;
      return r;
    };
    const std::string left = repeat(l), right = repeat(pad - l);
    if (align == '=' && !body.empty() && (body[0] == '-' || body[0] == '+'))
      return body.substr(0, 1) + left + body.substr(1);
    return left + body + right;
  }
  return body;
}

}  // namespace

std::string json_dumps(const Value& v, bool ensure_ascii, const Value& indent, const Value& separators,
                       bool sort_keys) {
  JsonWriter w;
  w.ensure_ascii = ensure_ascii;
  w.sort_keys = sort_keys;
  w.pretty = !(indent.is_none() || indent.is_undefined());
  if (w.pretty) {
    if (indent.is_string()) {
      w.indent = indent.str();
    } else if (indent.is_int() || indent.is_bool()) {
      const std::int64_t n = indent.as_int();
      check_size(n > 0 ? static_cast<std::size_t>(n) : 0);
      w.indent = std::string(n > 0 ? static_cast<std::size_t>(n) : 0, ' ');
    } else {
      fail(ErrorKind::type, "can't multiply sequence by non-int of type '" + type_name(indent) + "'");
    }
  }
  w.item_sep = w.pretty ? "," : ", ";
  w.key_sep = ": ";
  if (!(separators.is_none() || separators.is_undefined())) {
    const auto parts = iterate(separators);
    if (parts.size() != 2 || !parts[0].is_string() || !parts[1].is_string())
      fail(ErrorKind::value, "separators must be an (item_separator, key_separator) pair of strings");
    w.item_sep = parts[0].str();
    w.key_sep = parts[1].str();
  }
  w.write(v, 0);
  return std::move(w.out);
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string percent_format(const std::string& fmt, const Value& args) {
  std::vector<Value> positional;
  const bool mapping = args.is_dict();
  if (args.is_tuple()) {
    positional = args.items();
  } else {
    positional.push_back(args);
  }
  std::size_t next_arg = 0;
  bool used_mapping = false;
  std::string out;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) fail(ErrorKind::value, "incomplete format");
    Value value;
    bool have_value = false;
    if (fmt[i] == '(') {
      if (!mapping) fail(ErrorKind::type, "format requires a mapping");
      const std::size_t close = fmt.find(')', i);
      if (close == std::string::npos) fail(ErrorKind::value, "incomplete format key");
      const std::string key = fmt.substr(i + 1, close - i - 1);
      const Value* v = args.dict_data().find(std::string_view(key));
      if (!v) fail(ErrorKind::key, repr_string(key));
      value = *v;
      have_value = true;
      used_mapping = true;
      i = close + 1;
    }
    std::string flags;
    while (i < fmt.size() && std::string("-+ #0").find(fmt[i]) != std::string::npos) flags += fmt[i++];
    auto take_arg = [&]() -> Value {
      if (next_arg >= positional.size()) fail(ErrorKind::type, "not enough arguments for format string");
      return positional[next_arg++];
    };
    int width = 0;
    if (i < fmt.size() && fmt[i] == '*') {
      width = count_arg(take_arg().as_int());
      ++i;
    } else {
      width = read_count(fmt, i);
    }
    int precision = -1;
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      precision = 0;
      if (i < fmt.size() && fmt[i] == '*') {
        precision = count_arg(take_arg().as_int());
        ++i;
      } else {
        precision = read_count(fmt, i);
      }
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) fail(ErrorKind::value, "incomplete format");
    const char type = fmt[i];
    if (type == '%') {
      out += '%';
      continue;
    }
    if (!have_value) value = mapping && !args.is_tuple() ? (next_arg++, args) : take_arg();
    out += convert_one(type, flags, width, precision, value);
    check_size(out.size());
  }
  if (!mapping && next_arg < positional.size())
    fail(ErrorKind::type, "not all arguments converted during string formatting");
  (void)used_mapping;
  return out;
}

std::string str_format(const std::string& fmt, const CallArgs& args) {
  std::string out;
  std::size_t auto_index = 0;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      fail(ErrorKind::value, "Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const std::size_t close = fmt.find('}', i);
    if (close == std::string::npos) fail(ErrorKind::value, "Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conversion;
    if (const std::size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (const std::size_t bang = field.find('!'); bang != std::string::npos) {
      conversion = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    std::size_t name_end = 0;
    while (name_end < field.size() && field[name_end] != '.' && field[name_end] != '[') ++name_end;
    const std::string head = field.substr(0, name_end);
    Value v;
    if (head.empty()) {
      if (auto_index >= args.args.size())
        fail(ErrorKind::index,
             "Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
      v = args.args[auto_index++];
    } else if (std::all_of(head.begin(), head.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      const std::size_t idx = std::stoul(head);
      if (idx >= args.args.size())
        fail(ErrorKind::index, "Replacement index " + head + " out of range for positional args tuple");
      v = args.args[idx];
    } else {
      bool found = false;
      for (const auto& [k, val] : args.kwargs) {
        if (k == head) {
          v = val;
          found = true;
        }
      }
      if (!found) fail(ErrorKind::key, repr_string(head));
    }
    std::size_t p = name_end;
    while (p < field.size()) {
      if (field[p] == '.') {
        std::size_t e = p + 1;
        while (e < field.size() && field[e] != '.' && field[e] != '[') ++e;
        v = get_attr(v, field.substr(p + 1, e - p - 1));
        p = e;
      } else {
        const std::size_t e = field.find(']', p);
        if (e == std::string::npos) fail(ErrorKind::value, "Missing ']' in format string");
        const std::string key = field.substr(p + 1, e - p - 1);
        const bool numeric =
            !key.empty() && std::all_of(key.begin(), key.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        v = get_item(v, numeric ? Value::integer(std::stoll(key)) : Value::string(key));
        p = e + 1;
      }
    }
    if (conversion == "r" || conversion == "a") {
      v = Value::string(py_repr(v));
    } else if (conversion == "s") {
      v = Value::string(py_str(v));
    } else if (!conversion.empty()) {
      fail(ErrorKind::value, "Unknown conversion specifier " + conversion);
    }
    out += spec_format(v, spec);
    check_size(out.size());
  }
  return out;
}

}  // namespace day0::chat_template
