// Arithmetic rewrites: + - * through linear forms, floor and truncating division and
// modulo by constants, float identities that hold for every IEEE value, and ramp /
// broadcast algebra.
#include <cmath>
#include <cstdint>
#include <numeric>

#include "expr/int_arith.h"
#include "expr/simplify_internal.h"

namespace te::simp {

namespace {

bool is_power_of_two(i128 v) { return v > 0 && (v & (v - 1)) == 0; }

bool is_float_const(const Expr& e, double v, bool negative_zero = false) {
  const Expr& s = e.as<BroadcastNode>() ? e.as<BroadcastNode>()->value : e;
  auto* f = s.as<FloatImmNode>();
  return f && f->value == v && std::signbit(f->value) == negative_zero;
}

bool fits_int64(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

// gcd(|a|, |b|) for a positive b: at most b, so it fits even when a is INT64_MIN (whose
// negation std::gcd would overflow).
int64_t gcd_with(int64_t a, int64_t b) {
  const uint64_t ua = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  return static_cast<int64_t>(std::gcd(ua, static_cast<uint64_t>(b)));
}

}  // namespace

Linear Simplifier::simplify_linear(const Expr& e) {
  auto* b = e.as<BinaryNode>();
  DataType t = e.dtype();
  bool chain =
      b && t.is_scalar() && t.is_integer() && (b->op == BinOp::Add || b->op == BinOp::Sub || b->op == BinOp::Mul);
  if (!chain) return linear_of(mutate(e));
  // A node with several owners may be reached many times (a DAG): remember its form.
  // The form does not depend on whether it was remembered, so the output cannot either.
  bool shared = e.node().use_count() > 1;
  if (shared) {
    if (const Linear* l = find_memo(linear_memo_, e)) return *l;
  }
  Linear l = simplify_linear_chain(e);
  if (shared) store_memo(linear_memo_, e, l);
  return l;
}

Linear Simplifier::simplify_linear_chain(const Expr& e) {
  auto* b = e.as<BinaryNode>();
  if (b->op != BinOp::Mul) {
    Linear l = simplify_linear(b->a);
    l.add(simplify_linear(b->b), b->op == BinOp::Sub ? -1 : 1);
    return l;
  }
  Linear la = simplify_linear(b->a);
  Linear lb = simplify_linear(b->b);
  if (la.is_const()) {
    lb.scale(la.constant);
    return lb;
  }
  if (lb.is_const()) {
    la.scale(lb.constant);
    return la;
  }
  fold_unravelled_index(la);
  fold_unravelled_index(lb);
  return linear_of(make_bin(BinOp::Mul, linear_to_expr(la), linear_to_expr(lb)));
}

Expr Simplifier::rewrite_add_sub_mul(BinOp op, const Expr& a, const Expr& b) {
  Linear la = linear_of(a);
  Linear lb = linear_of(b);
  if (op == BinOp::Mul) {
    if (la.is_const()) {
      lb.scale(la.constant);
      la = lb;
    } else if (lb.is_const()) {
      la.scale(lb.constant);
    } else {
      return make_bin(BinOp::Mul, a, b);
    }
  } else {
    la.add(lb, op == BinOp::Sub ? -1 : 1);
  }
  fold_unravelled_index(la);
  return linear_to_expr(la);
}

Expr Simplifier::rewrite_float_arith(BinOp op, const Expr& a, const Expr& b) {
  auto* ba = a.as<BroadcastNode>();
  auto* bb = b.as<BroadcastNode>();
  if (ba && bb) return make_broadcast(rewrite_binary(op, ba->value, bb->value), ba->lanes);
  // Identities exact for every IEEE value, NaN, infinities and signed zeros included.
  switch (op) {
    case BinOp::Mul:
      if (is_float_const(b, 1.0)) return a;
      if (is_float_const(a, 1.0)) return b;
      break;
    case BinOp::Div:
      if (is_float_const(b, 1.0)) return a;
      break;
    case BinOp::Add:
      if (is_float_const(b, 0.0, true)) return a;
      if (is_float_const(a, 0.0, true)) return b;
      break;
    case BinOp::Sub:
      if (is_float_const(b, 0.0)) return a;
      break;
    default: break;
  }
  return make_bin(op, a, b);
}

Expr Simplifier::rewrite_vector_arith(BinOp op, const Expr& a, const Expr& b) {
  int lanes = a.dtype().lanes();
  auto* ba = a.as<BroadcastNode>();
  auto* bb = b.as<BroadcastNode>();
  auto* ra = a.as<RampNode>();
  auto* rb = b.as<RampNode>();
  auto ramp_or_broadcast = [&](const Expr& base, const Expr& stride) {
    if (is_const_int(stride, 0)) return make_broadcast(base, lanes);
    return make_ramp(base, stride, lanes);
  };
  if (ba && bb) return make_broadcast(rewrite_binary(op, ba->value, bb->value), lanes);
  if (op == BinOp::Add || op == BinOp::Sub) {
    if (ra && rb)
      return ramp_or_broadcast(rewrite_binary(op, ra->base, rb->base), rewrite_binary(op, ra->stride, rb->stride));
    if (ra && bb) return make_ramp(rewrite_binary(op, ra->base, bb->value), ra->stride, lanes);
    if (ba && rb) {
      Expr stride =
          op == BinOp::Add ? rb->stride : rewrite_binary(BinOp::Sub, make_int(rb->stride.dtype(), 0), rb->stride);
      return ramp_or_broadcast(rewrite_binary(op, ba->value, rb->base), stride);
    }
  }
  if (op == BinOp::Mul) {
    if (ra && bb)
      return ramp_or_broadcast(rewrite_binary(op, ra->base, bb->value), rewrite_binary(op, ra->stride, bb->value));
    if (ba && rb)
      return ramp_or_broadcast(rewrite_binary(op, ba->value, rb->base), rewrite_binary(op, ba->value, rb->stride));
  }
  // Identities of the ring, lane by lane.
  if (op == BinOp::Add && is_const_int(b, 0)) return a;
  if (op == BinOp::Add && is_const_int(a, 0)) return b;
  if (op == BinOp::Sub && is_const_int(b, 0)) return a;
  if (op == BinOp::Sub && equal(a, b)) return make_int(a.dtype(), 0);
  if (op == BinOp::Mul) {
    if (is_const_int(b, 1)) return a;
    if (is_const_int(a, 1)) return b;
    if (is_const_int(a, 0) || is_const_int(b, 0)) return make_int(a.dtype(), 0);
  }
  return make_bin(op, a, b);
}

Expr Simplifier::rewrite_by_lane(BinOp op, const Expr& a, const Expr& b) {
  auto ramp_or_broadcast = [](const Expr& e) { return e.as<RampNode>() || e.as<BroadcastNode>(); };
  if (!ramp_or_broadcast(a) || !ramp_or_broadcast(b) || !(a.as<RampNode>() || b.as<RampNode>())) return Expr();
  int lanes = a.dtype().lanes();
  DataType et = a.dtype().element_of();
  if (!et.is_integer()) return Expr();
  // One symbolic lane: base + lane * stride with lane in [0, lanes - 1].
  Var lane("lane", et);
  if (!an_.bind(lane.get(), {0, lanes - 1})) return Expr();
  auto scalar = [&](const Expr& e) -> Expr {
    if (auto* r = e.as<RampNode>())
      return rewrite_binary(BinOp::Add, r->base, rewrite_binary(BinOp::Mul, lane, r->stride));
    return e.as<BroadcastNode>()->value;
  };
  Expr r = rewrite_binary(op, scalar(a), scalar(b));
  an_.unbind(lane.get());
  if (!r.dtype().is_integer()) return uses_var(r, lane.get()) ? Expr() : make_broadcast(r, lanes);
  Linear l = linear_of(r);
  Linear rest(l.type);
  int64_t stride = 0;
  for (const Term& t : l.terms) {
    if (t.atom.same_as(lane)) {
      stride = t.coeff;
    } else {
      if (uses_var(t.atom, lane.get())) return Expr();
      rest.add_term(t.atom, t.coeff);
    }
  }
  rest.constant = l.constant;
  Expr base = linear_to_expr(rest);
  if (stride == 0) return make_broadcast(base, lanes);
  return make_ramp(base, make_int(et, stride), lanes);
}

// l == aligned + offset with every coefficient of `aligned` a multiple of some g > 1
// that divides d, and offset in [0, g): then l / d == aligned / d and l % d ==
// aligned % d + offset, as (x * 8 + y) / 32 == (x * 8) / 32 for y in [0, 8) (a row
// tile of 8 inside a group of 32 channels). The largest such g wins. Signed types only.
bool Simplifier::split_aligned(const Linear& l, int64_t d, Linear* aligned, Linear* offset) {
  if (!l.type.is_int()) return false;
  int64_t best = 0;
  for (const Term& candidate : l.terms) {
    const int64_t g = gcd_with(candidate.coeff, d);
    if (g <= best || g <= 1) continue;
    Linear al(l.type), off(l.type);
    for (const Term& term : l.terms) {
      if (term.coeff % g == 0)
        al.add_term(term.atom, term.coeff);
      else
        off.add_term(term.atom, term.coeff);
    }
    const i128 c = floormod128(l.constant, g);
    if (!fits_int64(i128{l.constant} - c)) continue;
    al.constant = static_cast<int64_t>(i128{l.constant} - c);
    off.constant = static_cast<int64_t>(c);
    std::optional<Bounds> ob = linear_bounds(off, an_);
    const bool nothing_split = off.terms.empty() && off.constant == 0;
    if (!ob || ob->lo < 0 || ob->hi >= g || al.terms.empty() || nothing_split) continue;
    best = g;
    *aligned = al;
    *offset = off;
  }
  return best > 0;
}

// x = m * k + r for every k (m the gcd of x's coefficients): with g = gcd(m, d), x's
// offset in its block of d is at most d - g + r % g, so when r % g + c * (n - 1) < g no
// lane of ramp(x, c, n) crosses into the next block. Then the quotient is one value
// for all lanes and the remainder a ramp. A vectorized loop over part of a split axis
// (`ramp(o * 16, 1, 16) / 32`) becomes a broadcast load instead of a gather this way.
Expr Simplifier::rewrite_aligned_ramp_div_mod(BinOp op, const Expr& a, const Expr& b) {
  auto* ramp = a.as<RampNode>();
  auto* divisor = b.as<BroadcastNode>();
  if (!ramp || !divisor) return Expr();
  DataType et = ramp->base.dtype();
  auto d = const_int(divisor->value);
  auto c = const_int(ramp->stride);
  if (!d || !c || *d <= 0 || *c < 0 || !et.is_int()) return Expr();
  Linear l = linear_of(ramp->base);
  std::optional<Bounds> span = linear_bounds(l, an_);
  i128 last_offset = i128{*c} * (ramp->lanes - 1);
  if (!span || !fits(Bounds{span->lo, span->hi + last_offset}, et)) return Expr();
  int64_t g = *d;
  for (const Term& t : l.terms) g = gcd_with(t.coeff, g);
  if (floormod128(l.constant, g) + last_offset >= g) return Expr();
  int lanes = ramp->lanes;
  if (op == BinOp::Div) return make_broadcast(rewrite_binary(BinOp::Div, ramp->base, divisor->value), lanes);
  return make_ramp(rewrite_binary(BinOp::Mod, ramp->base, divisor->value), ramp->stride, lanes);
}

// A rewrite's new operands may match other rules (a nested division, say); the depth cap
// guarantees termination whatever the rules do.
Expr Simplifier::rewrite_again(BinOp op, const Expr& a, const Expr& b) {
  if (rewrite_depth_ >= 4) return make_bin(op, a, b);
  ++rewrite_depth_;
  Expr r = rewrite_binary(op, a, b);
  --rewrite_depth_;
  return r;
}

Expr Simplifier::rewrite_div_mod(BinOp op, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  bool is_div = op == BinOp::Div;
  if (t.is_vector()) {
    auto* ba = a.as<BroadcastNode>();
    auto* bb = b.as<BroadcastNode>();
    if (ba && bb) return make_broadcast(rewrite_binary(op, ba->value, bb->value), t.lanes());
    if (Expr r = rewrite_by_lane(op, a, b); r.defined()) return r;
    if (Expr r = rewrite_aligned_ramp_div_mod(op, a, b); r.defined()) return r;
    if (is_const_int(b, 1)) return is_div ? a : make_int(t, 0);
    if (is_const_int(b, 0)) return make_int(t, 0);
    return make_bin(op, a, b);
  }
  auto* dnode = b.as<IntImmNode>();
  if (!dnode) {
    // 0 <= a < b: the quotient is 0 and the remainder a.
    Bounds ba = *an_.bounds(a), bb = *an_.bounds(b);
    if (ba.lo >= 0 && bb.lo > ba.hi) return is_div ? make_int(t, 0) : a;
    return make_bin(op, a, b);
  }
  i128 d = imm_value(dnode->value, t);
  if (d == 0) return make_int(t, 0);  // x / 0 == x % 0 == 0
  if (d == 1) return is_div ? a : make_int(t, 0);
  if (d == -1) return is_div ? rewrite_binary(BinOp::Sub, make_int(t, 0), a) : make_int(t, 0);
  if (d < 0 || !fits_int64(d)) return make_bin(op, a, b);

  // Nested constant divisions: floor(floor(x / c1) / d) == floor(x / (c1 * d)) for c1, d > 0;
  // (x % c1) % d == x % d when d divides c1.
  if (auto* inner = a.as<BinaryNode>(); inner && inner->op == op) {
    if (auto* c1 = inner->b.as<IntImmNode>()) {
      i128 cv = imm_value(c1->value, t);
      if (cv > 0) {
        if (is_div && fits(Bounds{cv * d, cv * d}, t))
          return rewrite_div_mod(op, inner->a, make_int(t, static_cast<int64_t>(cv * d)));
        if (!is_div && cv % d == 0) return rewrite_div_mod(op, inner->a, b);
      }
    }
  }

  Linear l = linear_of(a);
  i128 k = 0;
  std::optional<Bounds> s = linear_bounds(l, an_, &k);
  bool s_fits = s && fits(*s, t);

  // A common factor g of every coefficient, the constant and d: (g * y) / (g * e) == y / e
  // and (g * y) % (g * e) == (y % e) * g, as (x * 16) / 32 == x / 2.
  if (s_fits && t.is_int() && !l.terms.empty()) {
    int64_t g = static_cast<int64_t>(d);
    for (const Term& term : l.terms) g = gcd_with(term.coeff, g);
    g = gcd_with(l.constant, g);
    if (g > 1) {
      Linear reduced(t);
      for (const Term& term : l.terms) reduced.add_term(term.atom, term.coeff / g);
      reduced.constant = l.constant / g;
      Expr e = make_int(t, static_cast<int64_t>(d) / g);
      Expr r = rewrite_div_mod(op, linear_to_expr(reduced), e);
      return is_div ? r : rewrite_binary(BinOp::Mul, r, make_int(t, g));
    }
  }

  if (is_div) {
    if (!s_fits) return make_bin(op, a, b);
    // a == D + R with every coefficient of D a multiple of d: a / d == D / d + R / d.
    i128 q = floordiv128(k, d);
    if (!fits_int64(q)) return make_bin(op, a, b);
    Linear dpart(t), rpart(t);
    for (const Term& term : l.terms) {
      if (floormod128(term.coeff, d) == 0)
        dpart.add_term(term.atom, static_cast<int64_t>(term.coeff / d));
      else
        rpart.add_term(term.atom, term.coeff);
    }
    dpart.constant = srep(static_cast<int64_t>(q), t);
    rpart.constant = static_cast<int64_t>(floormod128(k, d));
    std::optional<Bounds> rb = linear_bounds(rpart, an_);
    if (rb && fits(*rb, t)) {
      i128 q1 = floordiv128(rb->lo, d), q2 = floordiv128(rb->hi, d);
      // The new terms may complete a (y / d) * d + y % d pair with dpart's (as
      // ((y % 2) * 2 + y) / 2 == y % 2 + y / 2 does, doubled): fold it now, or a
      // second pass would.
      if (q1 == q2) {
        dpart.add_const(static_cast<int64_t>(q1));
        fold_div_mod_pairs(dpart);
        return linear_to_expr(dpart);
      }
      Linear aligned(t), offset(t);
      if (split_aligned(rpart, static_cast<int64_t>(d), &aligned, &offset)) {
        dpart.add_term(rewrite_again(op, linear_to_expr(aligned), b), 1);
        fold_div_mod_pairs(dpart);
        return linear_to_expr(dpart);
      }
      if (!dpart.terms.empty()) {
        dpart.add_term(rewrite_again(op, linear_to_expr(rpart), b), 1);
        fold_div_mod_pairs(dpart);
        return linear_to_expr(dpart);
      }
    }
    return make_bin(op, a, b);
  }

  // Modulo. With d a power of two that divides 2^bits, residues mod d survive wrapping, so
  // terms can be reduced whatever the bounds; otherwise the sum must be known not to wrap.
  bool pow2 = is_power_of_two(d) && d <= (i128{1} << (t.bits() - 1));
  if (!pow2 && !s_fits) return make_bin(op, a, b);
  // (y % e) is y modulo d when d divides e: x + y % e == x + y (mod d), so that
  // (j + j % 2) % 2 == (j + j) % 2 == 0.
  Linear terms(t);
  for (const Term& term : l.terms) {
    const auto* inner = term.atom.as<BinaryNode>();
    const auto* e = inner && inner->op == BinOp::Mod ? inner->b.as<IntImmNode>() : nullptr;
    i128 ev = e ? imm_value(e->value, t) : 0;
    if (ev > 0 && ev % d == 0)
      terms.add(linear_of(inner->a), term.coeff);
    else
      terms.add_term(term.atom, term.coeff);
  }
  Linear rpart(t);
  for (const Term& term : terms.terms) {
    i128 c = floormod128(term.coeff, d);
    if (c > d / 2) c -= d;  // the representative nearest zero: x - y stays x - y
    if (c != 0) rpart.add_term(term.atom, static_cast<int64_t>(c));
  }
  rpart.constant = static_cast<int64_t>(floormod128((s_fits ? k : i128{l.constant}) + terms.constant, d));
  std::optional<Bounds> rb = linear_bounds(rpart, an_);
  bool r_fits = rb && fits(*rb, t);
  if (r_fits) {
    i128 q1 = floordiv128(rb->lo, d), q2 = floordiv128(rb->hi, d);
    if (q1 == q2) {
      rpart.add_const(static_cast<int64_t>(-q1 * d));
      return linear_to_expr(rpart);
    }
  }
  if (r_fits) {
    Linear aligned(t), offset(t);
    if (split_aligned(rpart, static_cast<int64_t>(d), &aligned, &offset)) {
      offset.add_term(rewrite_again(op, linear_to_expr(aligned), b), 1);
      return linear_to_expr(offset);
    }
  }
  if (!pow2 && !r_fits) return make_bin(op, a, b);
  Expr reduced = linear_to_expr(rpart);
  if (equal(reduced, a)) return make_bin(op, a, b);
  return rewrite_again(op, reduced, b);
}

Expr Simplifier::rewrite_trunc_div_mod(BinOp op, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  BinOp floor_op = op == BinOp::TruncDiv ? BinOp::Div : BinOp::Mod;
  if (t.is_uint()) return rewrite_div_mod(floor_op, a, b);  // the same on unsigned values
  if (t.is_vector()) {
    auto* ba = a.as<BroadcastNode>();
    auto* bb = b.as<BroadcastNode>();
    if (ba && bb) return make_broadcast(rewrite_binary(op, ba->value, bb->value), t.lanes());
  }
  if (auto d = const_int(b)) {
    int64_t v = arith::wrap(*d, t);
    if (v == 0) return make_int(t, 0);
    if (v == 1) return op == BinOp::TruncDiv ? a : make_int(t, 0);
    if (v == -1) return op == BinOp::TruncDiv ? rewrite_binary(BinOp::Sub, make_int(t, 0), a) : make_int(t, 0);
  }
  // With a >= 0 and b > 0, truncation and floor agree.
  if (an_.bounds(a)->lo >= 0 && an_.bounds(b)->lo > 0) return rewrite_div_mod(floor_op, a, b);
  return make_bin(op, a, b);
}

}  // namespace te::simp
