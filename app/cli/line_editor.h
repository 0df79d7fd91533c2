#pragma once
// Reading chat input without the terminal's canonical-mode line limit (4095 bytes) and with
// pastes kept whole. No I/O here: the terminal code (cli/terminal.h) feeds the bytes it reads and
// writes the echo; tests feed byte sequences.
//
//   LineEditor: a small line editor for a terminal in non-canonical mode with bracketed paste
//     (ESC[?2004h). Printable input and UTF-8 are inserted at the cursor, Backspace and Delete
//     delete a character, Left/Right/Home/End (and Ctrl+A/Ctrl+E) move along the message's
//     last line, Enter sends, Ctrl+U clears, Ctrl+C interrupts, Ctrl+D on an empty line ends. A paste
//     (between ESC[200~ and ESC[201~) is inserted as it is, newlines included, so it is part of
//     one message; CRLF and CR in a paste become LF. Other escape sequences (up, down, function
//     keys) are consumed whole, even when split across reads, and ignored.
//   LineSplitter: whole lines from a byte stream (piped input), any length, CRLF as LF.
//   TerminalSanitizer: generated text made safe to write to a terminal.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace day0::cli {

struct EditorEvent {
  enum class Kind { submit, interrupt, eof } kind = Kind::submit;
  // submit: the line (a paste's newlines included); interrupt: what was on the line, discarded.
  std::string text;
};

class LineEditor {
 public:
  // Starts a new line: the prompt is written (take_output) and the line is empty. Input fed
  // earlier and not consumed yet (typed ahead) is kept.
  void start(std::string prompt);
  void feed(std::string_view bytes);
  // Consumes fed input up to the next event. Returns nullopt when more input is needed.
  std::optional<EditorEvent> next();
  // What to write to the terminal: the prompt and the echo of edits, since the last call.
  std::string take_output();

  const std::string& line() const { return line_; }
  bool in_paste() const { return in_paste_; }
  // Input is waiting for the rest of an escape sequence (a lone Escape key press looks like this
  // until the next key); drop_partial_escape() discards it.
  bool partial_escape() const;
  void drop_partial_escape();

 private:
  void insert(std::string_view text);
  void erase_before_cursor();
  void erase_at_cursor();
  void cursor_left();
  void cursor_right();
  void cursor_home();
  void cursor_end();
  // A key's escape sequence after "ESC[" or "ESC O": "D", "1;5C", "3~".
  void key(std::string_view code);
  // Writes the line from the cursor on, clears what is left of the old and moves back.
  void redraw_rest();
  void move_left(int columns);
  // Where the last line of the message starts (the cursor stays on it).
  std::size_t segment_start() const;
  // Terminal columns of line_[from, to).
  int width(std::size_t from, std::size_t to) const;
  std::size_t previous_char(std::size_t at) const;
  std::size_t next_char(std::size_t at) const;
  // Handles the escape sequence at input_[pos_]; returns false when it is incomplete.
  bool escape();

  std::string prompt_;
  std::string line_;
  std::size_t cursor_ = 0;  // a byte offset in line_, on its last line
  std::string input_;
  std::size_t pos_ = 0;
  std::string output_;
  bool in_paste_ = false;
  bool last_was_cr_ = false;
};

class LineSplitter {
 public:
  void feed(std::string_view bytes);
  // The next whole line without its "\n" (or "\r\n"); at_eof returns the last unterminated line.
  std::optional<std::string> next(bool at_eof = false);

 private:
  std::string buffer_;
  std::size_t pos_ = 0;
};

// Control characters in generated text, which a terminal would act on (ESC starts sequences
// that move the cursor, retitle the window or worse), shown as visible symbols instead: C0 (but
// \n and \t) and DEL as their Unicode control pictures (ESC -> U+241B), C1 characters as
// \u0080...\u009f, bytes that are not UTF-8 as \xNN. A character split across calls is held back
// until it is complete.
class TerminalSanitizer {
 public:
  std::string filter(std::string_view text);
  // The held-back bytes of an incomplete character, escaped.
  std::string flush();

 private:
  std::string pending_;
};

}  // namespace day0::cli
