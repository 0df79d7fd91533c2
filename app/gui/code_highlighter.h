#pragma once
// Syntax highlighting of fenced code blocks: a small tokenizer per language family (C-like:
// C, C++, CUDA, Java, JavaScript/TypeScript, Rust, Go, C#; Python; shell; JSON; YAML; SQL;
// HTML/XML; CSS; diff). Unknown languages come out plain. The tokens are ranges of the code;
// the HTML is escaped text inside spans coloured from the theme's palette.
#include <QColor>
#include <QString>
#include <vector>

namespace day0::app {

enum class TokenKind {
  keyword,
  type,
  string,
  number,
  comment,
  function,
  preprocessor,
  tag,
  attribute,
  inserted,
  deleted,
  heading
};

struct CodeToken {
  int start = 0;
  int length = 0;
  TokenKind kind = TokenKind::keyword;
};

// The colours of the code and of the rest of a rendered reply, for one theme.
struct RenderPalette {
  QColor text, muted, link, border, inlineCodeBackground, codeText;
  QColor keyword, type, string, number, comment, function, preprocessor, tag, attribute, inserted, deleted, heading;
  static const RenderPalette& light();
  static const RenderPalette& dark();
  static const RenderPalette& of(bool dark) { return dark ? RenderPalette::dark() : light(); }
};

// The family that highlights `language` (a fence's info string: "cpp", "py", "ts", ...);
// an empty string when it is not known (plain text).
QString language_family(const QString& language);
// The tokens of `code`, in order and not overlapping; none for an unknown language.
std::vector<CodeToken> highlight_tokens(const QString& code, const QString& language);
// `code` as escaped HTML text (no enclosing element) with the tokens in coloured spans.
QString highlight_html(const QString& code, const QString& language, const RenderPalette& palette);

}  // namespace day0::app
