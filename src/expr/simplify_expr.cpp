// The expression simplifier: dispatch of binary rewrites, the remaining node kinds, and
// the public te::simplify(Expr) and te::can_prove.
#include <fmt/format.h>

#include "expr/float_round.h"
#include "expr/int_arith.h"
#include "expr/simplify_internal.h"

namespace te {
namespace simp {

namespace {

// Value of a point interval as t stores it.
int64_t stored_value(i128 v) { return static_cast<int64_t>(static_cast<uint64_t>(v)); }

// Element type of x converts to m without losing any value.
bool converts_exactly(DataType from, DataType to) {
  if (from.is_bool()) return to.is_bool() || to.is_integer() || to.is_float();
  if (to.is_float()) {
    int digits = float_digits(to);
    if (from.is_float()) return float_type_holds(to, from);
    if (from.is_int()) return from.bits() - 1 <= digits;
    if (from.is_uint()) return from.bits() <= digits;
    return false;
  }
  if (to.is_int()) return (from.is_int() && to.bits() >= from.bits()) || (from.is_uint() && to.bits() > from.bits());
  if (to.is_uint()) return from.is_uint() && to.bits() >= from.bits();
  return false;
}

bool is_trivial(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>() || e.as<VarNode>(); }

}  // namespace

void Simplifier::push_subst(const VarNode* v, const Expr& value) {
  subst_[v].push_back(value);
  enter_scope();
}
void Simplifier::pop_subst(const VarNode* v) {
  auto it = subst_.find(v);
  it->second.pop_back();
  if (it->second.empty()) subst_.erase(it);
  leave_scope();
}
void Simplifier::keep_var(const VarNode* v) {
  ++keep_vars_[v];
  enter_scope();
}
void Simplifier::unkeep_var(const VarNode* v) {
  if (--keep_vars_[v] == 0) keep_vars_.erase(v);
  leave_scope();
}

template <typename T>
const T* Simplifier::find_memo(const std::unordered_map<const ExprNode*, Memo<T>>& m, const Expr& e) const {
  auto it = m.find(e.get());
  if (it == m.end() || it->second.analyzer_state != an_.state() || it->second.scope != scopes_.back()) return nullptr;
  return &it->second.value;
}
template <typename T>
void Simplifier::store_memo(std::unordered_map<const ExprNode*, Memo<T>>& m, const Expr& e, const T& v) {
  m.insert_or_assign(e.get(), Memo<T>{e.node(), v, an_.state(), scopes_.back()});
}
template const Linear* Simplifier::find_memo(const std::unordered_map<const ExprNode*, Memo<Linear>>&,
                                             const Expr&) const;
template void Simplifier::store_memo(std::unordered_map<const ExprNode*, Memo<Linear>>&, const Expr&, const Linear&);

Expr Simplifier::mutate(const Expr& e) {
  if (!e.defined()) return e;
  if (const Expr* r = find_memo(memo_, e)) return *r;
  Expr r = IRMutator::mutate(e);
  store_memo(memo_, e, r);
  return r;
}

Expr Simplifier::rewrite_binary(BinOp op, const Expr& a, const Expr& b) {
  if (Expr f = fold_binary(op, a, b); f.defined()) return f;
  DataType t = a.dtype();
  Expr r;
  switch (op) {
    case BinOp::Add:
    case BinOp::Sub:
    case BinOp::Mul:
      if (t.is_float())
        r = rewrite_float_arith(op, a, b);
      else if (t.is_vector())
        r = rewrite_vector_arith(op, a, b);
      else
        r = rewrite_add_sub_mul(op, a, b);
      break;
    case BinOp::Div: r = t.is_float() ? rewrite_float_arith(op, a, b) : rewrite_div_mod(op, a, b); break;
    case BinOp::Mod: r = rewrite_div_mod(op, a, b); break;
    case BinOp::TruncDiv:
    case BinOp::TruncMod: r = rewrite_trunc_div_mod(op, a, b); break;
    case BinOp::Min:
    case BinOp::Max: r = rewrite_min_max(op, a, b); break;
    case BinOp::And:
    case BinOp::Or: r = rewrite_logical(op, a, b); break;
    default: r = rewrite_compare(op, a, b); break;
  }
  // Whatever the bounds pin to one value is that value.
  if (is_tracked(r.dtype()) && !const_int(r)) {
    Bounds b = *an_.bounds(r);
    if (b.is_point()) return make_int(r.dtype(), stored_value(b.lo));
  }
  return r;
}

Expr Simplifier::mutate_var(const Expr& e, const VarNode* n) {
  auto it = subst_.find(n);
  if (it != subst_.end()) {
    // The value was simplified outside; bounds known here (a branch) may say more.
    const Expr& v = it->second.back();
    return v.as<VarNode>() == n ? v : mutate(v);
  }
  if (is_tracked(n->dtype) && !keep_vars_.count(n)) {
    auto b = an_.var_bounds(n);
    if (b && b->is_point()) return make_int(n->dtype, stored_value(b->lo));
  }
  return e;
}

Expr Simplifier::mutate_binary(const Expr& e, const BinaryNode* n) {
  BinOp op = n->op;
  DataType t = n->a.dtype();
  if ((op == BinOp::Add || op == BinOp::Sub || op == BinOp::Mul) && t.is_scalar() && t.is_integer()) {
    // A whole + - * tree at once: linear in its size, and terms cancel across it.
    Linear l = simplify_linear(e);
    fold_unravelled_index(l);
    Expr r = linear_to_expr(l);
    if (!const_int(r)) {
      Bounds b = *an_.bounds(r);
      if (b.is_point()) return make_int(t, stored_value(b.lo));
    }
    return equal(r, e) ? e : r;
  }
  Expr a = mutate(n->a), b = mutate(n->b);
  Expr r = rewrite_binary(op, a, b);
  auto* rb = r.as<BinaryNode>();
  if (rb && rb->op == op && rb->a.same_as(n->a) && rb->b.same_as(n->b)) return e;
  return r;
}

Expr Simplifier::mutate_cast(const Expr& e, const CastNode* n) {
  Expr v = mutate(n->value);
  Expr r = rewrite_cast(n->dtype, v);
  if (auto* c = r.as<CastNode>(); c && c->dtype == n->dtype && c->value.same_as(n->value)) return e;
  return r;
}

Expr Simplifier::rewrite_cast(DataType t, const Expr& v) {
  if (v.dtype() == t) return v;
  if (auto* b = v.as<BroadcastNode>()) return make_broadcast(rewrite_cast(t.element_of(), b->value), b->lanes);
  if (Expr f = fold_cast(t, v); f.defined()) return f;
  if (auto* inner = v.as<CastNode>()) {
    DataType from = inner->value.dtype(), mid = v.dtype();
    bool all_integer = from.is_integer() && mid.is_integer() && t.is_integer();
    // An exact first cast, or integer truncations that keep t's low bits, can be skipped.
    // Not an exact int -> float whose float -> int then saturates where the direct
    // int -> int cast would wrap: only when t holds every value of the source type.
    bool saturation_lost =
        mid.is_float() && !from.is_float() && (t.is_integer()) && !converts_exactly(from.element_of(), t.element_of());
    if ((converts_exactly(from.element_of(), mid.element_of()) && !saturation_lost) ||
        (all_integer && mid.bits() >= t.bits()))
      return rewrite_cast(t, inner->value);
  }
  return make_cast(t, v);
}

Expr Simplifier::mutate_not(const Expr& e, const NotNode* n) {
  Expr a = mutate(n->a);
  Expr r = rewrite_not(a);
  if (auto* rn = r.as<NotNode>(); rn && rn->a.same_as(n->a)) return e;
  return r;
}

Expr Simplifier::mutate_select(const Expr& e, const SelectNode* n) {
  Expr c = mutate(n->cond);
  if (auto cv = const_int(c)) return mutate(*cv ? n->true_value : n->false_value);
  Expr t = mutate(n->true_value), f = mutate(n->false_value);
  Expr r = rewrite_select(c, t, f);
  auto* rs = r.as<SelectNode>();
  if (rs && rs->cond.same_as(n->cond) && rs->true_value.same_as(n->true_value) &&
      rs->false_value.same_as(n->false_value))
    return e;
  return r;
}

Expr Simplifier::mutate_load(const Expr& e, const LoadNode* n) {
  std::vector<Expr> idx;
  bool changed = mutate_all(n->indices, &idx);
  Expr p = mutate(n->predicate);
  if (p.defined()) {
    if (auto c = const_int(p); c && *c) p = Expr();  // every lane loads
  }
  if (!changed && p.same_as(n->predicate)) return e;
  return Expr(std::make_shared<const LoadNode>(n->dtype, n->buffer, std::move(idx), p));
}

Expr Simplifier::mutate_ramp(const Expr& e, const RampNode* n) {
  Expr base = mutate(n->base), stride = mutate(n->stride);
  if (n->lanes == 1) return base;
  if (is_const_int(stride, 0)) return make_broadcast(base, n->lanes);
  if (base.same_as(n->base) && stride.same_as(n->stride)) return e;
  return make_ramp(base, stride, n->lanes);
}

Expr Simplifier::mutate_broadcast(const Expr& e, const BroadcastNode* n) {
  Expr v = mutate(n->value);
  if (n->lanes == 1) return v;
  if (v.same_as(n->value)) return e;
  return make_broadcast(v, n->lanes);
}

Expr Simplifier::mutate_call(const Expr& e, const CallNode* n) {
  if (n->op == Intrinsic::Extern) {
    // Opaque: nothing is known of its value, so only its arguments simplify.
    std::vector<Expr> args;
    if (!mutate_all(n->args, &args)) return e;
    return Expr(std::make_shared<const CallNode>(n->dtype, n->op, std::move(args), n->extern_name));
  }
  if (n->op == Intrinsic::IfThenElse && n->args.size() == 3) {
    Expr c = mutate(n->args[0]);
    if (auto cv = const_int(c)) return mutate(*cv ? n->args[1] : n->args[2]);
    Expr t = mutate(n->args[1]), f = mutate(n->args[2]);
    if (equal(t, f)) return t;  // both sides are pure; the taken one is this one
    if (c.same_as(n->args[0]) && t.same_as(n->args[1]) && f.same_as(n->args[2])) return e;
    return make_call(n->dtype, n->op, {c, t, f});
  }
  std::vector<Expr> args;
  bool changed = mutate_all(n->args, &args);
  if (n->op == Intrinsic::Likely && args.size() == 1 && const_int(args[0])) return args[0];
  if (Expr f = fold_call(n->op, args, n->dtype); f.defined()) return f;
  if (args.size() == 1 && args[0].dtype() == n->dtype && n->dtype.is_integer()) {
    switch (n->op) {
      case Intrinsic::Floor:
      case Intrinsic::Ceil:
      case Intrinsic::Round:
      case Intrinsic::NearbyInt:
      case Intrinsic::Trunc: return args[0];
      case Intrinsic::Abs: {
        if (n->dtype.is_uint() || an_.bounds(args[0])->lo >= 0) return args[0];
        break;
      }
      default: break;
    }
  }
  if (!changed) return e;
  return make_call(n->dtype, n->op, std::move(args));
}

Expr Simplifier::mutate_let(const Expr& e, const LetNode* n) {
  const VarNode* v = n->var.get();
  Expr value = mutate(n->value);
  if (is_trivial(value) && !value.same_as(n->var)) {
    push_subst(v, value);
    Expr body = mutate(n->body);
    pop_subst(v);
    return body;
  }
  bool bound = is_tracked(value.dtype()) && an_.bind(v, *an_.bounds(value));
  keep_var(v);
  Expr body = mutate(n->body);
  unkeep_var(v);
  if (bound) an_.unbind(v);
  if (!uses_var(body, v)) return body;
  if (value.same_as(n->value) && body.same_as(n->body)) return e;
  return Expr(std::make_shared<const LetNode>(body.dtype(), n->var, value, body));
}

Expr Simplifier::mutate_reduce(const Expr& e, const ReduceNode* n) {
  std::vector<const VarNode*> bound;
  for (const IterVar& iv : n->axis) {
    const VarNode* v = iv.var().get();
    keep_var(v);  // the axis names the variable: keep it by name
    if (!iv.dom().min.defined() || !iv.dom().extent.defined()) continue;
    auto mn = an_.bounds(mutate(iv.dom().min));
    auto ext = an_.bounds(mutate(iv.dom().extent));
    if (!mn || !ext || ext->hi < 1) continue;
    Bounds b{mn->lo, mn->hi + ext->hi - 1};
    if (fits(b, v->dtype) && an_.bind(v, b)) bound.push_back(v);
  }
  std::vector<Expr> sources;
  bool changed = false;
  for (const Expr& s : n->sources) {
    sources.push_back(mutate(s));
    changed = changed || !sources.back().same_as(s);
  }
  Expr cond = mutate(n->condition);
  if (cond.defined()) {
    if (auto c = const_int(cond); c && *c) cond = Expr();  // every point counts
  }
  for (auto it = bound.rbegin(); it != bound.rend(); ++it) an_.unbind(*it);
  for (const IterVar& iv : n->axis) {
    unkeep_var(iv.var().get());
  }
  if (!changed && cond.same_as(n->condition)) return e;
  return Expr(std::make_shared<const ReduceNode>(n->dtype, n->reducer, n->combiner, std::move(sources), n->axis, cond,
                                                 n->value_index));
}

}  // namespace simp

Expr simplify(const Expr& e, const VarBounds& bounds) {
  if (!e.defined()) return e;
  simp::Simplifier s(bounds);
  return s.mutate(e);
}

bool can_prove(const Expr& cond, const VarBounds& bounds) {
  if (!cond.defined()) throw Error("can_prove: the condition is undefined");
  if (!cond.dtype().is_bool())
    throw Error(
        fmt::format("can_prove: the condition must be bool, got {} ({})", cond.dtype().to_string(), to_string(cond)));
  auto c = simp::const_int(simplify(cond, bounds));
  return c && *c != 0;
}

}  // namespace te
