#pragma once
// Splits a (possibly still streaming) Markdown reply into top-level blocks: prose (paragraphs,
// lists, tables, headings), fenced code, display math ($$...$$ or \[...\] on their own lines) and
// block quotes, each rendered on its own. A fence or formula still open at the end (the reply is
// streaming) runs to the end. Blocks are kept small so a huge reply is many small items: prose
// is cut at a blank line past kProseBlockChars (or at a line past twice that), code every
// kCodePartLines lines into parts of one code box.
//
// Each block records the splitter's state at its start, so splitting can resume from any block:
// a streamed reply is split again only from its last two blocks (split_markdown(text, from,
// state)), and the blocks before them are kept as they are.
#include <QChar>
#include <QColor>
#include <QString>
#include <vector>

class QTextDocument;

namespace day0::app {

constexpr int kProseBlockChars = 6000;
constexpr int kCodePartLines = 150;
constexpr int kMaxLineChars = 4000;  // longer lines are cut at a space into several lines

struct SplitState {
  enum class Mode { top, fence, math } mode = Mode::top;
  QChar fenceChar;
  int fenceLength = 0;
  QString language;
  QString mathClose;  // "$$" or "\\]"
  int part = 0;       // the code part that starts here
  bool operator==(const SplitState&) const = default;
};

struct MarkdownBlock {
  enum class Kind { text, code, math, quote } kind = Kind::text;
  QString text;          // prose as Markdown; code without its fences; math without delimiters;
                         // a quote's Markdown without its '>' markers
  QString language;      // the fence's info string (first word), code only
  bool closed = true;    // the fence or the formula was closed (false: still streaming)
  int part = 0;          // code: 0 for the first part of a fence
  bool lastPart = true;  // code: no part of the same fence follows
  int start = 0;         // where the block starts in the source, delimiters included
  SplitState state;      // the splitter's state at `start`
  bool sameContent(const MarkdownBlock& o) const {
    return kind == o.kind && text == o.text && language == o.language && closed == o.closed && part == o.part &&
           lastPart == o.lastPart;
  }
};

// The blocks of `markdown` from offset `from` (a block's start), where the splitter was in `state`.
std::vector<MarkdownBlock> split_markdown(const QString& markdown, int from = 0, const SplitState& state = {});
// Gives every link (anchor) of a rendered document the colour `color`, and underlines it;
// returns how many link fragments changed (0 when all had it already: nothing is modified).
int set_link_color(QTextDocument* document, const QColor& color);

}  // namespace day0::app
