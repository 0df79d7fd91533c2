#include "gui/code_highlighter.h"

#include <QSet>
#include <QStringList>
#include <algorithm>

namespace day0::app {
namespace {

QSet<QString> words(const char* list) {
  QSet<QString> set;
  for (const QString& w : QString::fromLatin1(list).split(u' ', Qt::SkipEmptyParts)) set.insert(w);
  return set;
}

// What a C-like, Python, shell or SQL tokenizer needs to know about its language.
struct Syntax {
  QSet<QString> keywords, types;
  bool slashComments = false;    // // and /* */
  bool hashComments = false;     // #
  bool dashComments = false;     // -- (SQL)
  bool preprocessor = false;     // # at the start of a line (C, C++, CUDA)
  bool backtickStrings = false;  // `...` (JavaScript templates, Go raw strings)
  bool tripleStrings = false;    // """...""" and '''...''' (Python)
  bool singleQuoteChars = true;  // '...' is a string (not Rust lifetimes)
  bool caseInsensitive = false;  // SQL
  bool shellVariables = false;   // $NAME, ${...}
  bool decorators = false;       // @name (Python, Java annotations, TypeScript decorators)
};

const Syntax& syntax_of(const QString& family) {
  static const auto make = [](const QString& f) {
    Syntax s;
    if (f == u"c") {
      s.slashComments = s.preprocessor = true;
      s.keywords = words(
          "auto break case catch class const constexpr consteval constinit continue co_await co_return co_yield "
          "decltype default delete do else enum explicit export extern false final for friend goto if inline "
          "mutable namespace new noexcept nullptr operator override private protected public register "
          "reinterpret_cast static_cast dynamic_cast const_cast requires return sizeof static static_assert struct "
          "switch template this throw true try typedef typeid typename union using virtual volatile while "
          "__global__ __device__ __host__ __shared__ __constant__ __restrict__ __syncthreads concept NULL");
      s.types = words(
          "void bool char char8_t char16_t char32_t wchar_t short int long float double signed unsigned size_t "
          "ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t std string vector map "
          "unique_ptr shared_ptr optional dim3 float2 float4 half cudaStream_t cudaError_t FILE");
    } else if (f == u"java") {
      s.slashComments = s.decorators = true;
      s.keywords = words(
          "abstract assert break case catch class continue default do else enum extends final finally for if "
          "implements import instanceof interface native new package private protected public return static "
          "super switch synchronized this throw throws transient try volatile while var record yield true false "
          "null sealed permits");
      s.types = words("void boolean byte char short int long float double String Object Integer List Map");
    } else if (f == u"javascript") {
      s.slashComments = s.backtickStrings = s.decorators = true;
      s.keywords = words(
          "async await break case catch class const continue debugger default delete do else export extends "
          "finally for from function if import in instanceof let new of return static super switch this throw "
          "try typeof var void while with yield true false null undefined as interface type enum implements "
          "private public protected readonly declare namespace abstract keyof satisfies");
      s.types = words("string number boolean any unknown never object symbol bigint Promise Array Map Set Record");
    } else if (f == u"rust") {
      s.slashComments = true;
      s.singleQuoteChars = false;
      s.keywords = words(
          "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match "
          "mod move mut pub ref return self Self static struct super trait true type unsafe use where while "
          "macro_rules");
      s.types = words(
          "i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result Box "
          "Rc Arc HashMap Some None Ok Err");
    } else if (f == u"go") {
      s.slashComments = s.backtickStrings = true;
      s.keywords = words(
          "break case chan const continue default defer else fallthrough for func go goto if import interface map "
          "package range return select struct switch type var true false nil iota");
      s.types = words(
          "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 "
          "uint16 uint32 uint64 uintptr any");
    } else if (f == u"csharp") {
      s.slashComments = true;
      s.keywords = words(
          "abstract as async await base break case catch class const continue default delegate do else enum event "
          "explicit extern false finally fixed for foreach goto if implicit in interface internal is lock namespace "
          "new null operator out override params private protected public readonly ref return sealed sizeof static "
          "struct switch this throw true try typeof unsafe using var virtual void volatile while");
      s.types = words("bool byte char decimal double float int long object sbyte short string uint ulong ushort");
    } else if (f == u"python") {
      s.hashComments = s.tripleStrings = s.decorators = true;
      s.keywords = words(
          "and as assert async await break class continue def del elif else except finally for from global if "
          "import in is lambda nonlocal not or pass raise return try while with yield match case True False None "
          "self");
      s.types = words("int float str bool list dict set tuple bytes object type Exception print len range");
    } else if (f == u"shell") {
      s.hashComments = s.shellVariables = true;
      s.keywords = words(
          "if then else elif fi for in do done while until case esac function return local export readonly set "
          "unset shift exit break continue source alias");
      s.types = words(
          "echo cd ls cat grep sed awk sudo apt apt-get cmake make git cp mv rm mkdir chmod chown tar curl wget "
          "python3 pip ssh find xargs printf test");
    } else if (f == u"sql") {
      s.dashComments = s.caseInsensitive = true;
      s.slashComments = true;
      s.keywords = words(
          "select from where and or not insert into values update set delete create table drop alter add index "
          "view join inner left right outer full on as group by order having limit offset distinct union all "
          "primary key foreign references null is in exists between like case when then else end begin commit "
          "rollback transaction with returning default unique constraint check if asc desc count sum avg min max");
      s.types =
          words("int integer bigint smallint text varchar char boolean real double float numeric date timestamp blob");
    }
    return s;
  };
  static const QStringList families = {u"c"_qs,      u"java"_qs,   u"javascript"_qs, u"rust"_qs, u"go"_qs,
                                       u"csharp"_qs, u"python"_qs, u"shell"_qs,      u"sql"_qs};
  static const std::vector<Syntax> table = [&] {
    std::vector<Syntax> t;
    for (const QString& f : families) t.push_back(make(f));
    return t;
  }();
  static const Syntax none;
  const int i = families.indexOf(family);
  return i < 0 ? none : table[static_cast<std::size_t>(i)];
}

bool ident_start(QChar c) { return c.isLetter() || c == u'_'; }
bool ident_char(QChar c) { return c.isLetterOrNumber() || c == u'_'; }

class Scanner {
 public:
  explicit Scanner(const QString& code) : s_(code), n_(static_cast<int>(code.size())) {}
  std::vector<CodeToken> tokens;

  void add(int start, int end, TokenKind kind) {
    if (end > start) tokens.push_back({start, end - start, kind});
  }
  int line_end(int i) const {
    const int e = static_cast<int>(s_.indexOf(u'\n', i));
    return e < 0 ? n_ : e;
  }
  // The end of a quoted string starting at i (the quote), honouring backslash escapes; an
  // unterminated string ends at the end of the line (or of the code for multi-line quotes).
  int string_end(int i, QChar quote, bool multiline) const {
    int j = i + 1;
    while (j < n_) {
      const QChar c = s_[j];
      if (c == u'\\') {
        j += 2;
        continue;
      }
      if (c == quote) return j + 1;
      if (c == u'\n' && !multiline) return j;
      ++j;
    }
    return n_;
  }
  int number_end(int i) const {
    int j = i;
    while (j < n_ && (s_[j].isLetterOrNumber() || s_[j] == u'.' || s_[j] == u'_' ||
                      ((s_[j] == u'+' || s_[j] == u'-') && j > i && (s_[j - 1] == u'e' || s_[j - 1] == u'E') &&
                       !s_.mid(i, 2).startsWith(u"0x"_qs))))
      ++j;
    return j;
  }

  void generic(const Syntax& syn) {
    bool line_start = true;
    int i = 0;
    while (i < n_) {
      const QChar c = s_[i];
      if (c == u'\n') {
        line_start = true;
        ++i;
        continue;
      }
      if (c.isSpace()) {
        ++i;
        continue;
      }
      const bool at_line_start = line_start;
      line_start = false;
      if (syn.preprocessor && at_line_start && c == u'#') {
        const int e = line_end(i);
        add(i, e, TokenKind::preprocessor);
        i = e;
        continue;
      }
      if (syn.slashComments && c == u'/' && i + 1 < n_ && s_[i + 1] == u'/') {
        const int e = line_end(i);
        add(i, e, TokenKind::comment);
        i = e;
        continue;
      }
      if (syn.slashComments && c == u'/' && i + 1 < n_ && s_[i + 1] == u'*') {
        int e = static_cast<int>(s_.indexOf(u"*/"_qs, i + 2));
        e = e < 0 ? n_ : e + 2;
        add(i, e, TokenKind::comment);
        i = e;
        continue;
      }
      if (syn.hashComments && c == u'#' && !(syn.shellVariables && i > 0 && s_[i - 1] == u'$')) {
        const int e = line_end(i);
        add(i, e, TokenKind::comment);
        i = e;
        continue;
      }
      if (syn.dashComments && c == u'-' && i + 1 < n_ && s_[i + 1] == u'-') {
        const int e = line_end(i);
        add(i, e, TokenKind::comment);
        i = e;
        continue;
      }
      if (syn.tripleStrings && (c == u'"' || c == u'\'') && s_.mid(i, 3) == QString(3, c)) {
        int e = static_cast<int>(s_.indexOf(QString(3, c), i + 3));
        e = e < 0 ? n_ : e + 3;
        add(i, e, TokenKind::string);
        i = e;
        continue;
      }
      if (c == u'"' || (c == u'\'' && syn.singleQuoteChars) || (c == u'`' && syn.backtickStrings)) {
        const int e = string_end(i, c, c == u'`');
        add(i, e, TokenKind::string);
        i = e;
        continue;
      }
      if (c == u'\'' && !syn.singleQuoteChars) {  // Rust: 'a' is a char, 'a (a lifetime) is not
        if (i + 2 < n_ && s_[i + 2] == u'\'') {
          add(i, i + 3, TokenKind::string);
          i += 3;
          continue;
        }
        if (i + 3 < n_ && s_[i + 1] == u'\\') {
          const int e = string_end(i, c, false);
          add(i, e, TokenKind::string);
          i = e;
          continue;
        }
        ++i;
        continue;
      }
      if (syn.shellVariables && c == u'$' && i + 1 < n_) {
        int e = i + 1;
        if (s_[e] == u'{') {
          const int close = static_cast<int>(s_.indexOf(u'}', e));
          e = close < 0 ? line_end(i) : close + 1;
        } else {
          while (e < n_ && (ident_char(s_[e]) || (e == i + 1 && (s_[e] == u'@' || s_[e] == u'?' || s_[e] == u'#'))))
            ++e;
        }
        add(i, e, TokenKind::attribute);
        i = std::max(e, i + 1);
        continue;
      }
      if (syn.decorators && c == u'@' && i + 1 < n_ && ident_start(s_[i + 1])) {
        int e = i + 1;
        while (e < n_ && (ident_char(s_[e]) || s_[e] == u'.')) ++e;
        add(i, e, TokenKind::preprocessor);
        i = e;
        continue;
      }
      if (c.isDigit() || (c == u'.' && i + 1 < n_ && s_[i + 1].isDigit())) {
        const int e = number_end(i);
        add(i, e, TokenKind::number);
        i = e;
        continue;
      }
      if (ident_start(c)) {
        int e = i;
        while (e < n_ && (ident_char(s_[e]) || (syn.shellVariables && s_[e] == u'-'))) ++e;
        QString word = s_.mid(i, e - i);
        if (syn.caseInsensitive) word = word.toLower();
        int next = e;
        while (next < n_ && (s_[next] == u' ' || s_[next] == u'\t')) ++next;
        if (syn.keywords.contains(word)) {
          add(i, e, TokenKind::keyword);
        } else if (syn.types.contains(word)) {
          add(i, e, TokenKind::type);
        } else if (next < n_ && s_[next] == u'!' && !syn.shellVariables && next + 1 < n_ && s_[next + 1] != u'=') {
          add(i, e, TokenKind::function);  // Rust macros: println!
        } else if (next < n_ && s_[next] == u'(' && !syn.shellVariables) {
          add(i, e, TokenKind::function);
        } else if (!syn.caseInsensitive && !syn.shellVariables && word.size() > 1 && word[0].isUpper() &&
                   std::any_of(word.begin(), word.end(), [](QChar ch) { return ch.isLower(); })) {
          add(i, e, TokenKind::type);  // CamelCase names are types in most of these languages
        }
        i = e;
        continue;
      }
      ++i;
    }
  }

  void json() {
    int i = 0;
    while (i < n_) {
      const QChar c = s_[i];
      if (c == u'"') {
        const int e = string_end(i, c, false);
        int next = e;
        while (next < n_ && s_[next].isSpace()) ++next;
        add(i, e, next < n_ && s_[next] == u':' ? TokenKind::attribute : TokenKind::string);
        i = e;
      } else if (c.isDigit() || c == u'-') {
        const int e = number_end(i + 1);
        add(i, e, TokenKind::number);
        i = e;
      } else if (ident_start(c)) {
        int e = i;
        while (e < n_ && ident_char(s_[e])) ++e;
        const QString w = s_.mid(i, e - i);
        if (w == u"true" || w == u"false" || w == u"null") add(i, e, TokenKind::keyword);
        i = e;
      } else {
        ++i;
      }
    }
  }

  void yaml() {
    int i = 0;
    while (i < n_) {
      const int end = line_end(i);
      int j = i;
      while (j < end && s_[j].isSpace()) ++j;
      if (j < end && s_[j] == u'#') {
        add(j, end, TokenKind::comment);
        i = end + 1;
        continue;
      }
      if (s_.mid(j, 3) == u"---" || s_.mid(j, 3) == u"...") {
        add(j, end, TokenKind::preprocessor);
        i = end + 1;
        continue;
      }
      while (j < end && (s_[j] == u'-' || s_[j] == u' ')) ++j;  // list items
      // key: value
      int k = j;
      if (k < end && (s_[k] == u'"' || s_[k] == u'\'')) k = string_end(k, s_[k], false);
      while (k < end && s_[k] != u':' && s_[k] != u'#') ++k;
      int value = j;
      if (k < end && s_[k] == u':' && (k + 1 == end || s_[k + 1] == u' ')) {
        add(j, k, TokenKind::attribute);
        value = k + 1;
      }
      while (value < end && s_[value] == u' ') ++value;
      if (value < end) {
        const QChar c = s_[value];
        int comment = static_cast<int>(s_.indexOf(u" #"_qs, value));
        if (comment < 0 || comment > end) comment = end;
        if (c == u'"' || c == u'\'') {
          const int e = std::min(string_end(value, c, false), end);
          add(value, e, TokenKind::string);
        } else if (c == u'&' || c == u'*' || c == u'!') {
          add(value, comment, TokenKind::preprocessor);
        } else {
          const QString v = s_.mid(value, comment - value).trimmed();
          static const QSet<QString> literals = words("true false null yes no on off True False Null ~");
          bool numeric = false;
          v.toDouble(&numeric);
          if (literals.contains(v))
            add(value, value + static_cast<int>(v.size()), TokenKind::keyword);
          else if (numeric)
            add(value, value + static_cast<int>(v.size()), TokenKind::number);
        }
        if (comment < end) add(comment + 1, end, TokenKind::comment);
      }
      i = end + 1;
    }
  }

  void markup() {
    int i = 0;
    while (i < n_) {
      if (s_.mid(i, 4) == u"<!--") {
        int e = static_cast<int>(s_.indexOf(u"-->"_qs, i + 4));
        e = e < 0 ? n_ : e + 3;
        add(i, e, TokenKind::comment);
        i = e;
        continue;
      }
      if (s_[i] == u'<' && i + 1 < n_ &&
          (ident_start(s_[i + 1]) || s_[i + 1] == u'/' || s_[i + 1] == u'?' || s_[i + 1] == u'!')) {
        int j = i + 1;
        while (j < n_ && (s_[j] == u'/' || s_[j] == u'?' || s_[j] == u'!')) ++j;
        while (j < n_ && (ident_char(s_[j]) || s_[j] == u'-' || s_[j] == u':' || s_[j] == u'.')) ++j;
        add(i, j, TokenKind::tag);
        while (j < n_ && s_[j] != u'>' && s_[j] != u'<') {
          if (s_[j] == u'"' || s_[j] == u'\'') {
            const int e = string_end(j, s_[j], true);
            add(j, e, TokenKind::string);
            j = e;
          } else if (ident_start(s_[j])) {
            int e = j;
            while (e < n_ && (ident_char(s_[e]) || s_[e] == u'-' || s_[e] == u':')) ++e;
            add(j, e, TokenKind::attribute);
            j = e;
          } else {
            ++j;
          }
        }
        if (j < n_ && s_[j] == u'>') {
          const int start = (j > 0 && (s_[j - 1] == u'/' || s_[j - 1] == u'?')) ? j - 1 : j;
          add(start, j + 1, TokenKind::tag);
          ++j;
        }
        i = j;
        continue;
      }
      if (s_[i] == u'&') {
        int e = i + 1;
        while (e < n_ && e < i + 10 && (ident_char(s_[e]) || s_[e] == u'#')) ++e;
        if (e < n_ && s_[e] == u';') add(i, e + 1, TokenKind::number);
        i = e;
        continue;
      }
      ++i;
    }
  }

  void css() {
    int i = 0;
    int depth = 0;
    while (i < n_) {
      const QChar c = s_[i];
      if (c == u'/' && i + 1 < n_ && s_[i + 1] == u'*') {
        int e = static_cast<int>(s_.indexOf(u"*/"_qs, i + 2));
        e = e < 0 ? n_ : e + 2;
        add(i, e, TokenKind::comment);
        i = e;
      } else if (c == u'{') {
        ++depth;
        ++i;
      } else if (c == u'}') {
        depth = std::max(0, depth - 1);
        ++i;
      } else if (c == u'"' || c == u'\'') {
        const int e = string_end(i, c, false);
        add(i, e, TokenKind::string);
        i = e;
      } else if (c == u'@') {
        int e = i + 1;
        while (e < n_ && (ident_char(s_[e]) || s_[e] == u'-')) ++e;
        add(i, e, TokenKind::keyword);
        i = e;
      } else if (depth > 0 && c == u'#') {
        int e = i + 1;
        while (e < n_ && s_[e].isLetterOrNumber()) ++e;
        add(i, e, TokenKind::number);
        i = e;
      } else if (depth > 0 && (c.isDigit() || (c == u'.' && i + 1 < n_ && s_[i + 1].isDigit()))) {
        int e = i;
        while (e < n_ && (s_[e].isLetterOrNumber() || s_[e] == u'.' || s_[e] == u'%')) ++e;
        add(i, e, TokenKind::number);
        i = e;
      } else if (ident_start(c) || c == u'-' || c == u'.' || c == u'#' || c == u':') {
        int e = i + 1;
        while (e < n_ && (ident_char(s_[e]) || s_[e] == u'-')) ++e;
        int next = e;
        while (next < n_ && s_[next] == u' ') ++next;
        if (depth > 0 && next < n_ && s_[next] == u':' && ident_start(c))
          add(i, e, TokenKind::attribute);
        else if (depth == 0)
          add(i, e, c == u'.' || c == u'#' || c == u':' ? TokenKind::function : TokenKind::tag);
        else if (next < n_ && s_[next] == u'(')
          add(i, e, TokenKind::function);
        i = e;
      } else {
        ++i;
      }
    }
  }

  void diff() {
    int i = 0;
    while (i < n_) {
      const int end = line_end(i);
      const QString head = s_.mid(i, std::min(4, end - i));
      if (head.startsWith(u"+++") || head.startsWith(u"---") || head.startsWith(u"diff") || head.startsWith(u"inde"))
        add(i, end, TokenKind::heading);
      else if (head.startsWith(u"@@"))
        add(i, end, TokenKind::preprocessor);
      else if (head.startsWith(u'+'))
        add(i, end, TokenKind::inserted);
      else if (head.startsWith(u'-'))
        add(i, end, TokenKind::deleted);
      i = end + 1;
    }
  }

 private:
  const QString& s_;
  const int n_;
};

}  // namespace

QString language_family(const QString& language) {
  const QString l = language.trimmed().toLower();
  static const struct {
    const char* family;
    const char* names;
  } kFamilies[] = {
      {"c", "c h cpp c++ cc cxx hpp hh hxx cuda cu cuh objc objective-c arduino glsl hlsl metal"},
      {"java", "java kotlin kt scala groovy dart"},
      {"javascript", "javascript js jsx mjs cjs typescript ts tsx node"},
      {"rust", "rust rs"},
      {"go", "go golang"},
      {"csharp", "csharp cs c# swift"},
      {"python", "python py python3 py3 pyi"},
      {"shell", "shell sh bash zsh ksh fish console shellsession terminal dockerfile docker makefile make"},
      {"json", "json jsonc json5 jsonl ipynb"},
      {"yaml", "yaml yml"},
      {"sql", "sql sqlite mysql postgresql postgres psql plsql"},
      {"markup", "html htm xml xhtml svg vue xaml plist"},
      {"css", "css scss less sass"},
      {"diff", "diff patch udiff"},
  };
  for (const auto& f : kFamilies)
    if (QString::fromLatin1(f.names).split(u' ').contains(l)) return QString::fromLatin1(f.family);
  return {};
}

std::vector<CodeToken> highlight_tokens(const QString& code, const QString& language) {
  const QString family = language_family(language);
  if (family.isEmpty()) return {};
  Scanner scanner(code);
  if (family == u"json")
    scanner.json();
  else if (family == u"yaml")
    scanner.yaml();
  else if (family == u"markup")
    scanner.markup();
  else if (family == u"css")
    scanner.css();
  else if (family == u"diff")
    scanner.diff();
  else
    scanner.generic(syntax_of(family));
  return std::move(scanner.tokens);
}

QString highlight_html(const QString& code, const QString& language, const RenderPalette& palette) {
  const auto color = [&palette](TokenKind k) -> const QColor& {
    switch (k) {
      case TokenKind::keyword:
        return palette.keyword;
      case TokenKind::type:
        return palette.type;
      case TokenKind::string:
        return palette.string;
      case TokenKind::number:
        return palette.number;
      case TokenKind::comment:
        return palette.comment;
      case TokenKind::function:
        return palette.function;
      case TokenKind::preprocessor:
        return palette.preprocessor;
      case TokenKind::tag:
        return palette.tag;
      case TokenKind::attribute:
        return palette.attribute;
      case TokenKind::inserted:
        return palette.inserted;
      case TokenKind::deleted:
        return palette.deleted;
      case TokenKind::heading:
        return palette.heading;
    }
    return palette.codeText;
  };
  QString html;
  html.reserve(code.size() + code.size() / 2);
  int at = 0;
  for (const CodeToken& t : highlight_tokens(code, language)) {
    if (t.start < at) continue;  // never overlapping, but never trust it either
    html += code.mid(at, t.start - at).toHtmlEscaped();
    const bool italic = t.kind == TokenKind::comment;
    const bool bold = t.kind == TokenKind::keyword || t.kind == TokenKind::heading;
    html += QStringLiteral("<span style=\"color:%1;%2%3\">")
                .arg(color(t.kind).name(), italic ? QStringLiteral("font-style:italic;") : QString(),
                     bold ? QStringLiteral("font-weight:600;") : QString());
    html += code.mid(t.start, t.length).toHtmlEscaped();
    html += QStringLiteral("</span>");
    at = t.start + t.length;
  }
  html += code.mid(at).toHtmlEscaped();
  return html;
}

namespace {

RenderPalette make_palette(bool dark) {
  RenderPalette p;
  const auto c = [dark](const char* light_color, const char* dark_color) {
    return QColor(QLatin1String(dark ? dark_color : light_color));
  };
  // The first six are Theme.qml's text, textMuted, link, borderStrong, surfaceAlt/hover and codeText.
  p.text = c("#1c1e23", "#e9eaee");
  p.muted = c("#6a6f7c", "#9b9ea9");
  p.link = c("#3b4ad8", "#a2abff");
  p.border = c("#cdd1d9", "#464954");
  p.inlineCodeBackground = c("#eceef2", "#2a2c33");
  p.codeText = c("#24292f", "#d7dae0");
  p.keyword = c("#a626a4", "#c678dd");
  p.type = c("#b35900", "#e5c07b");
  p.string = c("#2f7d32", "#98c379");
  p.number = c("#986801", "#d19a66");
  p.comment = c("#6e7781", "#7f848e");
  p.function = c("#3b4ad8", "#61afef");
  p.preprocessor = c("#b3261e", "#e06c75");
  p.tag = c("#a0153e", "#e06c75");
  p.attribute = c("#8250df", "#d19a66");
  p.inserted = c("#1a7f37", "#98c379");
  p.deleted = c("#cf222e", "#e06c75");
  p.heading = c("#24292f", "#e9eaee");
  return p;
}

}  // namespace

const RenderPalette& RenderPalette::light() {
  static const RenderPalette p = make_palette(false);
  return p;
}

const RenderPalette& RenderPalette::dark() {
  static const RenderPalette p = make_palette(true);
  return p;
}

}  // namespace day0::app
