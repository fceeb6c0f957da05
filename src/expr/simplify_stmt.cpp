// The statement simplifier: loop variables take their loop's bounds, a branch knows its
// condition (as bounds of the variables it compares), decided branches are dropped, loops
// of zero iterations vanish and loops of one iteration become their body. A statement that
// does nothing becomes evaluate(0) and disappears from sequences.
#include <algorithm>

#include "expr/make_node.h"
#include "expr/simplify_internal.h"

namespace te {
namespace simp {

namespace {

bool is_scalar_int_var(const Expr& e) { return e.as<VarNode>() && e.dtype().is_scalar() && e.dtype().is_integer(); }

BinOp mirrored(BinOp op) {
  switch (op) {
    case BinOp::LT: return BinOp::GT;
    case BinOp::LE: return BinOp::GE;
    case BinOp::GT: return BinOp::LT;
    case BinOp::GE: return BinOp::LE;
    default: return op;
  }
}

BinOp negated_comparison(BinOp op) {
  switch (op) {
    case BinOp::EQ: return BinOp::NE;
    case BinOp::NE: return BinOp::EQ;
    case BinOp::LT: return BinOp::GE;
    case BinOp::LE: return BinOp::GT;
    case BinOp::GT: return BinOp::LE;
    case BinOp::GE: return BinOp::LT;
    default: return op;
  }
}

}  // namespace

void Simplifier::collect_narrowings(const Expr& cond, bool truth, std::vector<Narrowing>* out) {
  if (auto* c = cond.as<CallNode>(); c && c->op == Intrinsic::Likely) return collect_narrowings(c->args[0], truth, out);
  if (auto* n = cond.as<NotNode>()) return collect_narrowings(n->a, !truth, out);
  auto* b = cond.as<BinaryNode>();
  if (!b || !b->dtype.is_scalar()) return;
  if ((b->op == BinOp::And && truth) || (b->op == BinOp::Or && !truth)) {
    collect_narrowings(b->a, truth, out);
    collect_narrowings(b->b, truth, out);
    return;
  }
  if (!is_comparison(b->op) || !b->a.dtype().is_integer()) return;
  BinOp op = truth ? b->op : negated_comparison(b->op);
  Expr var = b->a, other = b->b;
  if (!is_scalar_int_var(var)) {
    std::swap(var, other);
    op = mirrored(op);
  }
  if (!is_scalar_int_var(var)) return;
  Bounds o = *an_.bounds(other);
  Bounds r = type_range(var.dtype());
  switch (op) {
    case BinOp::EQ: r = o; break;
    case BinOp::LT: r.hi = o.hi - 1; break;
    case BinOp::LE: r.hi = o.hi; break;
    case BinOp::GT: r.lo = o.lo + 1; break;
    case BinOp::GE: r.lo = o.lo; break;
    default: return;
  }
  out->push_back({var.as<VarNode>(), r});
}

Stmt Simplifier::mutate_with_narrowings(const Stmt& s, const std::vector<Narrowing>& ns) {
  std::vector<const VarNode*> bound;
  for (const Narrowing& n : ns) {
    Bounds cur = an_.var_bounds(n.var).value_or(type_range(n.var->dtype));
    Bounds b{std::max(cur.lo, n.bounds.lo), std::min(cur.hi, n.bounds.hi)};
    if (an_.bind(n.var, b)) bound.push_back(n.var);
  }
  Stmt r = mutate(s);
  for (auto it = bound.rbegin(); it != bound.rend(); ++it) an_.unbind(*it);
  return r;
}

Stmt Simplifier::mutate_scoped(const Stmt& body, const VarNode* v, std::optional<Bounds> b, bool keep) {
  bool bound = b && an_.bind(v, *b);
  if (keep) keep_var(v);
  Stmt r = mutate(body);
  if (keep) unkeep_var(v);
  if (bound) an_.unbind(v);
  return r;
}

Stmt Simplifier::mutate_let_stmt(const Stmt& s, const LetStmtNode* n) {
  Expr value = mutate(n->value);
  Stmt body = mutate_scoped(n->body, n->var.get(), an_.bounds(value), true);
  if (is_noop(body)) return make_noop();
  if (value.same_as(n->value) && body.same_as(n->body)) return s;
  return make_stmt<LetStmtNode>(n->var, value, body);
}

Stmt Simplifier::mutate_for(const Stmt& s, const ForNode* n) {
  Expr mn = mutate(n->min), ext = mutate(n->extent);
  const VarNode* v = n->var.get();
  if (auto c = const_value(ext)) {
    if (c->lo <= 0) return make_noop();
    if (c->lo == 1 && n->for_kind != ForKind::ThreadBinding) {
      if (mn.as<IntImmNode>() || mn.as<VarNode>()) {
        push_subst(v, mn);
        Stmt body = mutate(n->body);
        pop_subst(v);
        return body;
      }
      Stmt body = mutate_scoped(n->body, v, an_.bounds(mn), true);
      if (is_noop(body)) return make_noop();
      return make_stmt<LetStmtNode>(n->var, mn, body);
    }
  }
  // The variable runs over [min, min + extent - 1]; where that could pass the type's
  // maximum it might wrap, and nothing is assumed.
  std::optional<Bounds> vb;
  Bounds bm = *an_.bounds(mn), be = *an_.bounds(ext);
  if (be.hi >= 1 && fits(Bounds{bm.lo, bm.hi + be.hi - 1}, n->var.dtype())) vb = Bounds{bm.lo, bm.hi + be.hi - 1};
  Stmt body = mutate_scoped(n->body, v, vb, false);
  if (is_noop(body)) return make_noop();
  if (mn.same_as(n->min) && ext.same_as(n->extent) && body.same_as(n->body)) return s;
  return make_stmt<ForNode>(n->var, mn, ext, n->for_kind, n->thread_tag, body);
}

Stmt Simplifier::mutate_store(const Stmt& s, const StoreNode* n) {
  Expr value = mutate(n->value);
  std::vector<Expr> idx;
  bool changed = mutate_all(n->indices, &idx);
  Expr p = mutate(n->predicate);
  if (p.defined()) {
    if (auto c = const_int(p)) {
      if (!*c) return make_noop();  // no lane stores
      p = Expr();
    }
  }
  if (!changed && value.same_as(n->value) && p.same_as(n->predicate)) return s;
  return make_stmt<StoreNode>(n->buffer, value, std::move(idx), p, n->atomic_add);
}

Stmt Simplifier::mutate_allocate(const Stmt& s, const AllocateNode* n) {
  Stmt body = mutate(n->body);
  if (is_noop(body)) return make_noop();
  if (body.same_as(n->body)) return s;
  return make_stmt<AllocateNode>(n->buffer, body);
}

Stmt Simplifier::mutate_if_then_else(const Stmt& s, const IfThenElseNode* n) {
  Expr c = mutate(n->cond);
  if (auto cv = const_int(c)) {
    const Stmt& taken = *cv ? n->then_case : n->else_case;
    return taken.defined() ? mutate(taken) : make_noop();
  }
  std::vector<Narrowing> when_true, when_false;
  collect_narrowings(c, true, &when_true);
  collect_narrowings(c, false, &when_false);
  Stmt t = mutate_with_narrowings(n->then_case, when_true);
  Stmt f = n->else_case.defined() ? mutate_with_narrowings(n->else_case, when_false) : Stmt();
  if (f.defined() && is_noop(f)) f = Stmt();
  if (is_noop(t)) {
    if (!f.defined()) return make_noop();
    return make_stmt<IfThenElseNode>(rewrite_not(c), f, Stmt());
  }
  if (c.same_as(n->cond) && t.same_as(n->then_case) && f.same_as(n->else_case)) return s;
  return make_stmt<IfThenElseNode>(c, t, f);
}

Stmt Simplifier::mutate_seq(const Stmt& s, const SeqNode* n) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt& x : n->seq) {
    Stmt y = mutate(x);
    changed |= !y.same_as(x);
    if (is_noop(y)) {
      changed = true;
      continue;
    }
    out.push_back(y);
  }
  if (out.empty()) return make_noop();
  if (!changed) return s;
  return seq(std::move(out));
}

Stmt Simplifier::mutate_evaluate(const Stmt& s, const EvaluateNode* n) {
  if (is_noop(s)) return s;
  Expr v = mutate(n->value);
  if (v.as<IntImmNode>() || v.as<FloatImmNode>()) return make_noop();
  if (v.same_as(n->value)) return s;
  return make_stmt<EvaluateNode>(v);
}

Stmt Simplifier::mutate_assert(const Stmt& s, const AssertNode* n) {
  Expr c = mutate(n->cond);
  if (auto cv = const_int(c); cv && *cv) return mutate(n->body);
  // After a passing assert its condition holds.
  std::vector<Narrowing> holds;
  collect_narrowings(c, true, &holds);
  Stmt body = mutate_with_narrowings(n->body, holds);
  if (c.same_as(n->cond) && body.same_as(n->body)) return s;
  return make_stmt<AssertNode>(c, n->message, body);
}

}  // namespace simp

Stmt simplify(const Stmt& s, const VarBounds& bounds) {
  if (!s.defined()) return s;
  simp::Simplifier simplifier(bounds);
  return simplifier.mutate(s);
}

}  // namespace te
