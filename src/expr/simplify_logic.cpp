// Comparisons, min/max, && || !, select: deciding them from bounds, and boolean identities.
#include <algorithm>

#include "expr/simplify_internal.h"

namespace te::simp {

namespace {

BinOp negated(BinOp op) {
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

std::optional<bool> decide_by_difference(BinOp op, const Bounds& d) {
  switch (op) {
    case BinOp::EQ:
      if (d.lo == 0 && d.hi == 0) return true;
      if (d.lo > 0 || d.hi < 0) return false;
      break;
    case BinOp::NE:
      if (d.lo == 0 && d.hi == 0) return false;
      if (d.lo > 0 || d.hi < 0) return true;
      break;
    case BinOp::LT:
      if (d.hi < 0) return true;
      if (d.lo >= 0) return false;
      break;
    case BinOp::LE:
      if (d.hi <= 0) return true;
      if (d.lo > 0) return false;
      break;
    case BinOp::GT:
      if (d.lo > 0) return true;
      if (d.hi <= 0) return false;
      break;
    case BinOp::GE:
      if (d.lo >= 0) return true;
      if (d.hi < 0) return false;
      break;
    default: break;
  }
  return std::nullopt;
}

}  // namespace

std::optional<bool> Simplifier::decide(BinOp op, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  if (!is_tracked(t)) return std::nullopt;
  Bounds ba = *an_.bounds(a), bb = *an_.bounds(b);
  Bounds diff{ba.lo - bb.hi, ba.hi - bb.lo};  // the true difference a - b, lane by lane
  if (t.is_scalar() && t.is_integer()) {
    Linear l = linear_of(a);
    l.add(linear_of(b), -1);
    l.drop_zero_terms();
    // a - b == l modulo 2^bits, exactly (ring arithmetic).
    if (l.is_const() && (op == BinOp::EQ || op == BinOp::NE)) return (l.constant == 0) == (op == BinOp::EQ);
    // Where l's mathematical range and the true difference's range lie in one window of
    // 2^bits values, they are the same number: narrow the difference to l's range.
    std::optional<Bounds> lb = linear_bounds(l, an_);
    const i128 m = i128{1} << t.bits();
    const i128 limit = i128{1} << 100;
    if (lb && lb->lo > -limit && lb->hi < limit) {
      for (i128 shift : {i128{0}, m, -m}) {
        Bounds s{lb->lo + shift, lb->hi + shift};
        if (std::max(s.hi, diff.hi) - std::min(s.lo, diff.lo) < m) {
          diff = {std::max(s.lo, diff.lo), std::min(s.hi, diff.hi)};
          break;
        }
      }
    }
  } else if (equal(a, b)) {
    diff = {0, 0};
  }
  return decide_by_difference(op, diff);
}

Expr Simplifier::rewrite_compare(BinOp op, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  int lanes = t.lanes();
  auto* ba = a.as<BroadcastNode>();
  auto* bb = b.as<BroadcastNode>();
  if (ba && bb) return make_broadcast(rewrite_binary(op, ba->value, bb->value), lanes);
  if (t.is_float()) return make_bin(op, a, b);  // x == x is false for NaN: only immediates fold
  if (auto r = decide(op, a, b)) return make_bool(*r, lanes);
  if (t.is_vector()) {
    if (Expr r = rewrite_by_lane(op, a, b); r.defined()) return r;
  }
  // truncmod(x, d) == 0 is x % d == 0: a remainder is zero under both roundings at once.
  if ((op == BinOp::EQ || op == BinOp::NE) && t.is_int() && t.is_scalar()) {
    const auto* m = a.as<BinaryNode>();
    if (m && m->op == BinOp::TruncMod && const_int(m->b) && *const_int(m->b) != 0 && const_int(b) && *const_int(b) == 0)
      return rewrite_compare(op, rewrite_binary(BinOp::Mod, m->a, m->b), b);
  }
  if (t.is_bool()) {
    // x == true is x, x == false is !x.
    auto ca = const_int(a), cb = const_int(b);
    if (ca || cb) {
      const Expr& x = ca ? b : a;
      bool c = (ca ? *ca : *cb) != 0;
      return (c == (op == BinOp::EQ)) ? x : rewrite_not(x);
    }
  }
  return make_bin(op, a, b);
}

Expr Simplifier::rewrite_min_max(BinOp op, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  bool is_min = op == BinOp::Min;
  auto* ba = a.as<BroadcastNode>();
  auto* bb = b.as<BroadcastNode>();
  if (ba && bb) return make_broadcast(rewrite_binary(op, ba->value, bb->value), t.lanes());
  if (equal(a, b)) return a;
  if (t.is_float()) return make_bin(op, a, b);
  if (decide(BinOp::LE, a, b) == std::optional<bool>(true)) return is_min ? a : b;
  if (decide(BinOp::GE, a, b) == std::optional<bool>(true)) return is_min ? b : a;
  if (t.is_vector()) {
    if (Expr r = rewrite_by_lane(op, a, b); r.defined()) return r;
  }
  // Constants go right; nested constants combine: min(min(x, 3), 5) == min(x, 3).
  if (const_int(a) && !const_int(b)) return rewrite_min_max(op, b, a);
  if (auto* inner = a.as<BinaryNode>(); inner && inner->op == op && const_int(inner->b) && const_int(b))
    return rewrite_min_max(op, inner->a, fold_binary(op, inner->b, b));
  return make_bin(op, a, b);
}

Expr Simplifier::rewrite_logical(BinOp op, const Expr& a, const Expr& b) {
  int lanes = a.dtype().lanes();
  bool is_and = op == BinOp::And;
  auto ca = const_int(a), cb = const_int(b);
  // true && x == x, false && x == false; dually for ||.
  if (ca) return (*ca != 0) == is_and ? b : make_bool(!is_and, lanes);
  if (cb) return (*cb != 0) == is_and ? a : make_bool(!is_and, lanes);
  auto* ba = a.as<BroadcastNode>();
  auto* bb = b.as<BroadcastNode>();
  if (ba && bb) return make_broadcast(rewrite_binary(op, ba->value, bb->value), lanes);
  if (equal(a, b)) return a;
  auto* na = a.as<NotNode>();
  auto* nb = b.as<NotNode>();
  if ((na && equal(na->a, b)) || (nb && equal(nb->a, a))) return make_bool(!is_and, lanes);
  return make_bin(op, a, b);
}

Expr Simplifier::rewrite_not(const Expr& a) {
  if (auto c = const_int(a)) return make_bool(*c == 0, a.dtype().lanes());
  if (auto* n = a.as<NotNode>()) return n->a;
  if (auto* b = a.as<BroadcastNode>()) return make_broadcast(rewrite_not(b->value), b->lanes);
  if (auto* b = a.as<BinaryNode>(); b && is_comparison(b->op)) {
    // !(a < b) is a >= b only without NaN; == and != flip for every value.
    bool ordered = b->op != BinOp::EQ && b->op != BinOp::NE;
    if (!ordered || !b->a.dtype().is_float()) return make_bin(negated(b->op), b->a, b->b);
  }
  return make_not(a);
}

Expr Simplifier::rewrite_select(const Expr& c, const Expr& t, const Expr& f) {
  if (auto cv = const_int(c)) return *cv ? t : f;
  if (equal(t, f)) return t;
  auto* bc = c.as<BroadcastNode>();
  auto* bt = t.as<BroadcastNode>();
  auto* bf = f.as<BroadcastNode>();
  if (bc && bt && bf) return make_broadcast(rewrite_select(bc->value, bt->value, bf->value), bc->lanes);
  if (t.dtype().is_bool() && c.dtype() == t.dtype()) {
    auto ct = const_int(t), cf = const_int(f);
    if (ct && cf) return *ct ? c : rewrite_not(c);  // the constants differ: equal() ruled that out
  }
  return make_select(c, t, f);
}

}  // namespace te::simp
