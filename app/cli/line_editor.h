#pragma once
// Reading chat input without the terminal's canonical-mode line limit (4095 bytes) and with
// pastes kept whole. No I/O here: the terminal code (cli/terminal.h) feeds the bytes it reads and
// writes the echo; tests feed byte sequences.
//
//   LineEditor: a small line editor for a terminal in non-canonical mode with bracketed paste
//     (ESC[?2004h). Printable input and UTF-8 are inserted at the cursor, Backspace and Delete
//     delete a character, Left/Right move by characters (across the lines of a message),
//     Home/End (and Ctrl+A/Ctrl+E) go to the ends of the cursor's line, Up/Down step through the
//     earlier messages (the history), Enter sends, Ctrl+U clears, Ctrl+C interrupts, Ctrl+D on an
//     empty line ends. A paste (between ESC[200~ and ESC[201~) is inserted as it is, newlines
//     included, so it is part of one message; CRLF and CR in a paste become LF. Other escape
//     sequences (function keys) are consumed whole, even when split across reads, and ignored.
//     A message longer than the terminal is wide wraps onto the rows below; the editor knows the
//     width (set_width), breaks the rows itself and moves the cursor across them, and draws the
//     message again when the width changes.
//   LineSplitter: whole lines from a byte stream (piped input), any length, CRLF as LF.
//   TerminalSanitizer: generated text made safe to write to a terminal.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  // The terminal's width in columns (0: unknown, rows are not broken). A change while a line is
  // open draws it again for the new width.
  void set_width(int columns);
  int width() const { return columns_; }
  // The earlier messages Up and Down step through, oldest first. A submitted message is added
  // (unless it is empty or the same as the last one); at most kMaxHistory are kept.
  void set_history(std::vector<std::string> entries);
  const std::vector<std::string>& history() const { return history_; }
  static constexpr std::size_t kMaxHistory = 1000;

  const std::string& line() const { return line_; }
  bool in_paste() const { return in_paste_; }
  // Input is waiting for the rest of an escape sequence (a lone Escape key press looks like this
  // until the next key); drop_partial_escape() discards it.
  bool partial_escape() const;
  void drop_partial_escape();

 private:
  // A place on the screen relative to the prompt's first column: the row below it and the column.
  struct Spot {
    int row = 0;
    int col = 0;
  };
  void insert(std::string_view text);
  void erase_before_cursor();
  void erase_at_cursor();
  void cursor_left();
  void cursor_right();
  void cursor_home();
  void cursor_end();
  void history_step(int delta);
  // A key's escape sequence after "ESC[" or "ESC O": "D", "1;5C", "3~".
  void key(std::string_view code);
  // Handles the escape sequence at input_[pos_]; returns false when it is incomplete.
  bool escape();
  // Where the character `ch` leaves the cursor that was at `at`, breaking rows at the width;
  // appends what to write for it to *out when given.
  Spot advance(Spot at, std::string_view ch, std::string* out) const;
  // Where the prompt leaves the cursor; appends what to write for it to *out when given.
  Spot draw_prompt(std::string* out) const;
  // Where line_[offset] is drawn, after the prompt.
  Spot spot_of(std::size_t offset) const;
  // Moves the terminal's cursor from where it is to `to`.
  void move_to(Spot to);
  // Draws the prompt and the line again (after edits that change what follows the cursor).
  void refresh();
  // The cursor moved in line_: the terminal's cursor follows, unless a refresh is due anyway.
  void place_cursor();
  // Ends the open line: the cursor goes below it.
  void finish_line(std::string_view mark);
  void set_line(std::string text);
  std::size_t previous_char(std::size_t at) const;
  std::size_t next_char(std::size_t at) const;
  // Terminal columns of line_[from, to) on one row.
  int width(std::size_t from, std::size_t to) const;

  std::string prompt_;
  std::string line_;
  std::size_t cursor_ = 0;  // a byte offset in line_
  std::string input_;
  std::size_t pos_ = 0;
  std::string output_;
  bool in_paste_ = false;
  bool last_was_cr_ = false;
  int columns_ = 0;
  bool open_ = false;   // a line is being edited (between start() and its event)
  bool dirty_ = false;  // what is drawn differs from line_ after the cursor: refresh() is due
  Spot screen_;         // where the terminal's cursor is
  std::vector<std::string> history_;
  std::size_t history_at_ = 0;  // the entry shown; history_.size(): the message being written
  std::string draft_;           // that message, while an earlier one is shown
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
