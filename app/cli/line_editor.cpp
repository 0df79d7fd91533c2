#include "cli/line_editor.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

namespace day0::cli {
namespace {

constexpr std::string_view kPasteStart = "\x1b[200~";
constexpr std::string_view kPasteEnd = "\x1b[201~";
// An escape sequence longer than this without its final byte is not one; its ESC is dropped.
constexpr std::size_t kMaxEscape = 64;

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

std::string hex_escape(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

// Terminal columns a code point takes: 2 for East Asian wide and emoji, 0 for combining marks.
int columns(char32_t c) {
  if ((c >= 0x0300 && c <= 0x036F) || (c >= 0x200B && c <= 0x200F) || (c >= 0xFE00 && c <= 0xFE0F)) return 0;
  if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0xA4CF) ||
      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
      (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
      (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
    return 2;
  return 1;
}

char32_t decode(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(s[i])); };
  if (s.size() == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (s.size() == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  if (s.size() == 4) return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  return s.empty() ? 0 : b(0);
}

}  // namespace

void LineEditor::start(std::string prompt) {
  prompt_ = std::move(prompt);
  line_.clear();
  cursor_ = 0;
  open_ = true;
  dirty_ = false;
  history_at_ = history_.size();
  draft_.clear();
  screen_ = draw_prompt(&output_);
}

void LineEditor::feed(std::string_view bytes) { input_.append(bytes); }

std::string LineEditor::take_output() { return std::exchange(output_, {}); }

bool LineEditor::partial_escape() const { return pos_ < input_.size() && input_[pos_] == '\x1b'; }

void LineEditor::drop_partial_escape() {
  if (partial_escape() && !in_paste_) ++pos_;
}

void LineEditor::set_width(int columns) {
  columns = std::max(columns, 0);
  if (columns == columns_) return;
  columns_ = columns;
  // The rows were broken for the old width: the terminal's cursor is still screen_.row rows
  // below the prompt (a terminal that cuts rows keeps that; one that rejoins them may leave
  // the old rows above), and everything from the prompt down is drawn again.
  if (open_) refresh();
}

void LineEditor::set_history(std::vector<std::string> entries) {
  if (entries.size() > kMaxHistory) entries.erase(entries.begin(), entries.end() - kMaxHistory);
  history_ = std::move(entries);
  history_at_ = history_.size();
}

int LineEditor::width(std::size_t from, std::size_t to) const {
  int w = 0;
  for (std::size_t i = from; i < to;) {
    std::size_t n = 1;
    while (i + n < to && is_continuation(static_cast<unsigned char>(line_[i + n]))) ++n;
    w += columns(decode(std::string_view(line_).substr(i, n)));
    i += n;
  }
  return w;
}

std::size_t LineEditor::previous_char(std::size_t at) const {
  if (at == 0) return 0;
  std::size_t start = at - 1;
  while (start > 0 && is_continuation(static_cast<unsigned char>(line_[start]))) --start;
  return start;
}

std::size_t LineEditor::next_char(std::size_t at) const {
  if (at >= line_.size()) return line_.size();
  std::size_t end = at + 1;
  while (end < line_.size() && is_continuation(static_cast<unsigned char>(line_[end]))) ++end;
  return end;
}

LineEditor::Spot LineEditor::advance(Spot at, std::string_view ch, std::string* out) const {
  // Rows are broken here, not by the terminal: a row that is full is ended at once ("\r\n"),
  // so the cursor is never left in a terminal's pending-wrap state and every row's end is known.
  const int limit = columns_ > 0 ? columns_ : std::numeric_limits<int>::max();
  const auto new_row = [&] {
    if (out) *out += "\r\n";
    at = {at.row + 1, 0};
  };
  if (ch == "\n") {
    new_row();
    return at;
  }
  int w = 0;
  std::string_view shown = ch;
  std::string spaces;
  if (ch == "\t") {  // spaces to the next tab stop, within the row
    w = std::min(8 - at.col % 8, limit - at.col);
    spaces.assign(static_cast<std::size_t>(w), ' ');
    shown = spaces;
  } else {
    w = columns(decode(ch));
  }
  if (w > 0 && at.col + w > limit) new_row();  // a wide character that does not fit the row
  if (out) *out += shown;
  at.col += w;
  if (at.col >= limit) new_row();
  return at;
}

LineEditor::Spot LineEditor::draw_prompt(std::string* out) const {
  Spot at;
  for (std::size_t i = 0; i < prompt_.size();) {
    std::size_t n = 1;
    while (i + n < prompt_.size() && is_continuation(static_cast<unsigned char>(prompt_[i + n]))) ++n;
    at = advance(at, std::string_view(prompt_).substr(i, n), out);
    i += n;
  }
  return at;
}

LineEditor::Spot LineEditor::spot_of(std::size_t offset) const {
  Spot at = draw_prompt(nullptr);
  for (std::size_t i = 0; i < offset && i < line_.size();) {
    const std::size_t n = next_char(i) - i;
    at = advance(at, std::string_view(line_).substr(i, n), nullptr);
    i += n;
  }
  return at;
}

void LineEditor::move_to(Spot to) {
  if (to.row < screen_.row) output_ += "\x1b[" + std::to_string(screen_.row - to.row) + "A";
  if (to.row > screen_.row) output_ += "\x1b[" + std::to_string(to.row - screen_.row) + "B";
  if (to.col == 0 && screen_.col != 0) {
    output_ += "\r";
  } else if (to.col < screen_.col) {
    output_ += "\x1b[" + std::to_string(screen_.col - to.col) + "D";
  } else if (to.col > screen_.col) {
    output_ += "\x1b[" + std::to_string(to.col - screen_.col) + "C";
  }
  screen_ = to;
}

void LineEditor::refresh() {
  dirty_ = false;
  // Up to the prompt's row, clear everything below, write it all, then place the cursor.
  if (screen_.row > 0) output_ += "\x1b[" + std::to_string(screen_.row) + "A";
  output_ += "\r\x1b[J";
  Spot at = draw_prompt(&output_);
  Spot cursor;
  for (std::size_t i = 0; i <= line_.size();) {
    if (i == cursor_) cursor = at;
    if (i == line_.size()) break;
    const std::size_t n = next_char(i) - i;
    at = advance(at, std::string_view(line_).substr(i, n), &output_);
    i += n;
  }
  screen_ = at;
  move_to(cursor);
}

void LineEditor::place_cursor() {
  if (!dirty_) move_to(spot_of(cursor_));
}

void LineEditor::finish_line(std::string_view mark) {
  if (dirty_) refresh();
  move_to(spot_of(line_.size()));
  output_ += mark;
  if (screen_.col > 0 || !mark.empty()) output_ += "\r\n";
  screen_ = {};
  open_ = false;
}

void LineEditor::set_line(std::string text) {
  line_ = std::move(text);
  cursor_ = line_.size();
  dirty_ = true;
}

void LineEditor::insert(std::string_view text) {
  const bool at_end = cursor_ == line_.size();
  line_.insert(cursor_, text);
  if (!at_end || dirty_) {
    cursor_ += text.size();
    dirty_ = true;
    return;
  }
  // Typed or pasted at the end: written as it comes.
  for (std::size_t i = cursor_; i < line_.size();) {
    const std::size_t n = next_char(i) - i;
    screen_ = advance(screen_, std::string_view(line_).substr(i, n), &output_);
    i += n;
  }
  cursor_ = line_.size();
}

void LineEditor::erase_before_cursor() {
  if (cursor_ == 0) return;
  std::size_t start = previous_char(cursor_);
  const bool newline = line_[start] == '\n';
  // A combining mark goes with the character it marks, as it shows.
  while (!newline && start > 0 && width(start, cursor_) == 0 && line_[start - 1] != '\n') start = previous_char(start);
  const int w = width(start, cursor_);
  const bool simple = !dirty_ && cursor_ == line_.size() && !newline && line_[start] != '\t' && screen_.col >= w &&
                      w > 0;
  line_.erase(start, cursor_ - start);
  cursor_ = start;
  if (!simple) {
    dirty_ = true;
    return;
  }
  // The last character of the row the cursor is on: rubbed out where it stands.
  for (int i = 0; i < w; ++i) output_ += "\b \b";
  screen_.col -= w;
}

void LineEditor::erase_at_cursor() {
  if (cursor_ >= line_.size()) return;
  std::size_t end = next_char(cursor_);
  while (end < line_.size() && width(end, next_char(end)) == 0 && line_[end] != '\n') end = next_char(end);
  line_.erase(cursor_, end - cursor_);
  dirty_ = true;
}

void LineEditor::cursor_left() {
  if (cursor_ == 0) return;
  std::size_t to = previous_char(cursor_);
  while (to > 0 && line_[to] != '\n' && width(to, cursor_) == 0) to = previous_char(to);
  cursor_ = to;
  place_cursor();
}

void LineEditor::cursor_right() {
  if (cursor_ >= line_.size()) return;
  std::size_t to = next_char(cursor_);
  while (to < line_.size() && line_[to] != '\n' && width(to, next_char(to)) == 0) to = next_char(to);
  cursor_ = to;
  place_cursor();
}

void LineEditor::cursor_home() {
  const auto nl = cursor_ == 0 ? std::string::npos : line_.rfind('\n', cursor_ - 1);
  cursor_ = nl == std::string::npos ? 0 : nl + 1;
  place_cursor();
}

void LineEditor::cursor_end() {
  const auto nl = line_.find('\n', cursor_);
  cursor_ = nl == std::string::npos ? line_.size() : nl;
  place_cursor();
}

void LineEditor::history_step(int delta) {
  if (delta < 0 && history_at_ == 0) return;
  if (delta > 0 && history_at_ >= history_.size()) return;
  if (history_at_ == history_.size()) draft_ = line_;
  history_at_ = delta < 0 ? history_at_ - 1 : history_at_ + 1;
  set_line(history_at_ == history_.size() ? std::exchange(draft_, {}) : history_[history_at_]);
}

bool LineEditor::escape() {
  const std::string_view rest = std::string_view(input_).substr(pos_);
  if (in_paste_) {
    if (rest.starts_with(kPasteEnd)) {
      in_paste_ = false;
      pos_ += kPasteEnd.size();
      return true;
    }
    if (kPasteEnd.starts_with(rest)) return false;  // maybe the end marker, split across reads
    ++pos_;                                         // an ESC inside a paste: dropped
    return true;
  }
  if (rest.size() < 2) return false;
  if (rest[1] == '[') {
    std::size_t i = 2;
    while (i < rest.size() && !(rest[i] >= 0x40 && rest[i] <= 0x7E)) {
      if (i > kMaxEscape) {
        ++pos_;
        return true;
      }
      ++i;
    }
    if (i >= rest.size()) return false;
    const std::string_view sequence = rest.substr(0, i + 1);
    if (sequence == kPasteStart) in_paste_ = true;
    key(sequence.substr(2));
    pos_ += i + 1;  // other sequences (function keys, a stray paste end) are ignored
    return true;
  }
  if (rest[1] == 'O') {
    if (rest.size() < 3) return false;
    key(rest.substr(2, 1));
    pos_ += 3;
    return true;
  }
  pos_ += rest[1] == '\x1b' ? 1 : 2;  // Alt+key is ignored
  return true;
}

void LineEditor::key(std::string_view code) {
  // Arrows and Home/End with or without modifiers ("1;5C"), and the "~" keys.
  const char final = code.empty() ? '\0' : code.back();
  if (final == 'A') history_step(-1);
  if (final == 'B') history_step(1);
  if (final == 'D') cursor_left();
  if (final == 'C') cursor_right();
  if (final == 'H' || code == "1~" || code == "7~") cursor_home();
  if (final == 'F' || code == "4~" || code == "8~") cursor_end();
  if (code == "3~") erase_at_cursor();
}

std::optional<EditorEvent> LineEditor::next() {
  std::optional<EditorEvent> event;
  while (!event && pos_ < input_.size()) {
    const auto c = static_cast<unsigned char>(input_[pos_]);
    if (c == 0x1b) {
      if (!escape()) break;
      continue;
    }
    const bool cr_lf = last_was_cr_ && c == '\n';
    last_was_cr_ = c == '\r';
    if (in_paste_) {
      // A run of ordinary bytes at once; then one control byte.
      std::size_t end = pos_;
      while (end < input_.size()) {
        const auto b = static_cast<unsigned char>(input_[end]);
        if (b < 0x20 || b == 0x7f) break;
        ++end;
      }
      if (end > pos_) {
        insert(std::string_view(input_).substr(pos_, end - pos_));
        last_was_cr_ = false;
        pos_ = end;
        continue;
      }
      ++pos_;
      if (c == '\r' || (c == '\n' && !cr_lf))
        insert("\n");
      else if (c == '\t')
        insert("\t");
      continue;  // other control bytes in a paste are dropped
    }
    ++pos_;
    if (c == '\r' || c == '\n') {
      if (cr_lf) continue;
      finish_line("");
      if (!line_.empty() && (history_.empty() || history_.back() != line_)) {
        history_.push_back(line_);
        if (history_.size() > kMaxHistory) history_.erase(history_.begin());
      }
      history_at_ = history_.size();
      cursor_ = 0;
      event = EditorEvent{EditorEvent::Kind::submit, std::exchange(line_, {})};
    } else if (c == 0x7f || c == 0x08) {
      erase_before_cursor();
    } else if (c == 0x03) {
      finish_line("^C");
      cursor_ = 0;
      event = EditorEvent{EditorEvent::Kind::interrupt, std::exchange(line_, {})};
    } else if (c == 0x04) {
      if (line_.empty()) {
        open_ = false;
        event = EditorEvent{EditorEvent::Kind::eof, {}};
      }
    } else if (c == 0x15) {  // Ctrl+U
      set_line({});
    } else if (c == 0x01) {  // Ctrl+A
      cursor_home();
    } else if (c == 0x05) {  // Ctrl+E
      cursor_end();
    } else if (c == '\t') {
      insert("\t");
    } else if (c >= 0x20) {
      std::size_t end = pos_;
      while (end < input_.size() && static_cast<unsigned char>(input_[end]) >= 0x20 &&
             static_cast<unsigned char>(input_[end]) != 0x7f)
        ++end;
      insert(std::string_view(input_).substr(pos_ - 1, end - pos_ + 1));
      pos_ = end;
    }
    // Other control keys are ignored.
  }
  // Edits in the middle of the line are drawn once, after all the input there was.
  if (!event && dirty_) refresh();
  if (pos_ == input_.size()) {
    input_.clear();
    pos_ = 0;
  } else if (pos_ > 4096 && pos_ * 2 > input_.size()) {
    input_.erase(0, pos_);
    pos_ = 0;
  }
  return event;
}

void LineSplitter::feed(std::string_view bytes) {
  if (pos_ > 0 && pos_ * 2 > buffer_.size()) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<std::string> LineSplitter::next(bool at_eof) {
  const auto nl = buffer_.find('\n', pos_);
  std::string line;
  if (nl == std::string::npos) {
    if (!at_eof || pos_ >= buffer_.size()) return std::nullopt;
    line = buffer_.substr(pos_);
    pos_ = buffer_.size();
  } else {
    line = buffer_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::string TerminalSanitizer::filter(std::string_view text) {
  std::string in = std::exchange(pending_, {});
  in.append(text);
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\n' && c != '\t') {
        out += "\xe2\x90";  // U+2400 + c: the control pictures
        out += static_cast<char>(0x80 + c);
      } else if (c == 0x7f) {
        out += "\xe2\x90\xa1";  // U+2421
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (no overlongs, no surrogates)
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool valid = n > 0;
    std::size_t k = 1;
    for (; valid && k < n && i + k < in.size(); ++k) {
      const auto b = static_cast<unsigned char>(in[i + k]);
      valid = k == 1 ? (b >= lo && b <= hi) : is_continuation(b);
    }
    if (valid && i + n > in.size()) {  // incomplete so far: wait for the rest
      pending_ = in.substr(i);
      break;
    }
    if (!valid) {
      out += hex_escape(c);
      ++i;
      continue;
    }
    if (n == 2 && c == 0xC2 && static_cast<unsigned char>(in[i + 1]) <= 0x9F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(in[i + 1]));
      out += buf;
    } else {
      out.append(in, i, n);
    }
    i += n;
  }
  return out;
}

std::string TerminalSanitizer::flush() {
  std::string out;
  for (const char c : std::exchange(pending_, {})) out += hex_escape(static_cast<unsigned char>(c));
  return out;
}

}  // namespace day0::cli
