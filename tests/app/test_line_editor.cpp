// day0-cli chat's input: the line editor fed terminal byte sequences (bracketed pastes, escape
// sequences split across reads, CRLF, UTF-8), the piped-input line splitter and the filter that
// makes generated text safe to print.
#include <QtTest>
#include <string>
#include <vector>

#include "cli/line_editor.h"

using day0::cli::EditorEvent;
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
    QCOMPARE(e.take_output(), std::string("X\xe6\xbc\xa2"
                                          "e\xcc\x81\x1b[K\x1b[3D"));
    events = run(e, {"\x1b[3~\r"});  // Delete takes the CJK character
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("aXe\xcc\x81"));
  }

  void cursorStaysOnTheLastLineOfAPaste() {
    LineEditor e;
    e.start("> ");
    // Home goes to the start of the paste's last line, not into the line above.
    const auto events = run(e, {"\x1b[200~one\ntwo\x1b[201~\x1b[H\x1b[D\x1b[D>\r"});
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, std::string("one\n>two"));
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
    QVERIFY(out.ends_with("two\r\n\r\x1b[K\x1b[A\rtwo\x1b[K"));
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
