// Chunking in two steps. Segmenting cuts a document into units that should stay whole: a
// Markdown heading, a paragraph, a fenced code block; a top-level function, class or block of
// code (found by brace depth or indentation, with its leading comments, attributes and
// decorators); for other code, blank-line separated blocks. Packing then merges neighbouring
// units up to target_bytes, starts a new chunk at every Markdown heading, re-segments an
// oversized code unit one level deeper (the methods of a class), and cuts what is still too
// large into line windows and over-long lines into pieces, so no chunk exceeds max_bytes.
// PDF pages are chunked one at a time, so a chunk never spans two pages.
#include "knowledge/chunker.h"

#include <algorithm>
#include <string_view>

#include "knowledge/text_util.h"

namespace day0::knowledge {

namespace {

struct Line {
  std::string_view text;
  int number = 1;  // 1-based in the document
};

// A run of lines [first, last] (indices into the line vector) that should stay whole.
struct Unit {
  std::size_t first = 0;
  std::size_t last = 0;
  bool heading = false;  // a Markdown heading: starts a new chunk
  std::string title;
};

bool blank(std::string_view s) { return s.find_first_not_of(" \t\f\v") == std::string_view::npos; }

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\f\v");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\f\v");
  return s.substr(b, e - b + 1);
}

std::vector<Line> split_lines(std::string_view text, int first_number) {
  std::vector<Line> lines;
  std::size_t at = 0;
  int number = first_number;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::size_t stop = end == std::string_view::npos ? text.size() : end;
    lines.push_back({text.substr(at, stop - at), number++});
    at = stop + 1;
  }
  return lines;
}

std::size_t bytes_of(const std::vector<Line>& lines, std::size_t first, std::size_t last) {
  std::size_t n = 0;
  for (std::size_t i = first; i <= last; ++i) n += lines[i].text.size() + 1;
  return n - 1;
}

std::string short_title(std::string_view s) {
  s = trim(s);
  return std::string(s.substr(0, utf8_safe_cut(s, 120)));
}

// --- prose and Markdown ---------------------------------------------------------------------

int heading_level(std::string_view line) {
  int level = 0;
  while (level < static_cast<int>(line.size()) && line[level] == '#') ++level;
  if (level == 0 || level > 6) return 0;
  if (level < static_cast<int>(line.size()) && line[level] != ' ' && line[level] != '\t') return 0;
  return level;
}

bool fence(std::string_view line) {
  const auto t = trim(line);
  return t.starts_with("```") || t.starts_with("~~~");
}

std::vector<Unit> segment_prose(const std::vector<Line>& lines, bool markdown) {
  std::vector<Unit> units;
  std::vector<std::string> headings;  // headings[level - 1]
  const auto path = [&headings] {
    std::string out;
    for (const auto& h : headings)
      if (!h.empty()) out += (out.empty() ? "" : " > ") + h;
    return out;
  };
  std::size_t i = 0;
  while (i < lines.size()) {
    if (blank(lines[i].text)) {
      ++i;
      continue;
    }
    Unit u;
    u.first = i;
    if (markdown && fence(lines[i].text)) {
      std::size_t j = i + 1;
      while (j < lines.size() && !fence(lines[j].text)) ++j;
      u.last = std::min(j, lines.size() - 1);
      u.title = path();
      i = u.last + 1;
    } else if (const int level = markdown ? heading_level(lines[i].text) : 0; level > 0) {
      headings.resize(static_cast<std::size_t>(level));
      headings[static_cast<std::size_t>(level) - 1] =
          short_title(lines[i].text.substr(static_cast<std::size_t>(level)));
      u.last = i;
      u.heading = true;
      u.title = path();
      ++i;
    } else {
      std::size_t j = i;
      while (j + 1 < lines.size() && !blank(lines[j + 1].text) &&
             !(markdown && (heading_level(lines[j + 1].text) > 0 || fence(lines[j + 1].text))))
        ++j;
      u.last = j;
      u.title = markdown ? path() : "";
      i = j + 1;
    }
    units.push_back(std::move(u));
  }
  return units;
}

// --- code -----------------------------------------------------------------------------------

enum class CodeStyle { braces, indentation, blocks };

CodeStyle code_style(const std::string& language) {
  static const char* const kBraces[] = {"c",    "cpp",    "cuda",      "javascript", "typescript", "rust",     "go",
                                        "java", "kotlin", "swift",     "csharp",     "php",        "scala",    "dart",
                                        "zig",  "css",    "glsl",      "groovy",     "qml",        "protobuf", "vue",
                                        "perl", "json",   "terraform", "nix",        "powershell"};
  static const char* const kIndent[] = {"python", "yaml", "nim", "haskell", "elixir"};
  for (const char* l : kBraces)
    if (language == l) return CodeStyle::braces;
  for (const char* l : kIndent)
    if (language == l) return CodeStyle::indentation;
  return CodeStyle::blocks;
}

// Per line: the nesting level at its start and end, whether it is a comment/attribute that
// belongs to the next definition, and whether a new unit may start on it.
struct CodeLine {
  int depth_start = 0;
  int depth_end = 0;
  bool leading = false;   // comment, attribute, annotation or decorator
  bool can_start = true;  // not inside a string or a bracketed continuation
};

bool is_leading_line(std::string_view t, CodeStyle style) {
  if (style == CodeStyle::indentation) return t.starts_with('#') || t.starts_with('@');
  return t.starts_with("//") || t.starts_with("/*") || t.starts_with('*') || t.starts_with("#[") ||
         t.starts_with('@') || t.starts_with("template") || t.starts_with("#pragma") || t.starts_with("///");
}

std::vector<CodeLine> analyse_braces(const std::vector<Line>& lines) {
  std::vector<CodeLine> out(lines.size());
  std::vector<bool> transparent;  // per open brace: a namespace/extern block adds no level
  int depth = 0;
  bool block_comment = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view s = lines[i].text;
    const std::string_view t = trim(s);
    out[i].depth_start = depth;
    out[i].leading = is_leading_line(t, CodeStyle::braces);
    out[i].can_start = !block_comment;
    const bool opens_namespace = t.starts_with("namespace") || t.starts_with("extern \"C\"") ||
                                 t.starts_with("inline namespace") || t.starts_with("export namespace");
    char quote = 0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      const char c = s[k];
      if (block_comment) {
        if (c == '*' && k + 1 < s.size() && s[k + 1] == '/') block_comment = false, ++k;
        continue;
      }
      if (quote) {
        if (c == '\\')
          ++k;
        else if (c == quote)
          quote = 0;
        continue;
      }
      if (c == '/' && k + 1 < s.size() && s[k + 1] == '/') break;
      if (c == '/' && k + 1 < s.size() && s[k + 1] == '*') {
        block_comment = true, ++k;
      } else if (c == '"' || c == '`') {
        quote = c;
      } else if (c == '\'' && k + 2 < s.size() && (s[k + 2] == '\'' || s[k + 1] == '\\')) {
        quote = c;  // a character literal; Rust lifetimes ('a) are left alone
      } else if (c == '{') {
        transparent.push_back(opens_namespace && depth == 0);
        if (!transparent.back()) ++depth;
      } else if (c == '}') {
        if (!transparent.empty()) {
          if (!transparent.back()) --depth;
          transparent.pop_back();
        }
        depth = std::max(depth, 0);
      }
    }
    out[i].depth_end = depth;
  }
  return out;
}

int indentation(std::string_view s) {
  int cols = 0;
  for (const char c : s) {
    if (c == ' ')
      ++cols;
    else if (c == '\t')
      cols = (cols / 8 + 1) * 8;
    else
      break;
  }
  return cols;
}

std::vector<CodeLine> analyse_indentation(const std::vector<Line>& lines) {
  std::vector<CodeLine> out(lines.size());
  int brackets = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view s = lines[i].text;
    const std::string_view t = trim(s);
    out[i].depth_start = blank(s) ? -1 : indentation(s);
    out[i].leading = is_leading_line(t, CodeStyle::indentation);
    out[i].can_start = !in_string && brackets == 0 && !t.starts_with(')') && !t.starts_with(']') &&
                       !t.starts_with('}') && !t.starts_with("else") && !t.starts_with("elif") &&
                       !t.starts_with("except") && !t.starts_with("finally");
    char quote = 0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      const char c = s[k];
      if (s.compare(k, 3, "\"\"\"") == 0 || s.compare(k, 3, "'''") == 0) {
        in_string = !in_string;
        k += 2;
        continue;
      }
      if (in_string) continue;
      if (quote) {
        if (c == '\\')
          ++k;
        else if (c == quote)
          quote = 0;
        continue;
      }
      if (c == '#') break;
      if (c == '"' || c == '\'')
        quote = c;
      else if (c == '(' || c == '[' || c == '{')
        ++brackets;
      else if (c == ')' || c == ']' || c == '}')
        brackets = std::max(brackets - 1, 0);
    }
    out[i].depth_end = out[i].depth_start;
  }
  // A blank line takes the indentation of the next line that is not blank.
  int next = 0;
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (out[i].depth_start < 0)
      out[i].depth_start = out[i].depth_end = next;
    else
      next = out[i].depth_start;
  }
  return out;
}

std::string code_title(const std::vector<Line>& lines, const std::vector<CodeLine>& info, std::size_t first,
                       std::size_t last) {
  for (std::size_t i = first; i <= last; ++i)
    if (!blank(lines[i].text) && !info[i].leading) return short_title(lines[i].text);
  return "";
}

// Splits lines [first, last] at the lines where a definition at `level` starts. Leading
// comments and decorators go with the definition below them.
std::vector<Unit> split_at_level(const std::vector<Line>& lines, const std::vector<CodeLine>& info, CodeStyle style,
                                 std::size_t first, std::size_t last, int level) {
  std::vector<std::size_t> starts;
  for (std::size_t i = first; i <= last; ++i) {
    if (blank(lines[i].text) || !info[i].can_start || info[i].depth_start != level) continue;
    std::size_t prev = i;
    while (prev > first && blank(lines[prev - 1].text)) --prev;
    bool boundary = i == first || prev != i;  // the first line, or after a blank line
    if (!boundary && prev > first) {
      const std::string_view before = trim(lines[prev - 1].text);
      if (style == CodeStyle::braces)
        boundary = info[prev - 1].depth_end == level && (before.ends_with('}') || before.ends_with(';') ||
                                                         before.starts_with('#') || info[prev - 1].leading);
      else
        boundary = info[prev - 1].depth_start > level || info[prev - 1].leading || info[prev - 1].depth_start == level;
    }
    if (!boundary) continue;
    // Move the start up over the comment and decorator lines directly above.
    std::size_t start = i;
    while (start > first && !blank(lines[start - 1].text) && info[start - 1].leading &&
           info[start - 1].depth_start == level)
      --start;
    if (starts.empty() || start > starts.back()) starts.push_back(start);
  }
  if (starts.empty() || starts.front() != first) starts.insert(starts.begin(), first);
  std::vector<Unit> units;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    Unit u;
    u.first = starts[k];
    u.last = k + 1 < starts.size() ? starts[k + 1] - 1 : last;
    while (u.last > u.first && blank(lines[u.last].text)) --u.last;
    if (blank(lines[u.first].text) && u.first == u.last) continue;
    u.title = code_title(lines, info, u.first, u.last);
    units.push_back(std::move(u));
  }
  return units;
}

// Top-level units; a unit larger than max_bytes is split again one level deeper (the members
// of a class or impl block), up to three levels.
void segment_code_range(const std::vector<Line>& lines, const std::vector<CodeLine>& info, CodeStyle style,
                        std::size_t first, std::size_t last, int level, int depth_left, std::size_t max_bytes,
                        std::vector<Unit>* out) {
  for (Unit& u : split_at_level(lines, info, style, first, last, level)) {
    if (depth_left > 0 && u.last > u.first + 1 && bytes_of(lines, u.first, u.last) > max_bytes) {
      int inner = -1;
      for (std::size_t i = u.first + 1; i < u.last; ++i)
        if (!blank(lines[i].text) && info[i].depth_start > level)
          inner = inner < 0 ? info[i].depth_start : std::min(inner, info[i].depth_start);
      if (inner > level) {
        std::vector<Unit> parts;
        segment_code_range(lines, info, style, u.first, u.last, inner, depth_left - 1, max_bytes, &parts);
        if (parts.size() > 1) {
          for (Unit& p : parts)
            if (p.title.empty() || p.first == u.first) p.title = p.first == u.first ? u.title : p.title;
          out->insert(out->end(), parts.begin(), parts.end());
          continue;
        }
      }
    }
    out->push_back(std::move(u));
  }
}

std::vector<Unit> segment_code(const std::vector<Line>& lines, const std::string& language, std::size_t max_bytes) {
  const CodeStyle style = code_style(language);
  if (style == CodeStyle::blocks) return segment_prose(lines, false);
  if (lines.empty()) return {};
  const auto info = style == CodeStyle::braces ? analyse_braces(lines) : analyse_indentation(lines);
  int level = 0;
  if (style == CodeStyle::indentation) {
    level = -1;
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (!blank(lines[i].text)) level = level < 0 ? info[i].depth_start : std::min(level, info[i].depth_start);
    level = std::max(level, 0);
  }
  std::vector<Unit> units;
  segment_code_range(lines, info, style, 0, lines.size() - 1, level, 3, max_bytes, &units);
  return units;
}

// --- packing --------------------------------------------------------------------------------

class Packer {
 public:
  Packer(const std::vector<Line>& lines, const ChunkOptions& options, int page, std::vector<Chunk>* out)
      : lines_(lines), options_(options), page_(page), out_(out) {}

  void add(const Unit& u) {
    const std::size_t size = bytes_of(lines_, u.first, u.last);
    if (u.heading && has_body_) flush();
    // A chunk holding only headings keeps growing, so a heading stays with its first paragraph.
    if (open_ && ((has_body_ && bytes_of(lines_, first_, u.last) > options_.target_bytes) ||
                  bytes_of(lines_, first_, u.last) > options_.max_bytes))
      flush();
    if (size > options_.max_bytes) {
      flush();
      windows(u);
      return;
    }
    if (!open_) {
      open_ = true;
      first_ = u.first;
      title_ = u.title;
      has_body_ = false;
    }
    if (u.heading && !has_body_) title_ = u.title;  // "Guide > Install" rather than "Guide"
    last_ = u.last;
    if (!u.heading) has_body_ = true;
  }

  void flush() {
    if (!open_) return;
    emit(first_, last_, title_);
    open_ = false;
  }

 private:
  void emit(std::size_t first, std::size_t last, const std::string& title) {
    Chunk c;
    c.first_line = lines_[first].number;
    c.last_line = lines_[last].number;
    c.page = page_;
    c.title = title;
    for (std::size_t i = first; i <= last; ++i) {
      if (i > first) c.text.push_back('\n');
      c.text.append(lines_[i].text);
    }
    if (!blank(c.text)) out_->push_back(std::move(c));
  }

  // An oversized unit: windows of whole lines up to target_bytes; a line longer than max_bytes
  // is cut into pieces at spaces where possible (each piece names that one line).
  void windows(const Unit& u) {
    std::size_t start = u.first;
    std::size_t size = 0;
    for (std::size_t i = u.first; i <= u.last; ++i) {
      const std::size_t line = lines_[i].text.size() + 1;
      if (lines_[i].text.size() > options_.max_bytes) {
        if (i > start) emit(start, i - 1, u.title);
        long_line(i, u.title);
        start = i + 1;
        size = 0;
        continue;
      }
      if (size > 0 && size + line > options_.target_bytes) {
        emit(start, i - 1, u.title);
        start = i;
        size = 0;
      }
      size += line;
    }
    if (start <= u.last) emit(start, u.last, u.title);
  }

  void long_line(std::size_t i, const std::string& title) {
    std::string_view rest = lines_[i].text;
    while (!rest.empty()) {
      std::size_t cut = utf8_safe_cut(rest, options_.target_bytes);
      if (cut < rest.size()) {
        const std::size_t space = rest.substr(0, cut).find_last_of(" \t");
        if (space != std::string_view::npos && space > cut / 2) cut = space + 1;
      }
      Chunk c;
      c.first_line = c.last_line = lines_[i].number;
      c.page = page_;
      c.title = title;
      c.text = std::string(rest.substr(0, cut));
      if (!blank(c.text)) out_->push_back(std::move(c));
      rest.remove_prefix(cut);
    }
  }

  const std::vector<Line>& lines_;
  const ChunkOptions& options_;
  int page_;
  std::vector<Chunk>* out_;
  bool open_ = false;
  bool has_body_ = false;
  std::size_t first_ = 0;
  std::size_t last_ = 0;
  std::string title_;
};

void chunk_lines(const std::vector<Line>& lines, const Document& d, const ChunkOptions& options, int page,
                 std::vector<Chunk>* out) {
  std::vector<Unit> units;
  if (d.kind == DocumentKind::code)
    units = segment_code(lines, d.language, options.max_bytes);
  else
    units = segment_prose(lines, d.kind == DocumentKind::markdown);
  Packer packer(lines, options, page, out);
  for (const Unit& u : units) packer.add(u);
  packer.flush();
}

}  // namespace

std::vector<Chunk> chunk_document(const Document& document, const ChunkOptions& given) {
  ChunkOptions options = given;
  options.max_bytes = std::max<std::size_t>(options.max_bytes, 16);
  options.target_bytes = std::clamp<std::size_t>(options.target_bytes, 8, options.max_bytes);
  std::vector<Chunk> chunks;
  const std::string_view text = document.text;
  if (document.kind != DocumentKind::pdf || document.page_starts.empty()) {
    chunk_lines(split_lines(text, 1), document, options, 0, &chunks);
    return chunks;
  }
  int first_line = 1;
  for (std::size_t p = 0; p < document.page_starts.size(); ++p) {
    const std::size_t begin = std::min(document.page_starts[p], text.size());
    const std::size_t end =
        p + 1 < document.page_starts.size() ? std::min(document.page_starts[p + 1], text.size()) : text.size();
    if (end < begin) continue;
    const std::string_view page_text = text.substr(begin, end - begin);
    const auto lines = split_lines(page_text, first_line);
    chunk_lines(lines, document, options, static_cast<int>(p) + 1, &chunks);
    first_line += static_cast<int>(std::count(page_text.begin(), page_text.end(), '\n'));
  }
  return chunks;
}

}  // namespace day0::knowledge
