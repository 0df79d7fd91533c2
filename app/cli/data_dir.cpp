#include "cli/data_dir.h"

#include <cctype>
#include <fstream>

#include "day0/paths.h"

namespace day0::cli {
namespace {

std::string trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(begin, end - begin + 1));
}

void append_utf8(std::string& out, unsigned code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// QSettings' INI string: double-quoted runs, backslash escapes (\\ \" \n \t \r \xHHHH),
// spaces outside quotes kept as they are.
std::string unescape(std::string_view v) {
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == '"') {
      quoted = !quoted;
      continue;
    }
    if (c != '\\' || i + 1 == v.size()) {
      out += c;
      continue;
    }
    const char e = v[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case 'x': {
        unsigned code = 0;
        std::size_t n = 0;
        while (i + 1 < v.size() && n < 4 && std::isxdigit(static_cast<unsigned char>(v[i + 1]))) {
          code = code * 16 + static_cast<unsigned>(std::stoi(std::string(1, v[++i]), nullptr, 16));
          ++n;
        }
        append_utf8(out, code);
        break;
      }
      default: out += e; break;
    }
  }
  if (out.rfind("@String(", 0) == 0 && !out.empty() && out.back() == ')') out = out.substr(8, out.size() - 9);
  return out;
}

}  // namespace

std::string read_ini_value(const std::filesystem::path& file, std::string_view section, std::string_view key) {
  std::ifstream in(file);
  std::string line, current;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == ';' || t[0] == '#') continue;
    if (t.front() == '[' && t.back() == ']') {
      current = t.substr(1, t.size() - 2);
      continue;
    }
    const auto eq = t.find('=');
    if (eq == std::string::npos || current != section || trim(std::string_view(t).substr(0, eq)) != key) continue;
    return unescape(trim(std::string_view(t).substr(eq + 1)));
  }
  return {};
}

std::filesystem::path default_data_dir() {
  const auto ini = user_config_dir() / "day0.ini";
  const std::string folder = read_ini_value(ini, "data", "folder");
  if (folder.empty() || folder.front() != '/') return user_data_dir();
  std::error_code ec;
  const std::string from = read_ini_value(ini, "data", "moveFrom");
  if (!from.empty() && from.front() == '/' && !std::filesystem::exists(std::filesystem::path(folder) / "history.db", ec) &&
      std::filesystem::exists(std::filesystem::path(from) / "history.db", ec))
    return from;
  return folder;
}

}  // namespace day0::cli
