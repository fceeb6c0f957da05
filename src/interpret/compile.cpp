// LoweredFunc -> Program: resolves variables and buffers to slots by lexical scope and
// checks, once, everything that does not depend on the arguments.
#include <fmt/format.h>

#include <utility>

#include "expr/extern_calls.h"
#include "expr/intrinsic_info.h"
#include "interpret/extern_registry.h"
#include "interpret/lane_ops.h"
#include "interpret/program.h"
#include "te/tensor.h"

namespace te::interp {
namespace {

class Compiler {
 public:
  explicit Compiler(Program& p) : p_(p) {}

  // A new slot for v, visible until unbind_var (innermost binding wins).
  int bind_var(const VarNode* v) {
    int slot = p_.var_slots++;
    p_.slot_vars.push_back(v);
    vars_.emplace_back(v, slot);
    return slot;
  }
  void unbind_var() { vars_.pop_back(); }
  // The slot of v if it is in scope, else -1.
  int find_var(const VarNode* v) const {
    for (size_t k = vars_.size(); k-- > 0;)
      if (vars_[k].first == v) return vars_[k].second;
    return -1;
  }
  int bind_buffer(const BufferNode* b) {
    int slot = p_.buffer_slots++;
    buffers_.emplace_back(b, slot);
    return slot;
  }
  void unbind_buffer() { buffers_.pop_back(); }

  const CExpr* expr(const Expr& e);
  const CStmt* stmt(const Stmt& s);

 private:
  int var_slot(const VarNode* v) const {
    int slot = find_var(v);
    if (slot < 0)
      throw Error(
          fmt::format("variable '{}' is used but not bound (not a parameter, a shape "
                      "variable, a loop variable or a let)",
                      v->name));
    return slot;
  }
  int buffer_slot(const Buffer& b, DataType access, bool is_store) const {
    int slot = -1;
    for (size_t k = buffers_.size(); k-- > 0 && slot < 0;)
      if (buffers_[k].first == b.get()) slot = buffers_[k].second;
    if (slot < 0)
      throw Error(
          fmt::format("buffer '{}' is accessed but is neither a parameter nor inside "
                      "its Allocate",
                      b.name()));
    if (access.element_of() != b.dtype())
      throw Error(fmt::format("{} of {} {} buffer '{}' of element type {}", is_store ? "store" : "load",
                              access.to_string(), is_store ? "to" : "from", b.name(), b.dtype().to_string()));
    return slot;
  }
  // e, which must have 1 or `lanes` lanes.
  const CExpr* operand(const Expr& e, int lanes, const char* what) {
    const CExpr* c = expr(e);
    if (c->type.lanes() != 1 && c->type.lanes() != lanes)
      throw Error(
          fmt::format("{} has type {} where a scalar or {} lanes are expected", what, c->type.to_string(), lanes));
    return c;
  }
  const CExpr* scalar(const Expr& e, const char* what) {
    const CExpr* c = expr(e);
    if (!c->type.is_scalar())
      throw Error(fmt::format("{} must be a scalar, but has type {}", what, c->type.to_string()));
    return c;
  }
  const CExpr* scalar_int(const Expr& e, const char* what) {
    const CExpr* c = scalar(e, what);
    if (!c->type.is_integer())
      throw Error(fmt::format("{} must be an integer, but has type {}", what, c->type.to_string()));
    return c;
  }
  const CExpr* condition(const Expr& e, int lanes, const char* what) {
    const CExpr* c = operand(e, lanes, what);
    if (c->type.is_float()) throw Error(fmt::format("{} must be bool, but has type {}", what, c->type.to_string()));
    return c;
  }
  std::vector<const CExpr*> indices(const std::vector<Expr>& in, const Buffer& b, int lanes) {
    std::vector<const CExpr*> out;
    for (const Expr& i : in) {
      const CExpr* c = operand(i, lanes, "an index");
      if (!c->type.is_integer())
        throw Error(fmt::format("an index into buffer '{}' has type {}; indices must be integers", b.name(),
                                c->type.to_string()));
      out.push_back(c);
    }
    return out;
  }

  // Marks the operands a backend may evaluate in some threads only.
  struct Conditional {
    Conditional(Compiler& c, bool on = true) : c_(c), on_(on) { c_.conditional_ += on_; }
    ~Conditional() { c_.conditional_ -= on_; }
    Compiler& c_;
    int on_;
  };

  const CExpr* shuffle(const CallNode* n, CExpr& c) {
    if (in_shuffle_) throw Error("a warp shuffle's argument contains another warp shuffle");
    if (conditional_ > 0)
      throw Error(
          "a warp shuffle inside a select, an if_then_else or the right operand of && or || runs in "
          "only some threads of a warp (CUDA evaluates one side of ?:), but every thread must run it: "
          "bind the shuffle's result with a let first");
    in_shuffle_ = true;
    c.a = scalar(n->args[0], "a warp shuffle's value");
    c.b = scalar_int(n->args[1], "a warp shuffle's delta");
    c.c = scalar_int(n->args[2], "a warp shuffle's thread index");
    in_shuffle_ = false;
    c.arg_type = c.a->type;
    c.slot = p_.shuffle_slots++;
    shuffles_.push_back(&c);
    return &c;
  }
  // A call_extern: the registered host function, whose signature must be the call's.
  const CExpr* extern_call(const CallNode* n, CExpr& c) {
    const std::string& name = n->extern_name;
    c.op = EOp::Extern;
    c.host = find_host_function(name);
    if (!c.host)
      throw Error(
          fmt::format("call_extern '{}' has no host function registered with te::register_extern "
                      "(interpret() runs extern calls on the host: register a C++ function of the "
                      "same signature, {})",
                      name, extern_signature(n).to_string()));
    ExternSignature call = extern_signature(n);
    ExternSignature host{c.host->ret, c.host->params};
    if (call != host)
      throw Error(
          fmt::format("call_extern '{}' is called as {} but the host function registered with "
                      "te::register_extern is {}",
                      name, call.to_string(), host.to_string()));
    for (const Expr& a : n->args) c.args.push_back(operand(a, c.type.lanes(), "an extern call's argument"));
    return &c;
  }

  // The shuffles compiled since the last call, which must belong to a store or a let.
  std::vector<const CExpr*> take_shuffles(StmtKind owner) {
    if (!shuffles_.empty() && owner != StmtKind::Store && owner != StmtKind::LetStmt)
      throw Error(
          "a warp shuffle may only appear in the value, index or predicate of a store or "
          "in a let's value");
    return std::exchange(shuffles_, {});
  }

 public:
  // Statement s's own expressions are compiled: attach their shuffles to c.
  void attach_shuffles(CStmt& c) {
    c.shuffles = take_shuffles(c.kind);
    if (!c.shuffles.empty()) c.has_barrier = true;
  }

 private:
  Program& p_;
  bool in_shuffle_ = false;
  int conditional_ = 0;
  std::vector<const CExpr*> shuffles_;
  std::vector<std::pair<const VarNode*, int>> vars_;
  std::vector<std::pair<const BufferNode*, int>> buffers_;
};

const CExpr* Compiler::expr(const Expr& e) {
  if (!e.defined()) throw Error("an expression in the function body is undefined");
  CExpr& c = p_.exprs.emplace_back();
  c.type = e->dtype;
  const int lanes = c.type.lanes();
  switch (e->kind) {
    case ExprKind::IntImm:
      c.op = EOp::Const;
      c.imm = int_scalar(e.as<IntImmNode>()->value);
      return &c;
    case ExprKind::FloatImm:
      c.op = EOp::Const;
      c.imm = float_scalar(round_to_float_type(e.as<FloatImmNode>()->value, c.type));
      return &c;
    case ExprKind::Var:
      c.op = EOp::Var;
      c.slot = var_slot(e.as<VarNode>());
      return &c;
    case ExprKind::Cast: {
      auto* n = e.as<CastNode>();
      c.op = EOp::Cast;
      c.a = operand(n->value, lanes, "a cast's value");
      c.arg_type = c.a->type.element_of();
      return &c;
    }
    case ExprKind::Binary: {
      auto* n = e.as<BinaryNode>();
      c.op = EOp::Binary;
      c.bin = n->op;
      c.a = operand(n->a, lanes, "an operand");
      {
        Conditional only_sometimes(*this, is_logical(n->op));  // CUDA's && and || short-circuit
        c.b = operand(n->b, lanes, "an operand");
      }
      if (c.a->type.element_of() != c.b->type.element_of())
        throw Error(fmt::format("operands of '{}' have different types {} and {}", binop_name(n->op),
                                c.a->type.to_string(), c.b->type.to_string()));
      c.arg_type = c.a->type.element_of();
      return &c;
    }
    case ExprKind::Not:
      c.op = EOp::Not;
      c.a = condition(e.as<NotNode>()->a, lanes, "the operand of '!'");
      return &c;
    case ExprKind::Select: {
      auto* n = e.as<SelectNode>();
      c.op = EOp::Select;
      c.a = condition(n->cond, lanes, "a select condition");
      Conditional only_sometimes(*this);  // printed as CUDA's ?:
      c.b = operand(n->true_value, lanes, "a select value");
      c.c = operand(n->false_value, lanes, "a select value");
      return &c;
    }
    case ExprKind::Load: {
      auto* n = e.as<LoadNode>();
      c.op = EOp::Load;
      c.slot = buffer_slot(n->buffer, c.type, false);
      c.indices = indices(n->indices, n->buffer, lanes);
      if (n->predicate.defined()) c.predicate = condition(n->predicate, lanes, "a load predicate");
      return &c;
    }
    case ExprKind::Ramp: {
      auto* n = e.as<RampNode>();
      c.op = EOp::Ramp;
      c.a = scalar(n->base, "a ramp's base");
      c.b = scalar(n->stride, "a ramp's stride");
      if (c.a->type != c.type.element_of() || c.b->type != c.type.element_of())
        throw Error(fmt::format("a ramp of type {} has base {} and stride {}", c.type.to_string(),
                                c.a->type.to_string(), c.b->type.to_string()));
      return &c;
    }
    case ExprKind::Broadcast:
      c.op = EOp::Broadcast;
      c.a = scalar(e.as<BroadcastNode>()->value, "a broadcast value");
      return &c;
    case ExprKind::Call: {
      auto* n = e.as<CallNode>();
      if (n->op == Intrinsic::ThreadAllreduce)
        throw Error(
            "thread_allreduce is a marker that lower() expands itself (pass "
            "lower_thread_allreduce); it cannot run");
      if (n->op == Intrinsic::Extern) return extern_call(n, c);
      if (n->args.size() != intrinsic_arity(n->op))
        throw Error(fmt::format("{} takes {} arguments, got {}", intrinsic_name(n->op), intrinsic_arity(n->op),
                                n->args.size()));
      if (n->op == Intrinsic::IfThenElse) {
        c.op = EOp::IfThenElse;
        c.a = condition(n->args[0], lanes, "an if_then_else condition");
        Conditional only_sometimes(*this);
        c.b = operand(n->args[1], lanes, "an if_then_else value");
        c.c = operand(n->args[2], lanes, "an if_then_else value");
        return &c;
      }
      c.op = EOp::Call;
      c.fn = n->op;
      if (n->op == Intrinsic::WarpShuffleDown) return shuffle(n, c);
      const CExpr** slots[] = {&c.a, &c.b, &c.c};
      for (size_t k = 0; k < n->args.size(); ++k) *slots[k] = operand(n->args[k], lanes, "an intrinsic's argument");
      c.arg_type = c.a->type.element_of();
      if (is_float_only(n->op) && !c.arg_type.is_float())
        throw Error(fmt::format("{} needs a float argument, got {}", intrinsic_name(n->op), c.arg_type.to_string()));
      if (is_bitwise(n->op) && !c.arg_type.is_integer())
        throw Error(fmt::format("{} needs integer arguments, got {}", intrinsic_name(n->op), c.arg_type.to_string()));
      return &c;
    }
    case ExprKind::Let: {
      auto* n = e.as<LetNode>();
      c.op = EOp::Let;
      c.a = scalar(n->value, "a let value");
      c.slot = bind_var(n->var.get());
      c.b = operand(n->body, lanes, "a let body");
      unbind_var();
      return &c;
    }
    case ExprKind::TensorRead: {
      auto* n = e.as<TensorReadNode>();
      throw Error(
          fmt::format("a read of tensor '{}' is not loop IR: lower() the schedule "
                      "before interpreting",
                      n->op ? n->op->name : std::string("?")));
    }
    case ExprKind::Reduce:
      throw Error(
          fmt::format("a {} reduction is not loop IR: lower() the schedule before "
                      "interpreting",
                      e.as<ReduceNode>()->combiner ? e.as<ReduceNode>()->combiner->name.c_str()
                                                   : reducer_name(e.as<ReduceNode>()->reducer)));
  }
  TE_ICHECK(false, "compile: unknown expression kind");
  return nullptr;
}

const CStmt* Compiler::stmt(const Stmt& s) {
  if (!s.defined()) throw Error("a statement in the function body is undefined");
  CStmt& c = p_.stmts.emplace_back();
  c.kind = s->kind;
  auto add_child = [&](const Stmt& child) {
    const CStmt* k = child.defined() ? stmt(child) : nullptr;
    c.children.push_back(k);
    if (k && k->has_barrier) c.has_barrier = true;
  };
  switch (s->kind) {
    case StmtKind::LetStmt: {
      auto* n = s.as<LetStmtNode>();
      c.value = scalar(n->value, "a let value");
      attach_shuffles(c);
      c.slot = bind_var(n->var.get());
      add_child(n->body);
      unbind_var();
      return &c;
    }
    case StmtKind::For: {
      auto* n = s.as<ForNode>();
      c.min = scalar_int(n->min, "a loop's min");
      c.extent = scalar_int(n->extent, "a loop's extent");
      attach_shuffles(c);
      c.var_type = n->var.dtype();
      if (!c.var_type.is_integer() || !c.var_type.is_scalar())
        throw Error(fmt::format("loop variable '{}' has type {}; it must be a scalar integer", n->var.name(),
                                c.var_type.to_string()));
      c.gpu_threads = n->for_kind == ForKind::ThreadBinding && n->thread_tag.rfind("threadIdx.", 0) == 0;
      c.slot = bind_var(n->var.get());
      add_child(n->body);
      unbind_var();
      return &c;
    }
    case StmtKind::Store: {
      auto* n = s.as<StoreNode>();
      c.value = expr(n->value);
      const int lanes = c.value->type.lanes();
      c.slot = buffer_slot(n->buffer, c.value->type, true);
      c.indices = indices(n->indices, n->buffer, lanes);
      if (n->predicate.defined()) c.predicate = condition(n->predicate, lanes, "a store predicate");
      c.atomic_add = n->atomic_add;
      attach_shuffles(c);
      return &c;
    }
    case StmtKind::Allocate: {
      auto* n = s.as<AllocateNode>();
      c.buffer = n->buffer.get();
      for (const Expr& extent : n->buffer.shape()) c.shape.push_back(scalar_int(extent, "a buffer extent"));
      attach_shuffles(c);
      c.slot = bind_buffer(n->buffer.get());
      add_child(n->body);
      unbind_buffer();
      return &c;
    }
    case StmtKind::IfThenElse: {
      auto* n = s.as<IfThenElseNode>();
      c.value = condition(n->cond, 1, "an if condition");
      attach_shuffles(c);
      add_child(n->then_case);
      add_child(n->else_case);
      return &c;
    }
    case StmtKind::Seq:
      for (const Stmt& child : s.as<SeqNode>()->seq) add_child(child);
      return &c;
    case StmtKind::Evaluate:
      c.value = expr(s.as<EvaluateNode>()->value);
      attach_shuffles(c);
      return &c;
    case StmtKind::Barrier: c.has_barrier = true; return &c;
    case StmtKind::Assert: {
      auto* n = s.as<AssertNode>();
      c.value = condition(n->cond, 1, "an assert condition");
      attach_shuffles(c);
      c.message = &n->message;
      add_child(n->body);
      return &c;
    }
    case StmtKind::TensorIntrinsicCall:
      // interpret() runs the intrinsic's declaration, which the node carries instantiated
      // on its regions: a sequence of that one statement.
      c.kind = StmtKind::Seq;
      add_child(s.as<TensorIntrinsicCallNode>()->body);
      return &c;
  }
  TE_ICHECK(false, "compile: unknown statement kind");
  return nullptr;
}

}  // namespace

Program compile(const LoweredFunc& f) {
  Program p;
  Compiler c(p);
  // Parameters: buffers, then the variables they and the scalar parameters bind. A shape
  // variable named by several parameters is one slot, checked for consistency at the call.
  for (const Param& param : f.params) {
    ParamBinding b;
    if (param.is_buffer()) {
      b.buffer_slot = c.bind_buffer(param.buffer.get());
      for (const Expr& extent : param.buffer.shape()) {
        const VarNode* v = extent.as<VarNode>();
        int slot = -1;
        if (v) slot = c.find_var(v) >= 0 ? c.find_var(v) : c.bind_var(v);
        b.shape_var_slots.push_back(slot);
      }
    } else {
      const VarNode* v = param.var.get();
      b.var_slot = c.find_var(v) >= 0 ? c.find_var(v) : c.bind_var(v);
    }
    p.params.push_back(std::move(b));
  }
  // Shape extents that are expressions see every parameter variable.
  for (size_t k = 0; k < f.params.size(); ++k) {
    const Param& param = f.params[k];
    if (!param.is_buffer()) continue;
    for (size_t d = 0; d < param.buffer.shape().size(); ++d) {
      const Expr& extent = param.buffer.shape()[d];
      const CExpr* e = nullptr;
      if (!extent.as<VarNode>()) {
        try {
          e = c.expr(extent);
        } catch (const InternalError&) {
          throw;
        } catch (const Error& err) {
          throw Error(fmt::format("parameter '{}' dimension {}: {}", param.name(), d, err.what()));
        }
      }
      p.params[k].shape_exprs.push_back(e);
    }
  }
  if (f.body.defined()) p.body = c.stmt(f.body);
  return p;
}

}  // namespace te::interp
