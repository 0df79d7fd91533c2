#include "chat_template/parser.h"

#include <initializer_list>

#include "chat_template/builtins.h"
#include "chat_template/lexer.h"

namespace day0::chat_template {

namespace {

std::string describe(const Token& t) {
  switch (t.type) {
    case Tok::data:
      return "template data";
    case Tok::variable_begin:
      return "begin of print statement";
    case Tok::variable_end:
      return "end of print statement";
    case Tok::block_begin:
      return "begin of statement block";
    case Tok::block_end:
      return "end of statement block";
    case Tok::name:
      return t.value;
    case Tok::string:
      return "string";
    case Tok::integer:
      return "integer";
    case Tok::floating:
      return "float";
    case Tok::op:
      return t.value;
    case Tok::eof:
      return "end of template";
  }
  return "token";
}

// Walks a macro body for the names jinja2 treats specially (caller, varargs, kwargs).
void find_special_names(const Node& n, Node& macro) {
  if (n.type == NodeType::name) {
    if (n.name == "caller") macro.uses_caller = true;
    if (n.name == "varargs") macro.uses_varargs = true;
    if (n.name == "kwargs") macro.uses_kwargs = true;
  }
  for (const NodePtr* p : {&n.a, &n.b, &n.c, &n.target, &n.dyn_args, &n.dyn_kwargs})
    if (*p) find_special_names(**p, macro);
  for (const auto& v : {&n.args, &n.body, &n.else_body, &n.defaults})
    for (const auto& child : *v)
      if (child) find_special_names(*child, macro);
  for (const auto& [k, v] : n.kwargs)
    if (v) find_special_names(*v, macro);
}

class Parser {
 public:
  Parser(LexedTemplate lexed, Template* out) : lexed_(std::move(lexed)), out_(out) {}

  void parse() {
    out_->body = subparse({});
    if (!pending_.empty()) fail_at(pending_.front().first, pending_.front().second);
  }

 private:
  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p_(p) {
      if (++p_->depth_ > kMaxParseDepth)
        p_->fail_here("the template nests deeper than " + std::to_string(kMaxParseDepth) + " levels");
    }
    ~DepthGuard() { --p_->depth_; }
    Parser* p_;
  };
  // Left-deep chains (a + b + c, x.y.z, v|f|g) nest in the tree as deeply as they are long:
  // each link counts as one level of nesting.
  struct ChainGuard {
    explicit ChainGuard(Parser* p) : p_(p) {}
    void link() {
      ++added_;
      if (++p_->depth_ > kMaxParseDepth)
        p_->fail_here("the template nests deeper than " + std::to_string(kMaxParseDepth) + " levels");
    }
    ~ChainGuard() { p_->depth_ -= added_; }
    Parser* p_;
    int added_ = 0;
  };
  // Restores the soft-frame flag (jinja2 checks unknown filters/tests at compile time except
  // directly inside `if` statements and inline if-expressions, where it checks when reached).
  struct SoftGuard {
    SoftGuard(Parser* p, bool soft) : p_(p), saved_(p->soft_) { p_->soft_ = soft; }
    ~SoftGuard() { p_->soft_ = saved_; }
    Parser* p_;
    bool saved_;
  };

  const Token& cur() const { return lexed_.tokens[pos_]; }
  const Token& look() const { return lexed_.tokens[pos_ + 1 < lexed_.tokens.size() ? pos_ + 1 : pos_]; }
  void next() {
    if (pos_ + 1 < lexed_.tokens.size()) ++pos_;
  }
  bool is_op(const char* op) const { return cur().type == Tok::op && cur().value == op; }
  bool is_name(const char* name) const { return cur().type == Tok::name && cur().value == name; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }

  [[noreturn]] void fail_at(std::uint32_t offset, std::string message) const {
    TemplateError e{ErrorKind::syntax, std::move(message)};
    lexed_.position(offset, &e.line, &e.column);
    throw e;
  }
  [[noreturn]] void fail_here(std::string message) const { fail_at(cur().offset, std::move(message)); }

  void expect_op(const char* op) {
    if (!is_op(op)) {
      if (cur().type == Tok::eof) fail_here(std::string("unexpected end of template, expected '") + op + "'.");
      fail_here(std::string("expected token '") + op + "', got '" + describe(cur()) + "'");
    }
    next();
  }
  void expect_block_end() {
    if (cur().type != Tok::block_end) {
      if (cur().type == Tok::eof) fail_here("unexpected end of template, expected 'end of statement block'.");
      fail_here("expected token 'end of statement block', got '" + describe(cur()) + "'");
    }
    next();
  }
  void expect_variable_end() {
    if (cur().type != Tok::variable_end) {
      if (cur().type == Tok::eof) fail_here("unexpected end of template, expected 'end of print statement'.");
      fail_here("expected token 'end of print statement', got '" + describe(cur()) + "'");
    }
    next();
  }
  std::string expect_name() {
    if (cur().type != Tok::name) fail_here("expected token 'name', got '" + describe(cur()) + "'");
    std::string v = cur().value;
    next();
    return v;
  }
  void expect_keyword(const char* name) {
    if (!is_name(name)) fail_here(std::string("expected token '") + name + "', got '" + describe(cur()) + "'");
    next();
  }

  NodePtr make(NodeType t) { return std::make_unique<Node>(t, cur().offset); }

  // ---- statements ----

  using EndTags = std::vector<std::string>;

  bool at_end_tag(const EndTags& ends) const {
    if (cur().type != Tok::name) return false;
    for (const auto& e : ends)
      if (cur().value == e) return true;
    return false;
  }

  std::vector<NodePtr> subparse(const EndTags& ends) {
    DepthGuard guard(this);
    std::vector<NodePtr> body;
    NodePtr output;
    auto add_output = [&](NodePtr n) {
      if (!output) output = std::make_unique<Node>(NodeType::output, n->offset);
      output->args.push_back(std::move(n));
    };
    auto flush = [&] {
      if (output) body.push_back(std::move(output));
    };
    while (cur().type != Tok::eof) {
      const Token& t = cur();
      if (t.type == Tok::data) {
        auto n = make(NodeType::constant);
        n->value = Value::string(t.value);
        next();
        add_output(std::move(n));
      } else if (t.type == Tok::variable_begin) {
        next();
        add_output(parse_tuple(false, true, {}, false));
        expect_variable_end();
      } else if (t.type == Tok::block_begin) {
        flush();
        next();
        if (!ends.empty() && at_end_tag(ends)) return body;
        auto stmt = parse_statement();
        if (stmt) body.push_back(std::move(stmt));
        expect_block_end();
      } else {
        fail_here("unexpected '" + describe(t) + "'");
      }
    }
    flush();
    if (!ends.empty()) fail_eof(ends);
    return body;
  }

  [[noreturn]] void fail_eof(const EndTags& ends) {
    std::string looking;
    for (std::size_t i = 0; i < ends.size(); ++i) looking += (i ? " or '" : "'") + ends[i] + "'";
    std::string msg = "Unexpected end of template. Jinja was looking for the following tags: " + looking + ".";
    if (!tag_stack_.empty()) msg += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
    fail_here(msg);
  }

  std::vector<NodePtr> parse_statements(const EndTags& ends, bool drop_needle) {
    skip_op(":");
    expect_block_end();
    end_stack_.push_back(ends);
    auto result = subparse(ends);
    end_stack_.pop_back();
    if (drop_needle) next();
    return result;
  }

  NodePtr parse_statement() {
    if (cur().type != Tok::name) fail_here("tag name expected");
    const std::string tag = cur().value;
    tag_stack_.push_back(tag);
    NodePtr n;
    if (tag == "if") {
      n = parse_if();
    } else if (tag == "for") {
      n = parse_for();
    } else if (tag == "set") {
      n = parse_set();
    } else if (tag == "macro") {
      n = parse_macro();
    } else if (tag == "call") {
      n = parse_call_block();
    } else if (tag == "filter") {
      n = parse_filter_block();
    } else if (tag == "with") {
      n = parse_with();
    } else if (tag == "block") {
      n = parse_block();
    } else if (tag == "generation") {
      n = make(NodeType::scope_block);
      next();
      SoftGuard soft(this, false);
      n->body = parse_statements({"endgeneration"}, true);
    } else if (tag == "print") {
      n = make(NodeType::output);
      next();
      n->args.push_back(parse_tuple(false, true, {}, false));
    } else if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail_here("'" + tag + "' outside loop");
      n = make(tag == "break" ? NodeType::break_stmt : NodeType::continue_stmt);
      next();
    } else if (tag == "extends" || tag == "include" || tag == "import" || tag == "from") {
      // jinja2 parses these and fails when they run: transformers' environment has no loader.
      n = make(NodeType::load_stmt);
      next();
      while (cur().type != Tok::block_end && cur().type != Tok::eof) next();
    } else if (tag == "autoescape" || tag == "do") {
      fail_here("Encountered unknown tag '" + tag + "'.");
    } else {
      tag_stack_.pop_back();
      std::string msg = "Encountered unknown tag '" + tag + "'.";
      if (!end_stack_.empty()) {
        std::string looking;
        for (std::size_t i = 0; i < end_stack_.back().size(); ++i)
          looking += (i ? " or '" : "'") + end_stack_.back()[i] + "'";
        msg += " Jinja was looking for the following tags: " + looking + ".";
      }
      if (!tag_stack_.empty()) msg += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
      fail_here(msg);
    }
    tag_stack_.pop_back();
    return n;
  }

  NodePtr parse_if() {
    auto result = make(NodeType::if_stmt);
    next();
    SoftGuard soft(this, true);
    Node* node = result.get();
    while (true) {
      node->a = parse_tuple(false, false, {}, false);
      node->body = parse_statements({"elif", "else", "endif"}, false);
      const std::string tok = cur().value;
      next();
      if (tok == "elif") {
        auto elif = make(NodeType::if_stmt);
        Node* raw = elif.get();
        node->else_body.push_back(std::move(elif));
        node = raw;
        continue;
      }
      if (tok == "else") node->else_body = parse_statements({"endif"}, true);
      break;
    }
    return result;
  }

  NodePtr parse_for() {
    auto n = make(NodeType::for_stmt);
    next();
    n->target = parse_assign_target(true, false, {"in"}, false);
    expect_keyword("in");
    n->a = parse_tuple(false, false, {"recursive"}, false);
    SoftGuard soft(this, false);
    if (skip_name("if")) n->b = parse_expression(true);
    n->recursive = skip_name("recursive");
    ++loop_depth_;
    n->body = parse_statements({"endfor", "else"}, false);
    --loop_depth_;
    const std::string tok = cur().value;
    next();
    if (tok != "endfor") {
      n->else_body = parse_statements({"endfor"}, true);
    }
    return n;
  }

  NodePtr parse_set() {
    const std::uint32_t at = cur().offset;
    next();
    auto target = parse_assign_target(true, false, {}, true);
    if (skip_op("=")) {
      auto n = std::make_unique<Node>(NodeType::assign, at);
      n->target = std::move(target);
      n->a = parse_tuple(false, true, {}, false);
      return n;
    }
    auto n = std::make_unique<Node>(NodeType::assign_block, at);
    n->target = std::move(target);
    SoftGuard soft(this, false);
    n->b = parse_filter(nullptr, false);
    n->body = parse_statements({"endset"}, true);
    return n;
  }

  void parse_signature(Node& n) {
    expect_op("(");
    while (!is_op(")")) {
      if (!n.params.empty()) expect_op(",");
      n.params.push_back(expect_name());
      if (skip_op("=")) {
        n.defaults.push_back(parse_expression(true));
      } else if (!n.defaults.empty()) {
        fail_here("non-default argument follows default argument");
      }
    }
    expect_op(")");
  }

  NodePtr parse_macro() {
    auto n = make(NodeType::macro);
    next();
    n->name = expect_name();
    SoftGuard soft(this, false);
    parse_signature(*n);
    const int saved_loop = loop_depth_;
    loop_depth_ = 0;
    n->body = parse_statements({"endmacro"}, true);
    loop_depth_ = saved_loop;
    for (const auto& stmt : n->body) find_special_names(*stmt, *n);
    return n;
  }

  NodePtr parse_call_block() {
    auto n = make(NodeType::call_block);
    next();
    if (is_op("(")) parse_signature(*n);
    n->a = parse_expression(true);
    if (n->a->type != NodeType::call) fail_at(n->a->offset, "expected call");
    SoftGuard soft(this, false);
    const int saved_loop = loop_depth_;
    loop_depth_ = 0;
    n->body = parse_statements({"endcall"}, true);
    loop_depth_ = saved_loop;
    for (const auto& stmt : n->body) find_special_names(*stmt, *n);
    return n;
  }

  NodePtr parse_filter_block() {
    auto n = make(NodeType::filter_block);
    next();
    SoftGuard soft(this, false);
    n->b = parse_filter(nullptr, true);
    n->body = parse_statements({"endfilter"}, true);
    return n;
  }

  NodePtr parse_with() {
    auto n = make(NodeType::with_stmt);
    next();
    SoftGuard soft(this, false);
    while (cur().type != Tok::block_end) {
      if (!n->args.empty()) expect_op(",");
      n->args.push_back(parse_assign_target(true, false, {}, false));
      expect_op("=");
      n->defaults.push_back(parse_expression(true));
    }
    n->body = parse_statements({"endwith"}, true);
    return n;
  }

  NodePtr parse_block() {
    auto n = make(NodeType::scope_block);
    next();
    n->name = expect_name();
    while (cur().type == Tok::name && (cur().value == "scoped" || cur().value == "required")) next();
    SoftGuard soft(this, false);
    n->body = parse_statements({"endblock"}, true);
    if (cur().type == Tok::name) next();
    return n;
  }

  // ---- assignment targets ----

  static bool can_assign(const Node& n) {
    if (n.type == NodeType::name) {
      static const char* kConst[] = {"true", "false", "none", "True", "False", "None"};
      for (const char* c : kConst)
        if (n.name == c) return false;
      return true;
    }
    if (n.type == NodeType::tuple_lit) {
      for (const auto& a : n.args)
        if (!can_assign(*a)) return false;
      return true;
    }
    return n.type == NodeType::nsref;
  }

  NodePtr parse_assign_target(bool with_tuple, bool name_only, const EndTags& extra_end, bool with_namespace) {
    NodePtr target;
    if (name_only) {
      target = make(NodeType::name);
      target->name = expect_name();
    } else if (with_namespace && cur().type == Tok::name && look().type == Tok::op && look().value == ".") {
      target = make(NodeType::nsref);
      target->name = expect_name();
      next();
      auto attr = make(NodeType::constant);
      attr->value = Value::string(expect_name());
      target->a = std::move(attr);
    } else if (with_tuple) {
      target = parse_tuple(true, true, extra_end, false);
    } else {
      target = parse_primary();
    }
    if (!can_assign(*target)) fail_at(target->offset, "can't assign to '" + std::string(node_kind(*target)) + "'");
    return target;
  }

  static const char* node_kind(const Node& n) {
    switch (n.type) {
      case NodeType::constant:
        return "const";
      case NodeType::name:
        return "name";
      case NodeType::tuple_lit:
        return "tuple";
      case NodeType::getattr:
        return "getattr";
      case NodeType::getitem:
        return "getitem";
      default:
        return "expression";
    }
  }

  // ---- expressions ----

  bool is_tuple_end(const EndTags& extra_end) const {
    if (cur().type == Tok::variable_end || cur().type == Tok::block_end || is_op(")")) return true;
    return at_end_tag(extra_end);
  }

  // simplified: primaries only (assignment targets); with_condexpr: allow `a if b else c`.
  NodePtr parse_tuple(bool simplified, bool with_condexpr, const EndTags& extra_end, bool explicit_parens) {
    const std::uint32_t at = cur().offset;
    std::vector<NodePtr> args;
    bool is_tuple = false;
    while (true) {
      if (!args.empty()) expect_op(",");
      if (is_tuple_end(extra_end)) break;
      if (simplified) {
        args.push_back(parse_primary());
      } else {
        args.push_back(parse_expression(with_condexpr));
      }
      if (is_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!args.empty()) return std::move(args[0]);
      if (!explicit_parens) fail_here("Expected an expression, got '" + describe(cur()) + "'");
    }
    auto n = std::make_unique<Node>(NodeType::tuple_lit, at);
    n->args = std::move(args);
    return n;
  }

  NodePtr parse_expression(bool with_condexpr) {
    DepthGuard guard(this);
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  NodePtr parse_condexpr() {
    const std::size_t pending_before = pending_.size();
    NodePtr expr1 = parse_or();
    // The whole conditional expression compiles in a soft frame: unknown filters and tests in
    // its first operand fail only when reached, like those after `if`.
    if (is_name("if")) pending_.resize(pending_before);
    ChainGuard chain(this);
    while (is_name("if")) {
      chain.link();
      const std::uint32_t at = cur().offset;
      next();
      SoftGuard soft(this, true);
      // jinja2 compiles the whole conditional expression in a soft frame.
      auto n = std::make_unique<Node>(NodeType::cond_expr, at);
      n->a = parse_or();
      if (skip_name("else")) n->c = parse_condexpr();
      n->b = std::move(expr1);
      expr1 = std::move(n);
    }
    return expr1;
  }

  NodePtr parse_or() {
    NodePtr left = parse_and();
    ChainGuard chain(this);
    while (is_name("or")) {
      chain.link();
      auto n = make(NodeType::or_op);
      next();
      n->a = std::move(left);
      n->b = parse_and();
      left = std::move(n);
    }
    return left;
  }

  NodePtr parse_and() {
    NodePtr left = parse_not();
    ChainGuard chain(this);
    while (is_name("and")) {
      chain.link();
      auto n = make(NodeType::and_op);
      next();
      n->a = std::move(left);
      n->b = parse_not();
      left = std::move(n);
    }
    return left;
  }

  NodePtr parse_not() {
    if (is_name("not")) {
      DepthGuard guard(this);
      auto n = make(NodeType::not_op);
      next();
      n->a = parse_not();
      return n;
    }
    return parse_compare();
  }

  NodePtr parse_compare() {
    NodePtr expr = parse_math1();
    NodePtr cmp;
    while (true) {
      std::string op;
      if (cur().type == Tok::op && (cur().value == "==" || cur().value == "!=" || cur().value == "<" ||
                                    cur().value == "<=" || cur().value == ">" || cur().value == ">=")) {
        op = cur().value;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && look().type == Tok::name && look().value == "in") {
        op = "notin";
        next();
        next();
      } else {
        break;
      }
      if (!cmp) {
        cmp = std::make_unique<Node>(NodeType::compare, expr->offset);
        cmp->a = std::move(expr);
      }
      cmp->ops.push_back(op);
      cmp->args.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(expr);
  }

  NodePtr binop(const std::string& op, NodePtr left, NodePtr right) {
    auto n = std::make_unique<Node>(NodeType::binop, left->offset);
    n->name = op;
    n->a = std::move(left);
    n->b = std::move(right);
    return n;
  }

  NodePtr parse_math1() {
    NodePtr left = parse_concat();
    ChainGuard chain(this);
    while (is_op("+") || is_op("-")) {
      chain.link();
      const std::string op = cur().value;
      next();
      left = binop(op, std::move(left), parse_concat());
    }
    return left;
  }

  NodePtr parse_concat() {
    NodePtr first = parse_math2();
    if (!is_op("~")) return first;
    auto n = std::make_unique<Node>(NodeType::concat, first->offset);
    n->args.push_back(std::move(first));
    while (skip_op("~")) n->args.push_back(parse_math2());
    return n;
  }

  NodePtr parse_math2() {
    NodePtr left = parse_pow();
    ChainGuard chain(this);
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      chain.link();
      const std::string op = cur().value;
      next();
      left = binop(op, std::move(left), parse_pow());
    }
    return left;
  }

  NodePtr parse_pow() {
    NodePtr left = parse_unary(true);
    ChainGuard chain(this);
    while (skip_op("**")) {
      chain.link();
      left = binop("**", std::move(left), parse_unary(true));
    }
    return left;
  }

  NodePtr parse_unary(bool with_filter) {
    DepthGuard guard(this);
    NodePtr node;
    if (is_op("-") || is_op("+")) {
      node = make(is_op("-") ? NodeType::neg : NodeType::pos);
      next();
      node->a = parse_unary(false);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  NodePtr parse_primary() {
    DepthGuard guard(this);
    const Token& t = cur();
    NodePtr n;
    if (t.type == Tok::name) {
      n = make(NodeType::constant);
      if (t.value == "true" || t.value == "True") {
        n->value = Value::boolean(true);
      } else if (t.value == "false" || t.value == "False") {
        n->value = Value::boolean(false);
      } else if (t.value == "none" || t.value == "None") {
        n->value = Value::none();
      } else {
        n->type = NodeType::name;
        n->name = t.value;
      }
      next();
    } else if (t.type == Tok::string) {
      n = make(NodeType::constant);
      std::string buf;
      while (cur().type == Tok::string) {
        buf += cur().value;
        next();
      }
      n->value = Value::string(std::move(buf));
    } else if (t.type == Tok::integer) {
      n = make(NodeType::constant);
      n->value = Value::integer(t.int_value);
      next();
    } else if (t.type == Tok::floating) {
      n = make(NodeType::constant);
      n->value = Value::floating(t.float_value);
      next();
    } else if (is_op("(")) {
      next();
      n = parse_tuple(false, true, {}, true);
      expect_op(")");
    } else if (is_op("[")) {
      n = make(NodeType::list_lit);
      next();
      while (!is_op("]")) {
        if (!n->args.empty()) expect_op(",");
        if (is_op("]")) break;
        n->args.push_back(parse_expression(true));
      }
      expect_op("]");
    } else if (is_op("{")) {
      n = make(NodeType::dict_lit);
      next();
      while (!is_op("}")) {
        if (!n->args.empty()) expect_op(",");
        if (is_op("}")) break;
        n->args.push_back(parse_expression(true));
        expect_op(":");
        n->args.push_back(parse_expression(true));
      }
      expect_op("}");
    } else {
      fail_here("unexpected '" + describe(t) + "'");
    }
    return n;
  }

  NodePtr parse_postfix(NodePtr node) {
    ChainGuard chain(this);
    while (true) {
      chain.link();
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  NodePtr parse_filter_expr(NodePtr node) {
    ChainGuard chain(this);
    while (true) {
      chain.link();
      if (is_op("|")) {
        node = parse_filter(std::move(node), false);
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  NodePtr parse_subscript(NodePtr node) {
    DepthGuard guard(this);
    const std::uint32_t at = cur().offset;
    if (skip_op(".")) {
      const Token& attr = cur();
      if (attr.type == Tok::name) {
        auto n = std::make_unique<Node>(NodeType::getattr, at);
        n->a = std::move(node);
        n->name = attr.value;
        next();
        return n;
      }
      if (attr.type != Tok::integer) fail_here("expected name or number");
      auto n = std::make_unique<Node>(NodeType::getitem, at);
      n->a = std::move(node);
      n->b = make(NodeType::constant);
      n->b->value = Value::integer(attr.int_value);
      next();
      return n;
    }
    expect_op("[");
    std::vector<NodePtr> args;
    while (!is_op("]")) {
      if (!args.empty()) expect_op(",");
      args.push_back(parse_subscribed());
    }
    expect_op("]");
    auto n = std::make_unique<Node>(NodeType::getitem, at);
    n->a = std::move(node);
    if (args.size() == 1) {
      n->b = std::move(args[0]);
    } else {
      n->b = std::make_unique<Node>(NodeType::tuple_lit, at);
      n->b->args = std::move(args);
    }
    return n;
  }

  NodePtr parse_subscribed() {
    auto slice = make(NodeType::slice);
    if (skip_op(":")) {
      // [:...]
    } else {
      NodePtr start = parse_expression(true);
      if (!is_op(":")) return start;
      next();
      slice->a = std::move(start);
    }
    if (is_op(":")) {
      // no stop
    } else if (!is_op("]") && !is_op(",")) {
      slice->b = parse_expression(true);
    }
    if (skip_op(":")) {
      if (!is_op("]") && !is_op(",")) slice->c = parse_expression(true);
    }
    return slice;
  }

  void parse_call_args(Node& n) {
    expect_op("(");
    bool require_comma = false;
    auto ensure = [&](bool ok) {
      if (!ok) fail_here("invalid syntax for function call expression");
    };
    while (!is_op(")")) {
      if (require_comma) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (is_op("*")) {
        ensure(!n.dyn_args && !n.dyn_kwargs);
        next();
        n.dyn_args = parse_expression(true);
      } else if (is_op("**")) {
        ensure(!n.dyn_kwargs);
        next();
        n.dyn_kwargs = parse_expression(true);
      } else if (cur().type == Tok::name && look().type == Tok::op && look().value == "=") {
        ensure(!n.dyn_kwargs);
        std::string key = cur().value;
        next();
        next();
        n.kwargs.emplace_back(std::move(key), parse_expression(true));
      } else {
        ensure(!n.dyn_args && !n.dyn_kwargs && n.kwargs.empty());
        n.args.push_back(parse_expression(true));
      }
      require_comma = true;
    }
    expect_op(")");
  }

  NodePtr parse_call(NodePtr node) {
    DepthGuard guard(this);
    auto n = make(NodeType::call);
    n->a = std::move(node);
    parse_call_args(*n);
    return n;
  }

  std::string parse_dotted_name() {
    std::string name = expect_name();
    while (skip_op(".")) name += "." + expect_name();
    return name;
  }

  NodePtr parse_filter(NodePtr node, bool start_inline) {
    ChainGuard chain(this);
    while (is_op("|") || start_inline) {
      chain.link();
      if (!start_inline) next();
      auto n = make(NodeType::filter);
      n->name = parse_dotted_name();
      if (is_op("(")) parse_call_args(*n);
      n->known = has_filter(n->name);
      if (!n->known && !soft_) pending_.emplace_back(n->offset, "No filter named '" + n->name + "'.");
      n->a = std::move(node);
      node = std::move(n);
      start_inline = false;
    }
    return node;
  }

  NodePtr parse_test(NodePtr node) {
    DepthGuard guard(this);
    next();  // is
    bool negated = false;
    if (skip_name("not")) negated = true;
    auto n = make(NodeType::test);
    n->name = parse_dotted_name();
    if (is_op("(")) {
      parse_call_args(*n);
    } else if ((cur().type == Tok::name || cur().type == Tok::string || cur().type == Tok::integer ||
                cur().type == Tok::floating || is_op("(") || is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail_here("You cannot chain multiple tests with is");
      NodePtr arg = parse_primary();
      n->args.push_back(parse_postfix(std::move(arg)));
    }
    n->known = has_test(n->name);
    if (!n->known && !soft_) pending_.emplace_back(n->offset, "No test named '" + n->name + "'.");
    n->a = std::move(node);
    if (!negated) return n;
    auto neg = std::make_unique<Node>(NodeType::not_op, n->offset);
    neg->a = std::move(n);
    return neg;
  }

  LexedTemplate lexed_;
  Template* out_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  bool soft_ = false;
  std::vector<std::string> tag_stack_;
  std::vector<EndTags> end_stack_;
  // Unknown filters/tests outside soft frames: compile errors unless they turn out to sit in
  // the first operand of an inline if-expression.
  std::vector<std::pair<std::uint32_t, std::string>> pending_;
};

}  // namespace

void Template::position(std::uint32_t offset, int* line, int* column) const {
  LexedTemplate tmp;
  tmp.source = source;
  tmp.position(offset, line, column);
}

std::unique_ptr<Template> parse_template(std::string_view source, std::string name) {
  auto out = std::make_unique<Template>();
  out->name = std::move(name);
  LexedTemplate lexed = lex(source);
  out->source = lexed.source;
  Parser parser(std::move(lexed), out.get());
  parser.parse();
  return out;
}

}  // namespace day0::chat_template
