// Statement builders, IRVisitor, IRMutator and substitute.
#include "te/ir.h"

#include <fmt/format.h>

#include <unordered_map>

#include "expr/make_node.h"

namespace te {

namespace {
void require(const Stmt& s, const char* what) {
  if (!s.defined()) throw Error(fmt::format("{}: the body statement is undefined", what));
}
void require(const Expr& e, const char* what) {
  if (!e.defined()) throw Error(fmt::format("{}: an expression is undefined", what));
}
}  // namespace

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::ThreadBinding: return "thread_binding";
  }
  return "?";
}

StmtKind Stmt::kind() const {
  if (!node_) throw Error("kind(): the statement is undefined");
  return node_->kind;
}

// ---- Builders ----
Stmt let_stmt(Var v, Expr value, Stmt body) {
  require(v, "let_stmt");
  require(value, "let_stmt");
  require(body, "let_stmt");
  if (v.dtype() != value.dtype())
    throw Error(fmt::format("let {}: variable has type {} but the value has type {}", v.name(), v.dtype().to_string(),
                            value.dtype().to_string()));
  return make_stmt<LetStmtNode>(std::move(v), std::move(value), std::move(body));
}

Stmt for_loop(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag) {
  require(v, "for");
  require(min, "for");
  require(extent, "for");
  require(body, "for");
  for (const Expr* e : {&min, &extent})
    if (!e->dtype().is_integer() || !e->dtype().is_scalar())
      throw Error(fmt::format("for {}: bounds must be scalar integers, got {}", v.name(), e->dtype().to_string()));
  if ((kind == ForKind::ThreadBinding) == thread_tag.empty())
    throw Error(fmt::format("for {}: a thread tag is required exactly for thread-bound loops", v.name()));
  return make_stmt<ForNode>(std::move(v), std::move(min), std::move(extent), kind, std::move(thread_tag),
                            std::move(body));
}

Stmt store(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate) {
  if (!buffer.defined()) throw Error("store: the buffer is undefined");
  require(value, "store");
  for (const Expr& i : indices) {
    require(i, "store");
    if (!i.dtype().is_integer())
      throw Error(fmt::format("store to '{}': indices must be integers, got {}", buffer.name(), i.dtype().to_string()));
  }
  if (value.dtype().element_of() != buffer.dtype())
    throw Error(fmt::format("store to '{}': value has type {} but the buffer holds {}", buffer.name(),
                            value.dtype().to_string(), buffer.dtype().to_string()));
  return make_stmt<StoreNode>(std::move(buffer), std::move(value), std::move(indices), std::move(predicate));
}

Stmt atomic_add(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate) {
  Stmt s = store(std::move(buffer), std::move(value), std::move(indices), std::move(predicate));
  const auto* n = s.as<StoreNode>();
  const DataType t = n->buffer.dtype();
  const bool supported = (t.is_float() && !t.is_bfloat() && t.bits() >= 32) || (t.is_int() && t.bits() >= 32);
  if (!supported)
    throw Error(
        fmt::format("atomic_add to '{}': te adds float32, float64, int32 and int64 atomically, not {} "
                    "(accumulate in float32 and cast afterwards)",
                    n->buffer.name(), t.to_string()));
  return make_stmt<StoreNode>(n->buffer, n->value, n->indices, n->predicate, true);
}

Stmt store_like(const StoreNode& like, Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate) {
  if (like.atomic_add) return atomic_add(std::move(buffer), std::move(value), std::move(indices), std::move(predicate));
  return store(std::move(buffer), std::move(value), std::move(indices), std::move(predicate));
}

Stmt allocate(Buffer buffer, Stmt body) {
  if (!buffer.defined()) throw Error("allocate: the buffer is undefined");
  require(body, "allocate");
  return make_stmt<AllocateNode>(std::move(buffer), std::move(body));
}

Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case) {
  require(cond, "if");
  require(then_case, "if");
  if (!cond.dtype().is_bool() || !cond.dtype().is_scalar())
    throw Error(fmt::format("if: the condition must be a scalar bool, got {}", cond.dtype().to_string()));
  return make_stmt<IfThenElseNode>(std::move(cond), std::move(then_case), std::move(else_case));
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (auto* q = s.as<SeqNode>())
      flat.insert(flat.end(), q->seq.begin(), q->seq.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1) return flat[0];
  return make_stmt<SeqNode>(std::move(flat));
}

Stmt evaluate(Expr value) {
  require(value, "evaluate");
  return make_stmt<EvaluateNode>(std::move(value));
}
Stmt barrier() { return make_stmt<BarrierNode>(); }
Stmt assert_stmt(Expr cond, std::string message, Stmt body) {
  require(cond, "assert");
  require(body, "assert");
  if (!cond.dtype().is_bool()) throw Error("assert: the condition must be bool");
  return make_stmt<AssertNode>(std::move(cond), std::move(message), std::move(body));
}
Stmt tensor_intrinsic_call(std::shared_ptr<const TensorIntrinsicNode> intrinsic, std::vector<Buffer> buffers,
                           std::vector<Expr> offsets, std::vector<std::vector<Expr>> strides, Stmt body,
                           std::optional<WarpSpecialization> producer) {
  TE_ICHECK(intrinsic != nullptr && buffers.size() == offsets.size() && buffers.size() == strides.size(),
            "tensor_intrinsic_call: malformed");
  require(body, "tensor_intrinsic_call");
  return make_stmt<TensorIntrinsicCallNode>(std::move(intrinsic), std::move(buffers), std::move(offsets),
                                            std::move(strides), std::move(body), producer);
}

// ---- IRVisitor ----
void IRVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e->kind) {
    case ExprKind::IntImm: return visit_int_imm(e.as<IntImmNode>());
    case ExprKind::FloatImm: return visit_float_imm(e.as<FloatImmNode>());
    case ExprKind::Var: return visit_var(e.as<VarNode>());
    case ExprKind::Cast: return visit_cast(e.as<CastNode>());
    case ExprKind::Binary: return visit_binary(e.as<BinaryNode>());
    case ExprKind::Not: return visit_not(e.as<NotNode>());
    case ExprKind::Select: return visit_select(e.as<SelectNode>());
    case ExprKind::Load: return visit_load(e.as<LoadNode>());
    case ExprKind::Ramp: return visit_ramp(e.as<RampNode>());
    case ExprKind::Broadcast: return visit_broadcast(e.as<BroadcastNode>());
    case ExprKind::Call: return visit_call(e.as<CallNode>());
    case ExprKind::Let: return visit_let(e.as<LetNode>());
    case ExprKind::TensorRead: return visit_tensor_read(e.as<TensorReadNode>());
    case ExprKind::Reduce: return visit_reduce(e.as<ReduceNode>());
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s->kind) {
    case StmtKind::LetStmt: return visit_let_stmt(s.as<LetStmtNode>());
    case StmtKind::For: return visit_for(s.as<ForNode>());
    case StmtKind::Store: return visit_store(s.as<StoreNode>());
    case StmtKind::Allocate: return visit_allocate(s.as<AllocateNode>());
    case StmtKind::IfThenElse: return visit_if_then_else(s.as<IfThenElseNode>());
    case StmtKind::Seq: return visit_seq(s.as<SeqNode>());
    case StmtKind::Evaluate: return visit_evaluate(s.as<EvaluateNode>());
    case StmtKind::Barrier: return visit_barrier(s.as<BarrierNode>());
    case StmtKind::Assert: return visit_assert(s.as<AssertNode>());
    case StmtKind::TensorIntrinsicCall: return visit_tensor_intrinsic_call(s.as<TensorIntrinsicCallNode>());
  }
}

void IRVisitor::visit_cast(const CastNode* n) { visit(n->value); }
void IRVisitor::visit_binary(const BinaryNode* n) {
  visit(n->a);
  visit(n->b);
}
void IRVisitor::visit_not(const NotNode* n) { visit(n->a); }
void IRVisitor::visit_select(const SelectNode* n) {
  visit(n->cond);
  visit(n->true_value);
  visit(n->false_value);
}
void IRVisitor::visit_load(const LoadNode* n) {
  for (const Expr& i : n->indices) visit(i);
  visit(n->predicate);
}
void IRVisitor::visit_ramp(const RampNode* n) {
  visit(n->base);
  visit(n->stride);
}
void IRVisitor::visit_broadcast(const BroadcastNode* n) { visit(n->value); }
void IRVisitor::visit_call(const CallNode* n) {
  for (const Expr& a : n->args) visit(a);
}
void IRVisitor::visit_let(const LetNode* n) {
  visit(n->value);
  visit(n->body);
}
void IRVisitor::visit_tensor_read(const TensorReadNode* n) {
  for (const Expr& i : n->indices) visit(i);
}
void IRVisitor::visit_reduce(const ReduceNode* n) {
  for (const IterVar& iv : n->axis) {
    visit(iv.dom().min);
    visit(iv.dom().extent);
  }
  for (const Expr& s : n->sources) visit(s);
  visit(n->condition);
}
void IRVisitor::visit_let_stmt(const LetStmtNode* n) {
  visit(n->value);
  visit(n->body);
}
void IRVisitor::visit_for(const ForNode* n) {
  visit(n->min);
  visit(n->extent);
  visit(n->body);
}
void IRVisitor::visit_store(const StoreNode* n) {
  visit(n->value);
  for (const Expr& i : n->indices) visit(i);
  visit(n->predicate);
}
void IRVisitor::visit_allocate(const AllocateNode* n) {
  for (const Expr& e : n->buffer.shape()) visit(e);
  visit(n->body);
}
void IRVisitor::visit_if_then_else(const IfThenElseNode* n) {
  visit(n->cond);
  visit(n->then_case);
  visit(n->else_case);
}
void IRVisitor::visit_seq(const SeqNode* n) {
  for (const Stmt& s : n->seq) visit(s);
}
void IRVisitor::visit_evaluate(const EvaluateNode* n) { visit(n->value); }
void IRVisitor::visit_assert(const AssertNode* n) {
  visit(n->cond);
  visit(n->body);
}
void IRVisitor::visit_tensor_intrinsic_call(const TensorIntrinsicCallNode* n) {
  for (const Expr& e : n->offsets) visit(e);
  for (const std::vector<Expr>& s : n->strides)
    for (const Expr& e : s) visit(e);
  visit(n->body);
}

// ---- IRMutator ----
Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e->kind) {
    case ExprKind::IntImm: return mutate_int_imm(e, e.as<IntImmNode>());
    case ExprKind::FloatImm: return mutate_float_imm(e, e.as<FloatImmNode>());
    case ExprKind::Var: return mutate_var(e, e.as<VarNode>());
    case ExprKind::Cast: return mutate_cast(e, e.as<CastNode>());
    case ExprKind::Binary: return mutate_binary(e, e.as<BinaryNode>());
    case ExprKind::Not: return mutate_not(e, e.as<NotNode>());
    case ExprKind::Select: return mutate_select(e, e.as<SelectNode>());
    case ExprKind::Load: return mutate_load(e, e.as<LoadNode>());
    case ExprKind::Ramp: return mutate_ramp(e, e.as<RampNode>());
    case ExprKind::Broadcast: return mutate_broadcast(e, e.as<BroadcastNode>());
    case ExprKind::Call: return mutate_call(e, e.as<CallNode>());
    case ExprKind::Let: return mutate_let(e, e.as<LetNode>());
    case ExprKind::TensorRead: return mutate_tensor_read(e, e.as<TensorReadNode>());
    case ExprKind::Reduce: return mutate_reduce(e, e.as<ReduceNode>());
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s->kind) {
    case StmtKind::LetStmt: return mutate_let_stmt(s, s.as<LetStmtNode>());
    case StmtKind::For: return mutate_for(s, s.as<ForNode>());
    case StmtKind::Store: return mutate_store(s, s.as<StoreNode>());
    case StmtKind::Allocate: return mutate_allocate(s, s.as<AllocateNode>());
    case StmtKind::IfThenElse: return mutate_if_then_else(s, s.as<IfThenElseNode>());
    case StmtKind::Seq: return mutate_seq(s, s.as<SeqNode>());
    case StmtKind::Evaluate: return mutate_evaluate(s, s.as<EvaluateNode>());
    case StmtKind::Barrier: return mutate_barrier(s, s.as<BarrierNode>());
    case StmtKind::Assert: return mutate_assert(s, s.as<AssertNode>());
    case StmtKind::TensorIntrinsicCall: return mutate_tensor_intrinsic_call(s, s.as<TensorIntrinsicCallNode>());
  }
  return s;
}

bool IRMutator::mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out) {
  bool changed = false;
  out->clear();
  out->reserve(in.size());
  for (const Expr& e : in) {
    out->push_back(mutate(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}

// Mutators rebuild nodes directly (not through the DSL builders): a pass may legitimately
// produce a node the builders would simplify or re-type, and types are already settled.
Expr IRMutator::mutate_cast(const Expr& e, const CastNode* n) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return e;
  return make_expr<CastNode>(n->dtype.with_lanes(v.dtype().lanes()), v);
}
Expr IRMutator::mutate_binary(const Expr& e, const BinaryNode* n) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a.same_as(n->a) && b.same_as(n->b)) return e;
  return make_binary(n->op, a, b);
}
Expr IRMutator::mutate_not(const Expr& e, const NotNode* n) {
  Expr a = mutate(n->a);
  if (a.same_as(n->a)) return e;
  return !a;
}
Expr IRMutator::mutate_select(const Expr& e, const SelectNode* n) {
  Expr c = mutate(n->cond), t = mutate(n->true_value), f = mutate(n->false_value);
  if (c.same_as(n->cond) && t.same_as(n->true_value) && f.same_as(n->false_value)) return e;
  return select(c, t, f);
}
Expr IRMutator::mutate_load(const Expr& e, const LoadNode* n) {
  std::vector<Expr> idx;
  bool changed = mutate_all(n->indices, &idx);
  Expr p = mutate(n->predicate);
  if (!changed && p.same_as(n->predicate)) return e;
  return load(n->buffer, std::move(idx), p);
}
Expr IRMutator::mutate_ramp(const Expr& e, const RampNode* n) {
  Expr b = mutate(n->base), s = mutate(n->stride);
  if (b.same_as(n->base) && s.same_as(n->stride)) return e;
  return ramp(b, s, n->lanes);
}
Expr IRMutator::mutate_broadcast(const Expr& e, const BroadcastNode* n) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return e;
  return broadcast(v, n->lanes);
}
Expr IRMutator::mutate_call(const Expr& e, const CallNode* n) {
  std::vector<Expr> args;
  if (!mutate_all(n->args, &args)) return e;
  DataType t = n->dtype;
  for (const Expr& a : args) t = t.with_lanes(std::max(t.lanes(), a.dtype().lanes()));
  return make_expr<CallNode>(t, n->op, std::move(args), n->extern_name);
}
Expr IRMutator::mutate_let(const Expr& e, const LetNode* n) {
  Expr v = mutate(n->value), b = mutate(n->body);
  if (v.same_as(n->value) && b.same_as(n->body)) return e;
  return make_expr<LetNode>(b.dtype(), n->var, v, b);
}
Expr IRMutator::mutate_tensor_read(const Expr& e, const TensorReadNode* n) {
  std::vector<Expr> idx;
  if (!mutate_all(n->indices, &idx)) return e;
  return make_expr<TensorReadNode>(n->dtype, n->op, std::move(idx), n->value_index);
}
Expr IRMutator::mutate_reduce(const Expr& e, const ReduceNode* n) {
  std::vector<Expr> s;
  const bool sources_same = !mutate_all(n->sources, &s);
  Expr c = mutate(n->condition);
  if (sources_same && c.same_as(n->condition)) return e;
  if (sources_same) s = n->sources;
  return make_expr<ReduceNode>(s[n->value_index].dtype(), n->reducer, n->combiner, std::move(s), n->axis, c,
                               n->value_index);
}

Stmt IRMutator::mutate_let_stmt(const Stmt& s, const LetStmtNode* n) {
  Expr v = mutate(n->value);
  Stmt b = mutate(n->body);
  if (v.same_as(n->value) && b.same_as(n->body)) return s;
  return make_stmt<LetStmtNode>(n->var, v, b);
}
Stmt IRMutator::mutate_for(const Stmt& s, const ForNode* n) {
  Expr mn = mutate(n->min), ext = mutate(n->extent);
  Stmt b = mutate(n->body);
  if (mn.same_as(n->min) && ext.same_as(n->extent) && b.same_as(n->body)) return s;
  return make_stmt<ForNode>(n->var, mn, ext, n->for_kind, n->thread_tag, b);
}
Stmt IRMutator::mutate_store(const Stmt& s, const StoreNode* n) {
  Expr v = mutate(n->value);
  std::vector<Expr> idx;
  bool changed = mutate_all(n->indices, &idx);
  Expr p = mutate(n->predicate);
  if (!changed && v.same_as(n->value) && p.same_as(n->predicate)) return s;
  return make_stmt<StoreNode>(n->buffer, v, std::move(idx), p, n->atomic_add);
}
Stmt IRMutator::mutate_allocate(const Stmt& s, const AllocateNode* n) {
  Stmt b = mutate(n->body);
  if (b.same_as(n->body)) return s;
  return make_stmt<AllocateNode>(n->buffer, b);
}
Stmt IRMutator::mutate_if_then_else(const Stmt& s, const IfThenElseNode* n) {
  Expr c = mutate(n->cond);
  Stmt t = mutate(n->then_case), f = mutate(n->else_case);
  if (c.same_as(n->cond) && t.same_as(n->then_case) && f.same_as(n->else_case)) return s;
  return make_stmt<IfThenElseNode>(c, t, f);
}
Stmt IRMutator::mutate_seq(const Stmt& s, const SeqNode* n) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt& x : n->seq) {
    out.push_back(mutate(x));
    changed |= !out.back().same_as(x);
  }
  if (!changed) return s;
  return seq(std::move(out));
}
Stmt IRMutator::mutate_evaluate(const Stmt& s, const EvaluateNode* n) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return s;
  return make_stmt<EvaluateNode>(v);
}
Stmt IRMutator::mutate_assert(const Stmt& s, const AssertNode* n) {
  Expr c = mutate(n->cond);
  Stmt b = mutate(n->body);
  if (c.same_as(n->cond) && b.same_as(n->body)) return s;
  return make_stmt<AssertNode>(c, n->message, b);
}
Stmt IRMutator::mutate_tensor_intrinsic_call(const Stmt& s, const TensorIntrinsicCallNode* n) {
  std::vector<Expr> offsets;
  bool changed = mutate_all(n->offsets, &offsets);
  std::vector<std::vector<Expr>> strides(n->strides.size());
  for (size_t i = 0; i < n->strides.size(); ++i) changed |= mutate_all(n->strides[i], &strides[i]);
  Stmt b = mutate(n->body);
  if (!changed && b.same_as(n->body)) return s;
  return make_stmt<TensorIntrinsicCallNode>(n->intrinsic, n->buffers, std::move(offsets), std::move(strides), b,
                                            n->producer);
}

// ---- substitute ----
namespace {
class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::vector<std::pair<Var, Expr>>& map) {
    for (const auto& [v, e] : map) map_[v.get()] = e;
  }

 protected:
  Expr mutate_var(const Expr& e, const VarNode* n) override {
    auto it = map_.find(n);
    return it == map_.end() ? e : it->second;
  }

 private:
  std::unordered_map<const VarNode*, Expr> map_;
};
}  // namespace

Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map) {
  if (map.empty()) return e;
  Substituter s(map);
  return s.mutate(e);
}
Stmt substitute(const Stmt& st, const std::vector<std::pair<Var, Expr>>& map) {
  if (map.empty()) return st;
  Substituter s(map);
  return s.mutate(st);
}

}  // namespace te
