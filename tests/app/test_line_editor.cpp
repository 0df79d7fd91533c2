// day0-cli chat's input: the line editor fed terminal byte sequences (bracketed pastes, escape
// sequences split across reads, CRLF, UTF-8), the piped-input line splitter and the filter that
// makes generated text safe to print.
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/input_history.h"
#include "cli/line_editor.h"

using day0::cli::EditorEvent;
using day0::cli::InputHistory;
using day0::cli::LineEditor;
using day0::cli::LineSplitter;
using day0::cli::TerminalSanitizer;

namespace {

// Feeds each chunk in turn and collects every event.
std::vector<EditorEvent> run(LineEditor& editor, const std::vector<std::string>& chunks) {
  std::vector<EditorEvent> events;
  for (const auto& chunk : chunks) {
    editor.feed(chunk);
    while (auto e = editor.next()) events.push_back(*e);
  }
  return events;
}

// Every way of cutting `bytes` in two.
std::vector<std::vector<std::string>> all_splits(const std::string& bytes) {
  std::vector<std::vector<std::string>> splits;
  for (std::size_t i = 0; i <= bytes.size(); ++i) splits.push_back({bytes.substr(0, i), bytes.substr(i)});
  return splits;
}

// A terminal screen as xterm keeps it, enough for the editor's output: printable characters
// (a wide one takes two cells) with automatic wrap (a full row wraps at the next character),
// CR, LF, BS, cursor moves (A B C D), erase in line (K) and below (J). Rows are never cut or
// scrolled off; a narrower terminal cuts them (resize()).
struct Screen {
  int columns;
  std::vector<std::u32string> rows{U""};
  int row = 0, col = 0;
  bool wrap_next = false;

  static int width(char32_t c) {
    if (c >= 0x0300 && c <= 0x036F) return 0;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) ||
        (c >= 0xFF00 && c <= 0xFF60) || (c >= 0x1F300 && c <= 0x1F64F))
      return 2;
    return 1;
  }
  std::u32string& at(int r) {
    while (static_cast<int>(rows.size()) <= r) rows.emplace_back();
    return rows[static_cast<std::size_t>(r)];
  }
  void put(char32_t c) {
    const int w = width(c);
    if (w == 0) return;  // combining marks: not drawn here
    if (wrap_next || col + w > columns) {
      ++row;
      col = 0;
      wrap_next = false;
    }
    auto& line = at(row);
    if (static_cast<int>(line.size()) < col + w) line.resize(static_cast<std::size_t>(col + w), U' ');
    line[static_cast<std::size_t>(col)] = c;
    if (w == 2) line[static_cast<std::size_t>(col + 1)] = U'\0';
    col += w;
    if (col >= columns) {
      col = columns - 1;
      wrap_next = true;
    }
  }
  void feed(const std::string& bytes) {
    for (std::size_t i = 0; i < bytes.size();) {
      const auto b = static_cast<unsigned char>(bytes[i]);
      if (b == 0x1b && i + 1 < bytes.size() && bytes[i + 1] == '[') {
        std::size_t j = i + 2;
        while (j < bytes.size() && !(bytes[j] >= 0x40 && bytes[j] <= 0x7e)) ++j;
        const std::string args = bytes.substr(i + 2, j - i - 2);
        const int n = args.empty() || args[0] == '?' ? 1 : std::max(1, std::atoi(args.c_str()));
        const char f = bytes[j];
        if (f == 'A') row = std::max(0, row - n);
        if (f == 'B') row += n;
        if (f == 'C') col = std::min(columns - 1, col + n);
        if (f == 'D') col = std::max(0, col - n);
        if (f == 'K') at(row).resize(std::min(at(row).size(), static_cast<std::size_t>(col)));
        if (f == 'J') {
          at(row).resize(std::min(at(row).size(), static_cast<std::size_t>(col)));
          rows.resize(static_cast<std::size_t>(row + 1));
        }
        if (f == 'A' || f == 'B' || f == 'C' || f == 'D' || f == 'K' || f == 'J') wrap_next = false;
        i = j + 1;
        continue;
      }
      if (b == '\r') {
        col = 0;
        wrap_next = false;
      } else if (b == '\n') {
        ++row;
        at(row);
      } else if (b == '\b') {
        col = std::max(0, col - (wrap_next ? 0 : 1));
        wrap_next = false;
      } else if (b >= 0x20) {
        std::size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
        for (std::size_t k = 1; k < n && i + k < bytes.size(); ++k) c = (c << 6) | (bytes[i + k] & 0x3F);
        put(c);
        i += n;
        continue;
      }
      ++i;
    }
  }
  // A narrower terminal that cuts its rows (as xterm does).
  void resize(int w) {
    columns = w;
    for (auto& r : rows)
      if (static_cast<int>(r.size()) > w) r.resize(static_cast<std::size_t>(w));
    col = std::min(col, w - 1);
    wrap_next = false;
  }
  // Row r as text, trailing spaces cut.
  std::string text(int r) const {
    if (r >= static_cast<int>(rows.size())) return {};
    std::string out;
    for (const char32_t c : rows[static_cast<std::size_t>(r)]) {
      if (c == U'\0') continue;
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else {
        char buf[8];
        QByteArray utf8 = QString::fromUcs4(&c, 1).toUtf8();
        std::snprintf(buf, sizeof buf, "%s", utf8.constData());
        out += buf;
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }
  int used_rows() const {
    int n = static_cast<int>(rows.size());
    while (n > 0 && text(n - 1).empty()) --n;
    return n;
  }
};

// What a `columns`-wide screen shows for ASCII `shown`: rows of `columns` characters.
std::vector<std::string> wrapped(const std::string& shown, int columns) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < shown.size(); i += static_cast<std::size_t>(columns)) {
    out.push_back(shown.substr(i, static_cast<std::size_t>(columns)));
    while (!out.back().empty() && out.back().back() == ' ') out.back().pop_back();  // as Screen::text
  }
  return out;
}

}  // namespace

class TestLineEditor : public QObject {
  Q_OBJECT
 private slots:
  void typedLineIsSubmittedOnEnter() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"hel", "lo\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].kind, EditorEvent::Kind::submit);
    QCOMPARE(events[0].text, std::string("hello"));
    QCOMPARE(e.take_output(), std::string("> hello\r\n"));
  }

  void enterAsLfOrCrlfSubmitsOnce() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"a\r\nb\n", "c\r", "\nd\r"});
    QCOMPARE(events.size(), std::size_t(4));
    QCOMPARE(events[0].text, std::string("a"));
    QCOMPARE(events[1].text, std::string("b"));
    QCOMPARE(events[2].text, std::string("c"));
    QCOMPARE(events[3].text, std::string("d"));
  }

  void backspaceDeletesWholeUtf8Characters() {
    LineEditor e;
    e.start("> ");
    // "naïve" then two backspaces (DEL and BS): "naï" -> "na"... then "ï" retyped, then "€" deleted.
    const auto events = run(e, {"na\xc3\xafve\x7f\x7f\x7f", "\xc3\xaf\xe2\x82\xac\x08!\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("na\xc3\xaf!"));
    QVERIFY(e.take_output().find("\b \b") != std::string::npos);
  }

  void backspaceClearsAsManyColumnsAsTheCharacterTook() {
    LineEditor e;
    e.start("");
    // A CJK character and an emoji take two columns, "a" one, a combining accent none.
    auto events = run(e, {"a\xe6\xbc\xa2\xf0\x9f\x98\x80"
                          "e\xcc\x81"});
    QVERIFY(events.empty());
    (void)e.take_output();
    events = run(e, {"\x7f"});
    QCOMPARE(e.take_output(), std::string("\b \b"));  // e and its combining accent
    events = run(e, {"\x7f"});
    QCOMPARE(e.take_output(), std::string("\b \b\b \b"));  // the emoji
    events = run(e, {"\x7f"});
    QCOMPARE(e.take_output(), std::string("\b \b\b \b"));  // the CJK character
    QCOMPARE(e.line(), std::string("a"));
  }

  void backspaceOnEmptyLineDoesNothing() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"\x7f\x7f"
                                "x\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("x"));
  }

  void pasteWithNewlinesIsOneMessage() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"look: \x1b[200~line one\r\nline two\rline three\nline four\x1b[201~", " end\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].kind, EditorEvent::Kind::submit);
    QCOMPARE(events[0].text, std::string("look: line one\nline two\nline three\nline four end"));
  }

  void pasteMarkersSplitAtEveryByte() {
    const std::string bytes = "a\x1b[200~x\r\ny\x1b[201~b\r";
    for (const auto& chunks : all_splits(bytes)) {
      LineEditor e;
      e.start("> ");
      const auto events = run(e, chunks);
      QCOMPARE(events.size(), std::size_t(1));
      QCOMPARE(events[0].text, std::string("ax\nyb"));
      QVERIFY(!e.in_paste());
    }
    // Byte by byte too.
    LineEditor e;
    e.start("> ");
    std::vector<std::string> bytewise;
    for (const char c : bytes) bytewise.push_back(std::string(1, c));
    const auto events = run(e, bytewise);
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("ax\nyb"));
  }

  void hundredKilobytePasteArrivesWhole() {
    std::string text;
    for (int i = 0; text.size() < 100 * 1024; ++i)
      text += "line " + std::to_string(i) + " \xe2\x9c\x93 caf\xc3\xa9 \tand more text here\n";
    text += "no newline at the end";
    std::string crlf;  // as a terminal sends a paste: CRLF line ends
    for (const char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    const std::string bytes = "\x1b[200~" + crlf + "\x1b[201~\r";
    // In reads of 4095 bytes, the size the canonical mode cut lines at.
    std::vector<std::string> chunks;
    for (std::size_t i = 0; i < bytes.size(); i += 4095) chunks.push_back(bytes.substr(i, 4095));
    LineEditor e;
    e.start("> ");
    const auto events = run(e, chunks);
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].kind, EditorEvent::Kind::submit);
    QCOMPARE(events[0].text.size(), text.size());
    QVERIFY(events[0].text == text);
  }

  void escapeSequencesAreConsumedAndIgnored() {
    // Up and down (CSI and SS3), F5, Ctrl+Right and Delete at the end, Alt+x and a stray paste
    // end: none of them is text, none changes it.
    const std::string bytes = "a\x1b[A\x1bOB\x1b[1;5C\x1b[15~\x1b[3~\x1bx\x1b[201~b\r";
    for (const auto& chunks : all_splits(bytes)) {
      LineEditor e;
      e.start("> ");
      const auto events = run(e, chunks);
      QCOMPARE(events.size(), std::size_t(1));
      QCOMPARE(events[0].text, std::string("ab"));
    }
  }

  void cursorKeysEditInTheMiddle() {
    // "helo": Left, insert "l"; Home, Delete "h", insert "H"; End, "!"; Ctrl+A, Right, Backspace.
    const std::string bytes = "helo\x1b[Dl\x1b[H\x1b[3~H\x1bOF!\x01\x1b[C\x7f\r";
    for (const auto& chunks : all_splits(bytes)) {
      LineEditor e;
      e.start("> ");
      const auto events = run(e, chunks);
      QCOMPARE(events.size(), std::size_t(1));
      QCOMPARE(events[0].text, std::string("ello!"));
    }
  }

  void cursorMovesByCharactersNotBytes() {
    LineEditor e;
    e.start("");
    // "a", a wide CJK character, "e" with a combining accent; Left twice lands before the CJK
    // character (two columns back, then two more), where "X" goes.
    auto events = run(e, {"a\xe6\xbc\xa2"
                          "e\xcc\x81"});
    (void)e.take_output();
    events = run(e, {"\x1b[D"});
    QCOMPARE(e.take_output(), std::string("\x1b[1D"));  // over e and its accent: one column
    events = run(e, {"\x1b[D"});
    QCOMPARE(e.take_output(), std::string("\x1b[2D"));
    events = run(e, {"X"});
    // In the middle: the line is drawn again and the cursor put back after the X.
    QCOMPARE(e.take_output(), std::string("\r\x1b[JaX\xe6\xbc\xa2"
                                          "e\xcc\x81\x1b[3D"));
    events = run(e, {"\x1b[3~\r"});  // Delete takes the CJK character
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("aXe\xcc\x81"));
  }

  void homeAndEndStayOnTheCursorsLineOfAPaste() {
    LineEditor e;
    e.start("> ");
    // Home goes to the start of the paste's last line; Left from there goes up into the line
    // above, to its end; End goes to the end of that line, not of the message.
    auto events = run(e, {"\x1b[200~one\ntwo\x1b[201~\x1b[H>"});
    QCOMPARE(e.line(), std::string("one\n>two"));
    events = run(e, {"\x1b[D\x1b[D<\x1b[H[\x1b[F]\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("[one<]\n>two"));
  }

  void backspaceAtTheStartOfALineJoinsItToTheOneAbove() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"\x1b[200~one\ntwo\x1b[201~\x1b[H\x7f-\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("one-two"));
  }

  void loneEscapeWaitsAndCanBeDropped() {
    LineEditor e;
    e.start("> ");
    e.feed("ab\x1b");
    QVERIFY(!e.next());
    QVERIFY(e.partial_escape());
    e.drop_partial_escape();
    e.feed("c\r");
    const auto event = e.next();
    QVERIFY(event);
    QCOMPARE(event->text, std::string("abc"));
  }

  void controlBytesInAPasteAreDroppedButTabsKept() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"\x1b[200~a\tb\x07"
                                "c\x1b"
                                "d\x7f"
                                "e\x1b[201~\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("a\tbcde"));
  }

  void ctrlCInterruptsWithTheLine() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"draft\x03", "\x03"});
    QCOMPARE(events.size(), std::size_t(2));
    QCOMPARE(events[0].kind, EditorEvent::Kind::interrupt);
    QCOMPARE(events[0].text, std::string("draft"));
    QCOMPARE(events[1].kind, EditorEvent::Kind::interrupt);
    QCOMPARE(events[1].text, std::string());
  }

  void ctrlDEndsOnlyAnEmptyLine() {
    LineEditor e;
    e.start("> ");
    auto events = run(e, {"x\x04"});
    QVERIFY(events.empty());
    events = run(e, {"\r\x04"});
    QCOMPARE(events.size(), std::size_t(2));
    QCOMPARE(events[0].text, std::string("x"));
    QCOMPARE(events[1].kind, EditorEvent::Kind::eof);
  }

  void ctrlUClearsTheLine() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"wrong\x15right\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("right"));
  }

  void typedAheadInputStaysForTheNextLine() {
    LineEditor e;
    e.start("> ");
    e.feed("first\rsecond\r");
    auto event = e.next();
    QVERIFY(event);
    QCOMPARE(event->text, std::string("first"));
    QCOMPARE(e.take_output(), std::string("> first\r\n"));
    e.start("> ");
    event = e.next();
    QVERIFY(event);
    QCOMPARE(event->text, std::string("second"));
    QCOMPARE(e.take_output(), std::string("> second\r\n"));
    QVERIFY(!e.next());
  }

  void backspaceOverAPastedNewlineRedrawsTheLineAbove() {
    LineEditor e;
    e.start("> ");
    const auto events = run(e, {"\x1b[200~one\ntwo\n\x1b[201~\x7f"});
    QVERIFY(events.empty());
    QCOMPARE(e.line(), std::string("one\ntwo"));
    const auto out = e.take_output();
    QVERIFY(out.ends_with("two\r\n\x1b[2A\r\x1b[J> one\r\ntwo"));
  }

  // A message longer than the terminal is wide: rows break at the width, and after every edit
  // (typing, moving, inserting and deleting in the middle, Backspace across a row's start) the
  // screen shows the prompt and the line wrapped, with the cursor where the line's cursor is.
  void longInputWrapsAtTheTerminalWidth() {
    const int width = 10;
    LineEditor e;
    e.set_width(width);
    Screen screen{width};
    screen.feed("earlier\r\n");
    e.start("> ");
    std::string line;
    std::size_t cursor = 0;
    const auto check = [&](const char* what) {
      screen.feed(e.take_output());
      QCOMPARE(e.line(), line);
      const auto expected = wrapped("> " + line, width);
      for (std::size_t r = 0; r < expected.size(); ++r)
        QVERIFY2(screen.text(static_cast<int>(r) + 1) == expected[r],
                 qPrintable(QString("%1: row %2 is '%3', not '%4'")
                                .arg(what)
                                .arg(r)
                                .arg(QString::fromStdString(screen.text(static_cast<int>(r) + 1)),
                                     QString::fromStdString(expected[r]))));
      QVERIFY2(screen.used_rows() <= static_cast<int>(expected.size()) + 1, what);
      QCOMPARE(screen.text(0), std::string("earlier"));
      const int at = 2 + static_cast<int>(cursor);
      QVERIFY2(screen.row == 1 + at / width && screen.col == at % width,
               qPrintable(QString("%1: cursor at %2,%3, not %4,%5")
                              .arg(what)
                              .arg(screen.row - 1)
                              .arg(screen.col)
                              .arg(at / width)
                              .arg(at % width)));
    };
    const auto type = [&](const std::string& bytes, const std::string& text) {
      run(e, {bytes});
      line.insert(cursor, text);
      cursor += text.size();
    };
    type("abcdefghijklmnopqrstuvw", "abcdefghijklmnopqrstuvw");
    check("typed");
    run(e, {"\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D"});
    cursor -= 6;
    check("left across a row's start");
    type("XY", "XY");
    check("inserted in the middle");
    run(e, {"\x7f\x7f\x7f"});
    line.erase(cursor - 3, 3);
    cursor -= 3;
    check("backspace in the middle");
    run(e, {"\x1b[H"});
    cursor = 0;
    check("home");
    run(e, {"\x1b[C\x1b[C\x1b[C\x1b[C\x1b[C\x1b[C\x1b[C\x1b[C\x1b[C"});
    cursor = 9;
    check("right across a row's end");
    run(e, {"\x1b[3~"});
    line.erase(cursor, 1);
    check("delete");
    run(e, {"\x1b[F"});
    cursor = line.size();
    check("end");
    while (line.size() > 5) {
      run(e, {"\x7f"});
      line.pop_back();
      cursor = line.size();
      check("backspace at the end");
    }
    type("012", "012");  // with the prompt, exactly one row
    check("typed to a row's end");
    const auto events = run(e, {"\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, line);
    screen.feed(e.take_output());
    QCOMPARE(screen.col, 0);  // below the message
  }

  void wideCharactersMoveToTheNextRowWhole() {
    LineEditor e;
    e.set_width(6);
    Screen screen{6};
    e.start("> ");
    run(e, {"ab\xe6\xbc\xa2\xe5\xad\x97"});  // two CJK characters, two columns each
    screen.feed(e.take_output());
    QCOMPARE(screen.text(0), std::string("> ab\xe6\xbc\xa2"));
    QCOMPARE(screen.text(1), std::string("\xe5\xad\x97"));
    QCOMPARE(screen.row, 1);
    QCOMPARE(screen.col, 2);
    run(e, {"\x1b[D\x1b[D"});
    screen.feed(e.take_output());
    QCOMPARE(screen.row, 0);
    QCOMPARE(screen.col, 4);
  }

  // The terminal grows narrower or wider: the message is drawn again for the new width.
  void aResizeRedrawsTheMessage() {
    LineEditor e;
    e.set_width(20);
    Screen screen{20};
    e.start("> ");
    const std::string text = "the quick brown fox jumps over the lazy dog";
    run(e, {text});
    screen.feed(e.take_output());
    QCOMPARE(screen.text(0), std::string("> the quick brown fo"));
    for (const int w : {12, 30, 7}) {
      screen.resize(w);
      e.set_width(w);
      screen.feed(e.take_output());
      const auto expected = wrapped("> " + text, w);
      for (std::size_t r = 0; r < expected.size(); ++r)
        QVERIFY2(screen.text(static_cast<int>(r)) == expected[r],
                 qPrintable(QString("width %1, row %2: '%3'").arg(w).arg(r).arg(QString::fromStdString(screen.text(static_cast<int>(r))))));
      QCOMPARE(screen.used_rows(), static_cast<int>(expected.size()));
      const int at = 2 + static_cast<int>(text.size());
      QCOMPARE(screen.row, at / w);
      QCOMPARE(screen.col, at % w);
    }
    QCOMPARE(e.width(), 7);
  }

  // Up and Down step through the messages sent before; the one being written comes back last.
  void upAndDownBringBackEarlierMessages() {
    LineEditor e;
    e.set_history({"from an earlier run"});
    e.start("> ");
    auto events = run(e, {"first\r"});
    e.start("> ");
    events = run(e, {"\x1b[200~two\nlines\x1b[201~\r"});
    e.start("> ");
    events = run(e, {"two\nlines\r"});  // typed: Enter sends "two" alone
    QCOMPARE(events.size(), std::size_t(2));
    e.start("> ");
    run(e, {"draft"});
    run(e, {"\x1b[A"});
    QCOMPARE(e.line(), std::string("lines"));
    run(e, {"\x1b[A\x1b[A"});
    QCOMPARE(e.line(), std::string("two\nlines"));
    run(e, {"\x1bOA\x1b[A\x1b[A\x1b[A"});  // past the oldest: stays there
    QCOMPARE(e.line(), std::string("from an earlier run"));
    run(e, {"\x1b[B"});
    QCOMPARE(e.line(), std::string("first"));
    run(e, {"\x1b[B\x1b[B\x1b[B\x1b[B"});
    QCOMPARE(e.line(), std::string("draft"));
    // A recalled message edited and sent is a new entry; the old one stays as it was.
    run(e, {"\x1b[A\x1b[A\x1b[A!"});
    events = run(e, {"\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("two\nlines!"));
    QCOMPARE(e.history(), (std::vector<std::string>{"from an earlier run", "first", "two\nlines", "two", "lines",
                                                     "two\nlines!"}));
    // Sent twice in a row: kept once. Empty lines are not kept.
    e.start("> ");
    run(e, {"\x1b[A\r"});
    e.start("> ");
    run(e, {"\r"});
    QCOMPARE(e.history().size(), std::size_t(6));
    std::vector<std::string> many(LineEditor::kMaxHistory + 10, "x");
    e.set_history(many);
    QCOMPARE(e.history().size(), LineEditor::kMaxHistory);
  }

  void historyFileKeepsEntriesPrivately() {
    QTemporaryDir tmp;
    const std::filesystem::path file = tmp.filePath("data/chat_input_history").toStdString();
    InputHistory h(file, 3);
    QVERIFY(h.load().empty());
    for (const std::string entry : {"one", "two\nlines", "back\\slash\\n", "", "four", "five"}) QVERIFY(h.append(entry));
    QCOMPARE(h.load(), (std::vector<std::string>{"back\\slash\\n", "four", "five"}));
    QCOMPARE(std::filesystem::status(file).permissions() & std::filesystem::perms::all,
             std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    QVERIFY(h.append(std::string(InputHistory::kMaxEntryBytes + 1, 'p')));  // a paste: not kept
    QCOMPARE(h.load().back(), std::string("five"));
    for (int i = 0; i < 20; ++i) QVERIFY(h.append("entry " + std::to_string(i)));
    QCOMPARE(h.load(), (std::vector<std::string>{"entry 17", "entry 18", "entry 19"}));
    QCOMPARE(InputHistory::decode(InputHistory::encode("a\\n\nb\r")), std::string("a\\n\nb\r"));
  }

  void splitterKeepsLongLinesWhole() {
    LineSplitter s;
    const std::string long_line(200000, 'x');
    for (std::size_t i = 0; i < long_line.size(); i += 4096) s.feed(long_line.substr(i, 4096));
    QVERIFY(!s.next());
    s.feed("\r\nsecond\nlast");
    auto line = s.next();
    QVERIFY(line);
    QCOMPARE(line->size(), long_line.size());
    QCOMPARE(*s.next(), std::string("second"));
    QVERIFY(!s.next());
    QCOMPARE(*s.next(true), std::string("last"));
    QVERIFY(!s.next(true));
  }

  void sanitizerEscapesControlCharacters() {
    TerminalSanitizer t;
    // ESC sequences, BEL, CR, DEL and the C1 CSI (U+009B) are shown; \n, \t and UTF-8 pass.
    const std::string out = t.filter(
        "a\x1b]0;title\x07\x1b[2Jb\rc\x7f\n\td\xc2\x9b"
        "e caf\xc3\xa9 \xe2\x9c\x93");
    QCOMPARE(out, std::string("a\xe2\x90\x9b]0;title\xe2\x90\x87\xe2\x90\x9b[2Jb\xe2\x90\x8d"
                              "c\xe2\x90\xa1\n\td\\u009be "
                              "caf\xc3\xa9 \xe2\x9c\x93"));
    QVERIFY(out.find('\x1b') == std::string::npos);
  }

  void sanitizerHoldsSplitCharactersAndEscapesBadBytes() {
    TerminalSanitizer t;
    QCOMPARE(t.filter("x\xe2\x9c"), std::string("x"));
    QCOMPARE(t.filter("\x93y"), std::string("\xe2\x9c\x93y"));
    QCOMPARE(t.filter("\x9b\xff"
                      "z"),
             std::string("\\x9b\\xffz"));  // bare 8-bit CSI: not UTF-8
    QCOMPARE(t.filter("\xc2"), std::string());
    QCOMPARE(t.filter("\x85"), std::string("\\u0085"));  // C1 NEL split across pieces
    QCOMPARE(t.filter("\xf0\x9f"), std::string());
    QCOMPARE(t.flush(), std::string("\\xf0\\x9f"));
    QCOMPARE(t.filter("ok"), std::string("ok"));
  }
};

QTEST_GUILESS_MAIN(TestLineEditor)
#include "test_line_editor.moc"
