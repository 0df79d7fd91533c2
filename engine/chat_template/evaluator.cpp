#include "chat_template/evaluator.h"

#include <memory>

#include "chat_template/builtins.h"
#include "chat_template/objects.h"

namespace day0::chat_template {

namespace {

struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;

  Value* find(const std::string& name) {
    for (Scope* s = this; s; s = s->parent.get())
      for (auto& [k, v] : s->vars)
        if (k == name) return &v;
    return nullptr;
  }
  void set(const std::string& name, Value v) {
    for (auto& [k, old] : vars) {
      if (k == name) {
        old = std::move(v);
        return;
      }
    }
    vars.emplace_back(name, std::move(v));
  }
};
using ScopePtr = std::shared_ptr<Scope>;

ScopePtr child_of(const ScopePtr& parent) {
  auto s = std::make_shared<Scope>();
  s->parent = parent;
  return s;
}

// A macro, or the `caller` of a call block: the node, and the scope it closes over.
struct MacroObject : ObjectBase {
  const Node* node = nullptr;
  ScopePtr closure;
  std::string name;
  bool explicit_caller = false;  // a parameter is named caller
  std::string repr() const override { return "<Macro " + repr_string(name) + ">"; }
  std::string type_name() const override { return "Macro"; }
  std::string module() const override { return "jinja2.runtime"; }
  bool get_attr(const std::string& attr, Value* out) const override {
    if (attr == "name") {
      *out = Value::string(name);
      return true;
    }
    if (attr == "arguments") {
      std::vector<Value> args;
      for (const auto& p : node->params) args.push_back(Value::string(p));
      *out = Value::tuple(std::move(args));
      return true;
    }
    if (attr == "catch_kwargs" || attr == "catch_varargs" || attr == "caller") {
      const bool v = attr == "catch_kwargs"    ? node->uses_kwargs
                     : attr == "catch_varargs" ? node->uses_varargs
                                               : node->uses_caller;
      *out = Value::boolean(v);
      return true;
    }
    return false;
  }
};

struct LoopState {
  std::vector<Value> items;
  int depth0 = 0;
  const Node* node = nullptr;  // the for statement (recursive loops call it again)
  ScopePtr scope;              // the scope the loop runs in
  Value last_changed;
  bool changed_called = false;
};

struct LoopObject;
struct LoopMethod : BuiltinCallable {
  std::shared_ptr<LoopState> state;
  std::size_t index0 = 0;
  std::string name;
  std::string repr() const override { return "<bound method LoopContext." + name + ">"; }
  std::string type_name() const override { return "method"; }
  Value call(const CallArgs& args) const override {
    if (name == "cycle") {
      if (args.args.empty()) fail(ErrorKind::type, "no items for cycling given");
      return args.args[index0 % args.args.size()];
    }
    // changed(*values)
    const Value current = Value::tuple(args.args);
    if (!state->changed_called || !py_equal(current, state->last_changed)) {
      state->changed_called = true;
      state->last_changed = current;
      return Value::boolean(true);
    }
    return Value::boolean(false);
  }
};

struct LoopObject : ObjectBase {
  std::shared_ptr<LoopState> state;
  std::size_t index0 = 0;
  std::string repr() const override {
    return "<LoopContext " + std::to_string(index0 + 1) + "/" + std::to_string(state->items.size()) + ">";
  }
  std::string type_name() const override { return "LoopContext"; }
  std::string module() const override { return "jinja2.runtime"; }
  bool get_attr(const std::string& attr, Value* out) const override {
    const auto n = static_cast<std::int64_t>(state->items.size());
    const auto i = static_cast<std::int64_t>(index0);
    if (attr == "index") {
      *out = Value::integer(i + 1);
    } else if (attr == "index0") {
      *out = Value::integer(i);
    } else if (attr == "revindex") {
      *out = Value::integer(n - i);
    } else if (attr == "revindex0") {
      *out = Value::integer(n - i - 1);
    } else if (attr == "first") {
      *out = Value::boolean(i == 0);
    } else if (attr == "last") {
      *out = Value::boolean(i == n - 1);
    } else if (attr == "length") {
      *out = Value::integer(n);
    } else if (attr == "depth") {
      *out = Value::integer(state->depth0 + 1);
    } else if (attr == "depth0") {
      *out = Value::integer(state->depth0);
    } else if (attr == "previtem") {
      *out = i > 0 ? state->items[index0 - 1] : Value::undefined_with_message("", "there is no previous item");
    } else if (attr == "nextitem") {
      *out = i + 1 < n ? state->items[index0 + 1] : Value::undefined_with_message("", "there is no next item");
    } else if (attr == "cycle" || attr == "changed") {
      auto m = std::make_shared<LoopMethod>();
      m->state = state;
      m->index0 = index0;
      m->name = attr;
      *out = Value::object(Value::Kind::callable, std::move(m));
    } else {
      return false;
    }
    return true;
  }
};

enum class Flow { normal, break_loop, continue_loop };

class Renderer {
 public:
  Renderer(const Template& tmpl, const DictData& vars, const RenderLimits& limits)
      : tmpl_(tmpl), vars_(vars), limits_(limits) {}
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // A macro closes over the scope that holds it (scope -> macro -> closure -> scope), and a
  // loop's state can hold its own loop object (loop.changed(loop)): cycles of shared pointers
  // that would leak every scope and value of the render. Nothing outlives the render, so the
  // links are cut here, newest first, so that freeing one never walks a chain of older ones.
  ~Renderer() {
    for (auto it = loops_.rbegin(); it != loops_.rend(); ++it) {
      if (const auto state = it->lock()) {
        state->last_changed = Value();
        state->scope.reset();
      }
    }
    for (auto it = macros_.rbegin(); it != macros_.rend(); ++it)
      if (const auto m = it->lock()) m->closure.reset();
  }

  std::string run() {
    root_ = std::make_shared<Scope>();
    std::string out;
    exec_body(tmpl_.body, root_, out);
    return out;
  }

 private:
  struct DepthGuard {
    DepthGuard(Renderer* r) : r_(r) {
      if (++r_->depth_ > r_->limits_.max_depth)
        fail(ErrorKind::budget,
             "the template nests or recurses deeper than " + std::to_string(r_->limits_.max_depth) + " levels");
    }
    ~DepthGuard() { --r_->depth_; }
    Renderer* r_;
  };

  void locate(TemplateError& e, const Node& n) const {
    if (e.line == 0) tmpl_.position(n.offset, &e.line, &e.column);
  }

  void emit(std::string& out, std::string_view text) {
    out += text;
    if (out.size() > limits_.max_output_bytes)
      fail(ErrorKind::budget,
           "the rendering exceeds the output limit of " + std::to_string(limits_.max_output_bytes) + " bytes");
  }

  // ---- statements ----

  Flow exec_body(const std::vector<NodePtr>& body, const ScopePtr& scope, std::string& out) {
    for (const auto& stmt : body) {
      const Flow f = exec(*stmt, scope, out);
      if (f != Flow::normal) return f;
    }
    return Flow::normal;
  }

  Flow exec(const Node& n, const ScopePtr& scope, std::string& out) {
    DepthGuard guard(this);
    charge(1);
    try {
      return exec_inner(n, scope, out);
    } catch (TemplateError& e) {
      locate(e, n);
      throw;
    }
  }

  Flow exec_inner(const Node& n, const ScopePtr& scope, std::string& out) {
    switch (n.type) {
      case NodeType::output:
        for (const auto& part : n.args) {
          if (part->type == NodeType::constant && part->value.is_string()) {
            emit(out, part->value.str());
          } else {
            const Value v = eval(*part, scope);
            if (v.is_string()) {
              emit(out, v.str());
            } else {
              emit(out, py_str(v));
            }
          }
        }
        return Flow::normal;
      case NodeType::if_stmt:
        if (truthy(eval(*n.a, scope))) return exec_body(n.body, scope, out);
        return exec_body(n.else_body, scope, out);
      case NodeType::for_stmt:
        return exec_for(n, scope, out, eval(*n.a, scope), 0);
      case NodeType::assign:
        assign(*n.target, eval(*n.a, scope), scope);
        return Flow::normal;
      case NodeType::assign_block: {
        std::string text;
        const Flow f = exec_body(n.body, child_of(scope), text);
        Value v = Value::string(std::move(text));
        if (n.b) v = apply_filter_chain(*n.b, v, scope);
        assign(*n.target, v, scope);
        return f;
      }
      case NodeType::macro: {
        auto m = std::make_shared<MacroObject>();
        track(m);
        m->node = &n;
        m->closure = scope;
        m->name = n.name;
        for (const auto& p : n.params) m->explicit_caller = m->explicit_caller || p == "caller";
        scope->set(n.name, Value::object(Value::Kind::callable, std::move(m)));
        return Flow::normal;
      }
      case NodeType::call_block: {
        auto caller = std::make_shared<MacroObject>();
        track(caller);
        caller->node = &n;
        caller->closure = scope;
        caller->name = "caller";
        const Value v = eval_call(*n.a, scope, Value::object(Value::Kind::callable, std::move(caller)));
        emit(out, py_str(v));
        return Flow::normal;
      }
      case NodeType::filter_block: {
        std::string text;
        exec_body(n.body, child_of(scope), text);
        emit(out, py_str(apply_filter_chain(*n.b, Value::string(std::move(text)), scope)));
        return Flow::normal;
      }
      case NodeType::with_stmt: {
        auto inner = child_of(scope);
        for (std::size_t i = 0; i < n.args.size(); ++i) {
          const Value v = eval(*n.defaults[i], scope);
          assign(*n.args[i], v, inner);
        }
        return exec_body(n.body, inner, out);
      }
      case NodeType::scope_block:
        return exec_body(n.body, child_of(scope), out);
      case NodeType::load_stmt:
        fail(ErrorKind::type, "no loader for this environment specified");
      case NodeType::break_stmt:
        return Flow::break_loop;
      case NodeType::continue_stmt:
        return Flow::continue_loop;
      default:
        fail(ErrorKind::runtime, "unexpected statement");
    }
  }

  Value apply_filter_chain(const Node& filter, const Value& input, const ScopePtr& scope) {
    // The chain is nested with the first filter innermost and a null input at the bottom.
    Value in = input;
    if (filter.a) in = apply_filter_chain(*filter.a, input, scope);
    if (!filter.known) fail(ErrorKind::runtime, "No filter named '" + filter.name + "' found.");
    return call_filter(filter.name, in, eval_args(filter, scope));
  }

  void unpack(const Node& target, const Value& v, const ScopePtr& scope) {
    const auto items = iterate(v);
    const std::size_t want = target.args.size();
    if (items.size() > want)
      fail(ErrorKind::value, "too many values to unpack (expected " + std::to_string(want) + ")");
    if (items.size() < want)
      fail(ErrorKind::value, "not enough values to unpack (expected " + std::to_string(want) + ", got " +
                                 std::to_string(items.size()) + ")");
    for (std::size_t i = 0; i < want; ++i) assign(*target.args[i], items[i], scope);
  }

  void assign(const Node& target, const Value& v, const ScopePtr& scope) {
    switch (target.type) {
      case NodeType::name:
        scope->set(target.name, v);
        return;
      case NodeType::tuple_lit:
        unpack(target, v, scope);
        return;
      case NodeType::nsref: {
        const Value ns = lookup(target.name, scope);
        if (!ns.is_ns()) fail(ErrorKind::runtime, "cannot assign attribute on non-namespace object");
        const std::string& attr = target.a->value.str();
        check_namespace_value(v);
        note_child(const_cast<NamespaceData&>(ns.ns_data()), v);
        if (Value* slot = ns.ns_data().find(attr)) {
          *slot = v;
        } else {
          ns.ns_data().attrs.emplace_back(attr, v);
        }
        return;
      }
      default:
        fail(ErrorKind::syntax, "can't assign to this expression");
    }
  }

  Flow exec_for(const Node& n, const ScopePtr& scope, std::string& out, const Value& iterable, int depth0) {
    std::vector<Value> items = iterate(iterable);
    if (n.b) {
      std::vector<Value> kept;
      for (const Value& item : items) {
        auto probe = child_of(scope);
        assign(*n.target, item, probe);
        if (truthy(eval(*n.b, probe))) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      exec_body(n.else_body, child_of(scope), out);
      return Flow::normal;
    }
    auto state = std::make_shared<LoopState>();
    track(loops_, state);
    state->items = std::move(items);
    state->depth0 = depth0;
    state->node = &n;
    state->scope = scope;
    for (std::size_t i = 0; i < state->items.size(); ++i) {
      charge(1);
      auto iter_scope = child_of(scope);
      auto loop = std::make_shared<LoopObject>();
      loop->state = state;
      loop->index0 = i;
      iter_scope->set("loop", Value::object(Value::Kind::object, std::move(loop)));
      assign(*n.target, state->items[i], iter_scope);
      const Flow f = exec_body(n.body, iter_scope, out);
      if (f == Flow::break_loop) break;
    }
    return Flow::normal;
  }

  // ---- expressions ----

  Value lookup(const std::string& name, const ScopePtr& scope) {
    if (Value* v = scope->find(name)) return *v;
    if (const Value* v = vars_.find(std::string_view(name))) return *v;
    Value g;
    if (lookup_global(name, &g)) return g;
    return Value::undefined_named(name);
  }

  CallArgs eval_args(const Node& n, const ScopePtr& scope) {
    CallArgs call;
    for (const auto& a : n.args) call.args.push_back(eval(*a, scope));
    for (const auto& [k, v] : n.kwargs) call.kwargs.emplace_back(k, eval(*v, scope));
    if (n.dyn_args)
      for (const Value& v : iterate(eval(*n.dyn_args, scope))) call.args.push_back(v);
    if (n.dyn_kwargs) {
      const Value d = eval(*n.dyn_kwargs, scope);
      if (!d.is_dict()) fail(ErrorKind::type, "argument after ** must be a mapping, not " + type_name(d));
      for (const auto& [k, v] : d.dict_data().entries) {
        if (!k.is_string()) fail(ErrorKind::type, "keywords must be strings");
        call.kwargs.emplace_back(k.str(), v);
      }
    }
    return call;
  }

  Value eval(const Node& n, const ScopePtr& scope) {
    DepthGuard guard(this);
    charge(1);
    try {
      return eval_inner(n, scope);
    } catch (TemplateError& e) {
      locate(e, n);
      throw;
    }
  }

  Value eval_call(const Node& call, const ScopePtr& scope, const Value& caller) {
    const Value callee = eval(*call.a, scope);
    CallArgs args = eval_args(call, scope);
    if (!caller.is_undefined()) args.kwargs.emplace_back("caller", caller);
    return call_value(callee, args);
  }

  Value call_value(const Value& callee, const CallArgs& args) {
    if (callee.is_undefined()) fail_undefined(callee);
    if (callee.kind() == Value::Kind::callable) {
      if (const auto* m = dynamic_cast<const MacroObject*>(callee.heap().get())) return call_macro(*m, args);
    }
    if (callee.kind() == Value::Kind::object) {
      if (const auto* loop = dynamic_cast<const LoopObject*>(callee.heap().get())) {
        if (!loop->state->node->recursive)
          fail(ErrorKind::type, "The loop must have the 'recursive' marker to be called recursively.");
        if (args.args.size() != 1 || !args.kwargs.empty()) fail(ErrorKind::type, "loop() takes exactly one argument");
        std::string out;
        exec_for(*loop->state->node, loop->state->scope, out, args.args[0], loop->state->depth0 + 1);
        return Value::string(std::move(out));
      }
    }
    return call_builtin(callee, args);
  }

  Value call_macro(const MacroObject& m, const CallArgs& call) {
    DepthGuard guard(this);
    const Node& n = *m.node;
    const std::size_t nparams = n.params.size();
    auto scope = child_of(m.closure);
    std::vector<std::pair<std::string, Value>> kwargs = call.kwargs;
    auto take_kwarg = [&](const std::string& name, Value* out) {
      for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
        if (it->first == name) {
          *out = it->second;
          kwargs.erase(it);
          return true;
        }
      }
      return false;
    };
    bool found_caller = m.explicit_caller && call.args.size() >= nparams;
    for (std::size_t i = 0; i < nparams; ++i) {
      const std::string& param = n.params[i];
      Value v;
      bool have = false;
      if (i < call.args.size()) {
        v = call.args[i];
        have = true;
      } else {
        have = take_kwarg(param, &v);
        if (param == "caller") found_caller = true;
      }
      if (!have) {
        const std::size_t first_default = nparams - n.defaults.size();
        if (i >= first_default) {
          v = eval(*n.defaults[i - first_default], scope);
        } else {
          v = Value::undefined_with_message(param, "parameter " + repr_string(param) + " was not provided");
        }
      }
      scope->set(param, v);
    }
    if (n.uses_caller && !found_caller) {
      Value caller;
      if (!take_kwarg("caller", &caller)) {
        caller = Value::undefined_with_message("caller", "No caller defined");
      }
      scope->set("caller", caller);
    }
    if (n.uses_kwargs) {
      DictData d;
      for (auto& [k, v] : kwargs) d.set(Value::string(k), v);
      scope->set("kwargs", Value::dict(std::move(d)));
    } else if (!kwargs.empty()) {
      if (kwargs.front().first == "caller")
        fail(ErrorKind::type,
             "macro " + repr_string(m.name) +
                 " was invoked with two values for the special caller argument. This is most likely a bug.");
      fail(ErrorKind::type,
           "macro " + repr_string(m.name) + " takes no keyword argument " + repr_string(kwargs.front().first));
    }
    if (n.uses_varargs) {
      std::vector<Value> extra;
      for (std::size_t i = nparams; i < call.args.size(); ++i) extra.push_back(call.args[i]);
      scope->set("varargs", Value::tuple(std::move(extra)));
    } else if (call.args.size() > nparams) {
      fail(ErrorKind::type,
           "macro " + repr_string(m.name) + " takes not more than " + std::to_string(nparams) + " argument(s)");
    }
    std::string out;
    exec_body(n.body, scope, out);
    return Value::string(std::move(out));
  }

  Value eval_inner(const Node& n, const ScopePtr& scope) {
    switch (n.type) {
      case NodeType::constant:
        return n.value;
      case NodeType::name:
        return lookup(n.name, scope);
      case NodeType::getattr:
        return get_attr(eval(*n.a, scope), n.name);
      case NodeType::getitem: {
        const Value obj = eval(*n.a, scope);
        if (n.b->type == NodeType::slice) {
          const Node& s = *n.b;
          const Value start = s.a ? eval(*s.a, scope) : Value::none();
          const Value stop = s.b ? eval(*s.b, scope) : Value::none();
          const Value step = s.c ? eval(*s.c, scope) : Value::none();
          return get_slice(obj, start, stop, step);
        }
        return get_item(obj, eval(*n.b, scope));
      }
      case NodeType::call:
        return eval_call(n, scope, Value());
      case NodeType::filter: {
        const Value in = n.a ? eval(*n.a, scope) : Value();
        if (!n.known) fail(ErrorKind::runtime, "No filter named '" + n.name + "' found.");
        return call_filter(n.name, in, eval_args(n, scope));
      }
      case NodeType::test: {
        const Value in = eval(*n.a, scope);
        if (!n.known) fail(ErrorKind::runtime, "No test named '" + n.name + "' found.");
        return Value::boolean(call_test(n.name, in, eval_args(n, scope)));
      }
      case NodeType::cond_expr:
        if (truthy(eval(*n.a, scope))) return eval(*n.b, scope);
        if (n.c) return eval(*n.c, scope);
        return Value::undefined_with_message(
            "", "the inline if-expression evaluated to false and no else section was defined.");
      case NodeType::and_op: {
        Value left = eval(*n.a, scope);
        if (!truthy(left)) return left;
        return eval(*n.b, scope);
      }
      case NodeType::or_op: {
        Value left = eval(*n.a, scope);
        if (truthy(left)) return left;
        return eval(*n.b, scope);
      }
      case NodeType::not_op:
        return Value::boolean(!truthy(eval(*n.a, scope)));
      case NodeType::neg:
        return unary_op('-', eval(*n.a, scope));
      case NodeType::pos:
        return unary_op('+', eval(*n.a, scope));
      case NodeType::binop: {
        const Value a = eval(*n.a, scope);
        const Value b = eval(*n.b, scope);
        return binary_op(n.name, a, b);
      }
      case NodeType::concat: {
        std::string out;
        for (const auto& part : n.args) {
          append_str(out, eval(*part, scope));
          check_size(out.size());
        }
        return Value::string(std::move(out));
      }
      case NodeType::compare: {
        Value left = eval(*n.a, scope);
        for (std::size_t i = 0; i < n.ops.size(); ++i) {
          const Value right = eval(*n.args[i], scope);
          const std::string& op = n.ops[i];
          bool ok;
          if (op == "==") {
            ok = py_equal(left, right);
          } else if (op == "!=") {
            ok = !py_equal(left, right);
          } else if (op == "in") {
            ok = py_in(left, right);
          } else if (op == "notin") {
            ok = !py_in(left, right);
          } else {
            const int c = py_compare(left, right, op.c_str());
            ok = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
          }
          if (!ok) return Value::boolean(false);
          left = right;
        }
        return Value::boolean(true);
      }
      case NodeType::list_lit:
      case NodeType::tuple_lit: {
        std::vector<Value> items;
        items.reserve(n.args.size());
        for (const auto& a : n.args) items.push_back(eval(*a, scope));
        return n.type == NodeType::list_lit ? Value::list(std::move(items)) : Value::tuple(std::move(items));
      }
      case NodeType::dict_lit: {
        DictData d;
        for (std::size_t i = 0; i + 1 < n.args.size(); i += 2) {
          Value k = eval(*n.args[i], scope);
          if ((k.is_list() && !k.is_tuple()) || k.is_dict())
            fail(ErrorKind::type, "unhashable type: '" + type_name(k) + "'");
          d.set(std::move(k), eval(*n.args[i + 1], scope));
        }
        return Value::dict(std::move(d));
      }
      default:
        fail(ErrorKind::runtime, "unexpected expression");
    }
  }

  // Forgets what was already freed before a list grows, so it stays as long as what is alive.
  template <typename T>
  static void track(std::vector<std::weak_ptr<T>>& list, const std::shared_ptr<T>& p) {
    if (list.size() == list.capacity()) std::erase_if(list, [](const std::weak_ptr<T>& w) { return w.expired(); });
    list.push_back(p);
  }
  void track(const std::shared_ptr<MacroObject>& m) { track(macros_, m); }

  const Template& tmpl_;
  const DictData& vars_;
  const RenderLimits& limits_;
  ScopePtr root_;
  int depth_ = 0;
  std::vector<std::weak_ptr<MacroObject>> macros_;
  std::vector<std::weak_ptr<LoopState>> loops_;
};

}  // namespace

std::string render_template(const Template& tmpl, const DictData& variables, const RenderLimits& limits,
                            const std::tm* clock) {
  Budget budget;
  budget.steps_left = limits.max_steps;
  budget.max_value_bytes = limits.max_output_bytes;
  struct Restore {
    Budget* saved_budget;
    ~Restore() {
      set_current_budget(saved_budget);
      set_fixed_clock(nullptr);
    }
  } restore{current_budget()};
  set_current_budget(&budget);
  set_fixed_clock(clock);
  Renderer r(tmpl, variables, limits);
  return r.run();
}

}  // namespace day0::chat_template
