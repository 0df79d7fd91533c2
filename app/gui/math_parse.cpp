#include "gui/math_parse.h"

#include <QHash>
#include <QStringList>
#include <algorithm>

#include "gui/math_render.h"

namespace day0::app {
namespace math {
namespace {

constexpr int kMaxDepth = 32;  // deeper nesting renders the rest as text

const QHash<QString, QString>& symbols() {
  static const QHash<QString, QString> map = [] {
    QHash<QString, QString> m;
    const char* const pairs[][2] = {
        {"alpha", "α"},      {"beta", "β"},      {"gamma", "γ"},    {"delta", "δ"},      {"epsilon", "ϵ"},
        {"varepsilon", "ε"}, {"zeta", "ζ"},      {"eta", "η"},      {"theta", "θ"},      {"vartheta", "ϑ"},
        {"iota", "ι"},       {"kappa", "κ"},     {"lambda", "λ"},   {"mu", "μ"},         {"nu", "ν"},
        {"xi", "ξ"},         {"omicron", "ο"},   {"pi", "π"},       {"varpi", "ϖ"},      {"rho", "ρ"},
        {"varrho", "ϱ"},     {"sigma", "σ"},     {"varsigma", "ς"}, {"tau", "τ"},        {"upsilon", "υ"},
        {"phi", "ϕ"},        {"varphi", "φ"},    {"chi", "χ"},      {"psi", "ψ"},        {"omega", "ω"},
        {"Gamma", "Γ"},      {"Delta", "Δ"},     {"Theta", "Θ"},    {"Lambda", "Λ"},     {"Xi", "Ξ"},
        {"Pi", "Π"},         {"Sigma", "Σ"},     {"Upsilon", "Υ"},  {"Phi", "Φ"},        {"Psi", "Ψ"},
        {"Omega", "Ω"},      {"infty", "∞"},     {"partial", "∂"},  {"nabla", "∇"},      {"forall", "∀"},
        {"exists", "∃"},     {"nexists", "∄"},   {"emptyset", "∅"}, {"varnothing", "∅"}, {"hbar", "ℏ"},
        {"ell", "ℓ"},        {"Re", "ℜ"},        {"Im", "ℑ"},       {"aleph", "ℵ"},      {"angle", "∠"},
        {"triangle", "△"},   {"neg", "¬"},       {"lnot", "¬"},     {"prime", "′"},      {"ldots", "…"},
        {"dots", "…"},       {"cdots", "⋯"},     {"vdots", "⋮"},    {"ddots", "⋱"},      {"degree", "°"},
        {"lbrace", "{"},     {"rbrace", "}"},    {"langle", "⟨"},   {"rangle", "⟩"},     {"lceil", "⌈"},
        {"rceil", "⌉"},      {"lfloor", "⌊"},    {"rfloor", "⌋"},   {"vert", "|"},       {"Vert", "‖"},
        {"backslash", "∖"},  {"%", "%"},         {"#", "#"},        {"&", "&"},          {"$", "$"},
        {"_", "_"},          {"{", "{"},         {"}", "}"},        {"|", "‖"},          {"star", "⋆"},
        {"dagger", "†"},     {"checkmark", "✓"}, {"square", "□"},   {"Box", "□"},        {"blacksquare", "■"}};
    for (const auto& p : pairs) m.insert(QString::fromLatin1(p[0]), QString::fromUtf8(p[1]));
    return m;
  }();
  return map;
}

const QHash<QString, QString>& relations() {  // binary operators and relations: spaced
  static const QHash<QString, QString> map = [] {
    QHash<QString, QString> m;
    const char* const pairs[][2] = {{"pm", "±"},
                                    {"mp", "∓"},
                                    {"times", "×"},
                                    {"div", "÷"},
                                    {"cdot", "·"},
                                    {"ast", "∗"},
                                    {"circ", "∘"},
                                    {"bullet", "•"},
                                    {"oplus", "⊕"},
                                    {"otimes", "⊗"},
                                    {"cup", "∪"},
                                    {"cap", "∩"},
                                    {"wedge", "∧"},
                                    {"land", "∧"},
                                    {"vee", "∨"},
                                    {"lor", "∨"},
                                    {"setminus", "∖"},
                                    {"leq", "≤"},
                                    {"le", "≤"},
                                    {"geq", "≥"},
                                    {"ge", "≥"},
                                    {"neq", "≠"},
                                    {"ne", "≠"},
                                    {"approx", "≈"},
                                    {"equiv", "≡"},
                                    {"sim", "∼"},
                                    {"simeq", "≃"},
                                    {"cong", "≅"},
                                    {"propto", "∝"},
                                    {"ll", "≪"},
                                    {"gg", "≫"},
                                    {"in", "∈"},
                                    {"notin", "∉"},
                                    {"ni", "∋"},
                                    {"subset", "⊂"},
                                    {"supset", "⊃"},
                                    {"subseteq", "⊆"},
                                    {"supseteq", "⊇"},
                                    {"to", "→"},
                                    {"rightarrow", "→"},
                                    {"leftarrow", "←"},
                                    {"gets", "←"},
                                    {"leftrightarrow", "↔"},
                                    {"Rightarrow", "⇒"},
                                    {"Leftarrow", "⇐"},
                                    {"Leftrightarrow", "⇔"},
                                    {"implies", "⟹"},
                                    {"iff", "⟺"},
                                    {"mapsto", "↦"},
                                    {"longrightarrow", "⟶"},
                                    {"uparrow", "↑"},
                                    {"downarrow", "↓"},
                                    {"mid", "∣"},
                                    {"parallel", "∥"},
                                    {"perp", "⊥"},
                                    {"vdash", "⊢"},
                                    {"models", "⊨"},
                                    {"coloneqq", "≔"},
                                    {"doteq", "≐"},
                                    {"prec", "≺"},
                                    {"succ", "≻"},
                                    {"preceq", "⪯"},
                                    {"succeq", "⪰"},
                                    {"triangleq", "≜"}};
    for (const auto& p : pairs) m.insert(QString::fromLatin1(p[0]), QString::fromUtf8(p[1]));
    return m;
  }();
  return map;
}

const QHash<QString, QString>& big_operators() {
  static const QHash<QString, QString> map = [] {
    QHash<QString, QString> m;
    const char* const pairs[][2] = {
        {"sum", "∑"},          {"prod", "∏"},        {"coprod", "∐"},   {"int", "∫"},          {"iint", "∬"},
        {"iiint", "∭"},        {"oint", "∮"},        {"bigcup", "⋃"},   {"bigcap", "⋂"},       {"bigoplus", "⨁"},
        {"bigotimes", "⨂"},    {"bigvee", "⋁"},      {"bigwedge", "⋀"}, {"lim", "lim"},        {"max", "max"},
        {"min", "min"},        {"sup", "sup"},       {"inf", "inf"},    {"limsup", "lim sup"}, {"liminf", "lim inf"},
        {"argmax", "arg max"}, {"argmin", "arg min"}};
    for (const auto& p : pairs) m.insert(QString::fromLatin1(p[0]), QString::fromUtf8(p[1]));
    return m;
  }();
  return map;
}

bool is_function_name(const QString& name) {
  static const QStringList names = {
      QStringLiteral("sin"),     QStringLiteral("cos"),  QStringLiteral("tan"),    QStringLiteral("cot"),
      QStringLiteral("sec"),     QStringLiteral("csc"),  QStringLiteral("arcsin"), QStringLiteral("arccos"),
      QStringLiteral("arctan"),  QStringLiteral("sinh"), QStringLiteral("cosh"),   QStringLiteral("tanh"),
      QStringLiteral("log"),     QStringLiteral("ln"),   QStringLiteral("lg"),     QStringLiteral("exp"),
      QStringLiteral("det"),     QStringLiteral("dim"),  QStringLiteral("ker"),    QStringLiteral("deg"),
      QStringLiteral("gcd"),     QStringLiteral("hom"),  QStringLiteral("arg"),    QStringLiteral("Pr"),
      QStringLiteral("mod"),     QStringLiteral("bmod"), QStringLiteral("tr"),     QStringLiteral("rank"),
      QStringLiteral("softmax"), QStringLiteral("sgn")};
  return names.contains(name);
}

QString double_struck(const QString& s) {
  QString out;
  for (QChar c : s) {
    switch (c.unicode()) {
      case 'R':
        out += QChar(0x211D);
        break;
      case 'N':
        out += QChar(0x2115);
        break;
      case 'Z':
        out += QChar(0x2124);
        break;
      case 'Q':
        out += QChar(0x211A);
        break;
      case 'C':
        out += QChar(0x2102);
        break;
      case 'P':
        out += QChar(0x2119);
        break;
      case 'H':
        out += QChar(0x210D);
        break;
      default:
        if (c >= u'A' && c <= u'Z')
          out += QString::fromUcs4(std::u32string(1, U'\U0001D538' + (c.unicode() - 'A')).c_str(), 1);
        else
          out += c;
    }
  }
  return out;
}

class Parser {
 public:
  explicit Parser(const QString& s) : s_(s), n_(static_cast<int>(s.size())) {}

  Node parse() {
    Node r = row(Stop::none);
    while (i_ < n_) {  // stray closers: keep them as text and carry on
      r.kids.push_back(Node{Node::op, QString(s_[i_]), {}, {}});
      ++i_;
      Node more = row(Stop::none);
      for (auto& k : more.kids) r.kids.push_back(std::move(k));
    }
    return r;
  }

 private:
  enum class Stop { none, brace, bracket, right, cell };

  void skip_spaces() {
    while (i_ < n_ && s_[i_].isSpace()) ++i_;
  }
  bool at(const char* t) const { return s_.mid(i_, static_cast<int>(qstrlen(t))) == QLatin1String(t); }
  QString command_name() {  // at a backslash
    int j = i_ + 1;
    if (j < n_ && s_[j].isLetter()) {
      while (j < n_ && s_[j].isLetter()) ++j;
    } else if (j < n_) {
      ++j;
    }
    QString name = s_.mid(i_ + 1, j - i_ - 1);
    i_ = j;
    return name;
  }

  Node row(Stop stop) {
    Node r;
    ++depth_;
    while (true) {
      skip_spaces();
      if (i_ >= n_) break;
      const QChar c = s_[i_];
      if (stop == Stop::brace && c == u'}') break;
      if (stop == Stop::bracket && c == u']') break;
      if ((stop == Stop::cell) && (c == u'&' || at("\\\\") || at("\\end"))) break;
      if (stop == Stop::right && at("\\right")) break;
      if (stop != Stop::cell && at("\\end")) break;
      if (c == u'}' && stop != Stop::brace) break;
      if (depth_ > kMaxDepth) {  // too deep: the rest as text
        const int end = static_cast<int>(s_.indexOf(u'}', i_));
        const int e = end < 0 ? n_ : end;
        r.kids.push_back(Node{Node::textual, s_.mid(i_, e - i_), {}, {}});
        i_ = e;
        break;
      }
      Node a = atom();
      scripts(a);
      if (a.kind == Node::row && a.kids.empty() && a.text.isEmpty()) continue;
      r.kids.push_back(std::move(a));
    }
    --depth_;
    return r;
  }

  void scripts(Node& a) {
    while (true) {
      skip_spaces();
      if (i_ >= n_) return;
      const QChar c = s_[i_];
      if (c != u'^' && c != u'_' && c != u'\'') return;
      if (a.kind != Node::scripts && a.kind != Node::bigop) {
        Node s;
        s.kind = Node::scripts;
        s.kids = {std::move(a), Node{}, Node{}};
        a = std::move(s);
      }
      Node& sub = a.kids[a.kind == Node::bigop ? 0 : 1];
      Node& sup = a.kids[a.kind == Node::bigop ? 1 : 2];
      ++i_;
      if (c == u'\'') {
        sup.kids.push_back(Node{Node::op, QStringLiteral("′"), {}, {}});
        a.hasSup = true;
      } else if (c == u'^') {
        Node arg = argument();
        if (a.hasSup)
          sup.kids.push_back(std::move(arg));
        else
          sup = std::move(arg);
        a.hasSup = true;
      } else {
        sub = argument();
        a.hasSub = true;
      }
    }
  }

  Node argument() {
    skip_spaces();
    if (i_ >= n_) return Node{};
    if (s_[i_] == u'{') {
      ++i_;
      Node g = row(Stop::brace);
      if (i_ < n_ && s_[i_] == u'}') ++i_;
      return g;
    }
    if (s_[i_] == u'\\') return atom();
    if (s_[i_].isDigit()) return Node{Node::number, QString(s_[i_++]), {}, {}};  // x^23 is x²3
    return atom();
  }

  QString raw_group() {  // {text} verbatim
    skip_spaces();
    if (i_ >= n_ || s_[i_] != u'{') return i_ < n_ ? QString(s_[i_++]) : QString();
    int depth = 0, j = i_;
    for (; j < n_; ++j) {
      if (s_[j] == u'{')
        ++depth;
      else if (s_[j] == u'}' && --depth == 0)
        break;
    }
    const QString t = s_.mid(i_ + 1, j - i_ - 1);
    i_ = std::min(n_, j + 1);
    return t;
  }

  QString delimiter() {
    skip_spaces();
    if (i_ >= n_) return {};
    if (s_[i_] == u'\\') {
      const QString name = command_name();
      if (name == u"{" || name == u"lbrace") return QStringLiteral("{");
      if (name == u"}" || name == u"rbrace") return QStringLiteral("}");
      if (name == u"|" || name == u"Vert") return QStringLiteral("‖");
      return symbols().value(name, relations().value(name));
    }
    const QChar c = s_[i_++];
    return c == u'.' ? QString() : QString(c);
  }

  Node atom() {
    const QChar c = s_[i_];
    if (c == u'{') {
      ++i_;
      Node g = row(Stop::brace);
      if (i_ < n_ && s_[i_] == u'}') ++i_;
      return g;
    }
    if (c == u'\\') return command();
    ++i_;
    if (c.isLetter()) return Node{Node::ident, QString(c), {}, {}};
    if (c.isDigit() || c == u'.') {
      int j = i_;
      while (j < n_ && (s_[j].isDigit() || (s_[j] == u'.' && j + 1 < n_ && s_[j + 1].isDigit()))) ++j;
      Node num{Node::number, s_.mid(i_ - 1, j - i_ + 1), {}, {}};
      i_ = j;
      return num;
    }
    switch (c.unicode()) {
      case '+':
        return Node{Node::rel, QStringLiteral("+"), {}, {}};
      case '-':
        return Node{Node::rel, QStringLiteral("−"), {}, {}};
      case '=':
        return Node{Node::rel, QStringLiteral("="), {}, {}};
      case '<':
        return Node{Node::rel, QStringLiteral("<"), {}, {}};
      case '>':
        return Node{Node::rel, QStringLiteral(">"), {}, {}};
      case '*':
        return Node{Node::rel, QStringLiteral("∗"), {}, {}};
      case '~':
        return Node{Node::space, QStringLiteral(" "), {}, {}};
      case ',':
        return Node{Node::op, QStringLiteral(",\u00A0"), {}, {}};
      case ';':
        return Node{Node::op, QStringLiteral(";\u00A0"), {}, {}};
      default:
        return Node{Node::op, QString(c), {}, {}};
    }
  }

  Node command() {
    const QString name = command_name();
    if (name.isEmpty()) return Node{Node::textual, QStringLiteral("\\"), {}, {}};
    if (name == u"," || name == u":" || name == u";" || name == u" ")
      return Node{Node::space, QStringLiteral(" "), {}, {}};
    if (name == u"!") return Node{};
    if (name == u"quad") return Node{Node::space, QStringLiteral("  "), {}, {}};
    if (name == u"qquad") return Node{Node::space, QStringLiteral("    "), {}, {}};
    if (name == u"\\") return Node{Node::space, QStringLiteral(" "), {}, {}};
    if (name == u"frac" || name == u"dfrac" || name == u"tfrac" || name == u"cfrac" || name == u"binom" ||
        name == u"over") {
      Node f;
      f.kind = Node::frac;
      f.kids.push_back(argument());
      f.kids.push_back(argument());
      if (name == u"binom") {
        f.bar = false;
        Node b;
        b.kind = Node::fenced;
        b.text = QStringLiteral("(");
        b.right = QStringLiteral(")");
        b.kids.push_back(std::move(f));
        return b;
      }
      return f;
    }
    if (name == u"sqrt") {
      Node r;
      r.kind = Node::root;
      Node index;
      skip_spaces();
      if (i_ < n_ && s_[i_] == u'[') {
        ++i_;
        index = row(Stop::bracket);
        if (i_ < n_ && s_[i_] == u']') ++i_;
      }
      r.kids.push_back(argument());
      r.kids.push_back(std::move(index));
      return r;
    }
    if (name == u"text" || name == u"textrm" || name == u"textit" || name == u"textbf" || name == u"mbox" ||
        name == u"operatorname" || name == u"mathrm" || name == u"textsf" || name == u"texttt") {
      Node t{Node::textual, raw_group(), {}, {}};
      t.bold = name == u"textbf";
      if (name == u"operatorname") t.text += QStringLiteral(" ");
      return t;
    }
    if (name == u"mathbb") return Node{Node::textual, double_struck(raw_group()), {}, {}};
    if (name == u"mathbf" || name == u"boldsymbol" || name == u"bm" || name == u"mathit" || name == u"mathcal" ||
        name == u"mathsf" || name == u"mathtt" || name == u"mathscr" || name == u"mathfrak") {
      Node wrap;
      wrap.bold = name == u"mathbf" || name == u"boldsymbol" || name == u"bm";
      wrap.kids.push_back(argument());
      return wrap;
    }
    if (name == u"left") {
      Node f;
      f.kind = Node::fenced;
      f.text = delimiter();
      f.kids.push_back(row(Stop::right));
      if (at("\\right")) {
        i_ += 6;
        f.right = delimiter();
      }
      return f;
    }
    if (name == u"right") return Node{Node::op, delimiter(), {}, {}};
    if (name == u"big" || name == u"Big" || name == u"bigg" || name == u"Bigg" || name == u"bigl" || name == u"bigr" ||
        name == u"Bigl" || name == u"Bigr" || name == u"biggl" || name == u"biggr")
      return Node{Node::op, delimiter(), {}, {}};
    if (name == u"limits" || name == u"nolimits" || name == u"displaystyle" || name == u"textstyle" ||
        name == u"nonumber" || name == u"notag")
      return Node{};
    if (name == u"begin") return environment(raw_group());
    if (name == u"hat" || name == u"bar" || name == u"vec" || name == u"tilde" || name == u"dot" || name == u"ddot" ||
        name == u"overline" || name == u"widehat" || name == u"widetilde" || name == u"underline") {
      Node a;
      a.kind = Node::accent;
      a.text = name == u"hat" || name == u"widehat"       ? QStringLiteral("\u0302")
               : name == u"bar"                           ? QStringLiteral("\u0304")
               : name == u"vec"                           ? QStringLiteral("\u20D7")
               : name == u"tilde" || name == u"widetilde" ? QStringLiteral("\u0303")
               : name == u"dot"                           ? QStringLiteral("\u0307")
               : name == u"ddot"                          ? QStringLiteral("\u0308")
               : name == u"underline"                     ? QStringLiteral("_")
                                                          : QString();
      a.kids.push_back(argument());
      return a;
    }
    if (name == u"not") {
      Node n = atom();
      if (n.kind == Node::rel || n.kind == Node::op) n.text += QChar(0x0338);
      return n;
    }
    if (const auto it = big_operators().constFind(name); it != big_operators().constEnd()) {
      Node b;
      b.kind = Node::bigop;
      b.text = *it;
      b.limits = !name.contains(u"int");
      b.kids = {Node{}, Node{}};
      return b;
    }
    if (is_function_name(name)) return Node{Node::textual, name, {}, {}};
    if (const auto it = relations().constFind(name); it != relations().constEnd()) return Node{Node::rel, *it, {}, {}};
    if (const auto it = symbols().constFind(name); it != symbols().constEnd()) {
      const bool greek_lower = it->size() == 1 && it->at(0) >= QChar(0x3B1) && it->at(0) <= QChar(0x3D6);
      return Node{greek_lower ? Node::ident : Node::op, *it, {}, {}};
    }
    return Node{Node::textual, QStringLiteral("\\") + name, {}, {}};  // unknown: shown as written
  }

  Node environment(const QString& env) {
    Node m;
    m.kind = Node::matrix;
    const QString e = env.endsWith(u'*') ? env.chopped(1) : env;
    if (e == u"pmatrix") {
      m.text = QStringLiteral("(");
      m.right = QStringLiteral(")");
    } else if (e == u"bmatrix") {
      m.text = QStringLiteral("[");
      m.right = QStringLiteral("]");
    } else if (e == u"Bmatrix" || e == u"cases") {
      m.text = QStringLiteral("{");
      m.right = e == u"cases" ? QString() : QStringLiteral("}");
    } else if (e == u"vmatrix") {
      m.text = m.right = QStringLiteral("|");
    } else if (e == u"Vmatrix") {
      m.text = m.right = QStringLiteral("‖");
    }
    m.aligned = e == u"aligned" || e == u"align" || e == u"split" || e == u"eqnarray" || e == u"alignat" ||
                e == u"cases" || e == u"gathered" || e == u"gather";
    if (e == u"array") raw_group();  // the column spec
    Node current_row;
    while (i_ < n_) {
      current_row.kids.push_back(row(Stop::cell));
      if (i_ >= n_) break;
      if (s_[i_] == u'&') {
        ++i_;
        continue;
      }
      if (at("\\\\")) {
        i_ += 2;
        m.kids.push_back(std::move(current_row));
        current_row = Node{};
        continue;
      }
      if (at("\\end")) {
        i_ += 4;
        raw_group();
        break;
      }
      ++i_;  // a stray closer inside an environment
    }
    if (!current_row.kids.empty() && !(current_row.kids.size() == 1 && current_row.kids[0].kids.empty()))
      m.kids.push_back(std::move(current_row));
    return m;
  }

  const QString& s_;
  const int n_;
  int i_ = 0;
  int depth_ = 0;
};

}  // namespace

Node parse_tex(const QString& tex) {
  Parser parser(tex);
  return parser.parse();
}

}  // namespace math

namespace {

constexpr int kMaxSpanSearch = 2000;  // a span's closing delimiter is looked for this far

// Between the dollars at `open` and `close` of `s`: shell variables, not math. "$PATH:$HOME",
// "$dir/$file", "$HOME/bin:$PATH" (the span ends in a list or path separator right before the
// next variable's name), "$HOME/x$" or "$XDG_DATA_HOME:$y" (a capitals name, then a separator).
bool shell_variables(const QString& s, int open, int close) {
  const QChar last = s[close - 1];
  if ((last == u':' || last == u'/') && close + 1 < s.size() &&
      (s[close + 1].isLetter() || s[close + 1] == u'_' || s[close + 1] == u'{'))
    return true;
  int k = open + 1;
  while (k < close && (s[k].isUpper() || s[k].isDigit() || s[k] == u'_')) ++k;
  return k - open - 1 >= 2 && !s[open + 1].isDigit() && k < close && (s[k] == u':' || s[k] == u'/');
}

}  // namespace

std::vector<MathSpan> find_math_spans(const QString& s) {
  std::vector<MathSpan> spans;
  const int n = static_cast<int>(s.size());
  int i = 0;
  const auto find_close = [&](const QString& close, int from) -> int {
    const int limit = std::min(n, from + kMaxSpanSearch);
    const int at = static_cast<int>(s.indexOf(close, from));
    if (at < 0 || at + close.size() > limit + close.size()) return -1;
    if (s.mid(from, at - from).contains(QLatin1String("\n\n"))) return -1;
    return at;
  };
  while (i < n) {
    const QChar c = s[i];
    if (c == u'`') {  // a code span: skip to the closing run of the same length
      int run = 0;
      while (i + run < n && s[i + run] == u'`') ++run;
      const QString fence(run, u'`');
      int j = i + run;
      int close = -1;
      while ((j = static_cast<int>(s.indexOf(fence, j))) >= 0) {
        int k = j;
        while (k < n && s[k] == u'`') ++k;
        if (k - j == run) {
          close = j;
          break;
        }
        j = k;
      }
      i = close < 0 ? i + run : close + run;
      continue;
    }
    if (c == u'\\' && i + 1 < n) {
      const QChar d = s[i + 1];
      if (d == u'(' || d == u'[') {
        const int close = find_close(d == u'(' ? QStringLiteral("\\)") : QStringLiteral("\\]"), i + 2);
        if (close > i + 2) {
          spans.push_back({i, close + 2, d == u'[', s.mid(i + 2, close - i - 2)});
          i = close + 2;
          continue;
        }
      }
      i += 2;  // an escape, \$ included
      continue;
    }
    if (c == u'$') {
      if (i + 1 < n && s[i + 1] == u'$') {
        const int close = find_close(QStringLiteral("$$"), i + 2);
        if (close > i + 2 && !s.mid(i + 2, close - i - 2).trimmed().isEmpty()) {
          spans.push_back({i, close + 2, true, s.mid(i + 2, close - i - 2)});
          i = close + 2;
        } else {
          i += 2;
        }
        continue;
      }
      if (i + 1 < n && !s[i + 1].isSpace()) {
        int j = i + 1;
        int close = -1;
        const int limit = std::min(n, i + 1 + kMaxSpanSearch);
        while (j < limit) {
          if (s[j] == u'\\') {
            j += 2;
            continue;
          }
          if (s[j] == u'\n' && j + 1 < n && s[j + 1] == u'\n') break;
          if (s[j] == u'$') {
            const bool after_space = s[j - 1].isSpace();
            const bool before_digit = j + 1 < n && s[j + 1].isDigit();
            if (!after_space && !before_digit && j > i + 1 && !shell_variables(s, i, j)) close = j;
            break;  // a $ that does not close leaves the first one as text
          }
          ++j;
        }
        if (close > 0) {
          spans.push_back({i, close + 1, false, s.mid(i + 1, close - i - 1)});
          i = close + 1;
          continue;
        }
      }
    }
    ++i;
  }
  return spans;
}

}  // namespace day0::app
