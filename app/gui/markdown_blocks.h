#pragma once
// Splits a (possibly still streaming) Markdown reply into prose and fenced code blocks, so the
// chat view renders prose with Qt's Markdown support and each code block in its own box with a
// copy button. A fence still open at the end (the reply is streaming) runs to the end.
#include <QColor>
#include <QString>
#include <QVariantList>
#include <vector>

class QTextDocument;

namespace day0::app {

struct MarkdownBlock {
  enum class Kind { text, code } kind = Kind::text;
  QString text;      // prose as Markdown; code without its fences
  QString language;  // the fence's info string (first word), code only
  bool closed = true;
};

std::vector<MarkdownBlock> split_markdown(const QString& markdown);
// The same as a list of {kind: "text"|"code", text, language, closed} maps for QML.
QVariantList markdown_blocks_for_qml(const QString& markdown);
// Gives every link (anchor) of a rendered document the colour `color`, and underlines it;
// returns how many link fragments changed (0 when all had it already: nothing is modified).
int set_link_color(QTextDocument* document, const QColor& color);

}  // namespace day0::app
