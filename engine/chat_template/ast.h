#pragma once
// The syntax tree of a template: jinja2's node types, reduced to what chat templates use.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat_template/value.h"

namespace day0::chat_template {

enum class NodeType : std::uint8_t {
  // Expressions.
  constant,   // value
  name,       // name
  getattr,    // a.name
  getitem,    // a[b]
  slice,      // a:b:c (any may be null), only inside getitem
  call,       // a(args, kwargs, *dyn_args, **dyn_kwargs)
  filter,     // a | name(args) ; a is null in filter blocks and `set x | f`
  test,       // a is name(args)
  cond_expr,  // b if a else c
  and_op,     // a and b
  or_op,      // a or b
  not_op,     // not a
  neg,        // -a
  pos,        // +a
  binop,      // a <name> b: + - * / // % **
  concat,     // args joined with ~
  compare,    // a op1 x1 op2 x2 ... (ops: ==, !=, <, <=, >, >=, in, notin)
  list_lit,   // [args]
  tuple_lit,  // (args)
  dict_lit,   // {args[0]: args[1], ...}
  // Statements.
  output,        // args: data constants and expressions
  if_stmt,       // if a: body else: else_body
  for_stmt,      // for target in a [if b] [recursive]: body else: else_body
  assign,        // target = a
  assign_block,  // set target [| filter b] body endset
  macro,         // macro name(params=defaults) body
  call_block,    // call(params) a body
  filter_block,  // filter b body
  with_stmt,     // with targets=args body
  break_stmt,
  continue_stmt,
  scope_block,  // {% block %} and transformers' {% generation %}: renders body
  nsref,        // target only: name.attr
  load_stmt,    // extends / include / import / from: fails when reached (no template loader)
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeType type;
  std::uint32_t offset = 0;  // where it starts in the source (for error positions)
  Value value;
  std::string name;
  NodePtr a, b, c;
  NodePtr target;
  std::vector<NodePtr> args;
  std::vector<std::pair<std::string, NodePtr>> kwargs;
  NodePtr dyn_args, dyn_kwargs;
  std::vector<std::string> ops;  // compare operators, aligned with args
  std::vector<NodePtr> body, else_body;
  std::vector<std::string> params;  // macro / caller parameters
  std::vector<NodePtr> defaults;    // defaults of the last params.size() - defaults.size() params
  bool recursive = false;           // for loops
  bool known = true;                // filters/tests: does the name exist? (unknown: fails when reached)
  bool uses_caller = false;         // macro bodies that call caller()
  bool uses_varargs = false;
  bool uses_kwargs = false;

  Node(NodeType t, std::uint32_t off) : type(t), offset(off) {}
};

struct Template {
  std::string name;
  std::string source;  // normalized, for error positions
  std::vector<NodePtr> body;
  void position(std::uint32_t offset, int* line, int* column) const;
};

}  // namespace day0::chat_template
