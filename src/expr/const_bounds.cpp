// Interval analysis of integer expressions (the Analyzer) and te::const_bounds.
#include <algorithm>

#include "expr/int_arith.h"
#include "expr/simplify_internal.h"

namespace te {
namespace simp {

namespace {

constexpr i128 kOne = 1;

std::optional<Bounds> add(const Bounds& a, const Bounds& b) {
  Bounds r;
  if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) return std::nullopt;
  return r;
}
std::optional<Bounds> sub(const Bounds& a, const Bounds& b) {
  Bounds r;
  if (__builtin_sub_overflow(a.lo, b.hi, &r.lo) || __builtin_sub_overflow(a.hi, b.lo, &r.hi)) return std::nullopt;
  return r;
}
std::optional<Bounds> mul(const Bounds& a, const Bounds& b) {
  i128 c[4];
  if (__builtin_mul_overflow(a.lo, b.lo, &c[0]) || __builtin_mul_overflow(a.lo, b.hi, &c[1]) ||
      __builtin_mul_overflow(a.hi, b.lo, &c[2]) || __builtin_mul_overflow(a.hi, b.hi, &c[3]))
    return std::nullopt;
  return Bounds{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}
Bounds hull(const Bounds& a, const Bounds& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

// Extremes of f(a, d) over a's interval and a divisor interval without zero: f is monotone
// in each argument there (for a fixed sign of d), so the corners bound it.
template <typename F>
Bounds div_corners(const Bounds& a, const Bounds& d, F f) {
  i128 c[4] = {f(a.lo, d.lo), f(a.lo, d.hi), f(a.hi, d.lo), f(a.hi, d.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// Bounds of a division over a divisor interval that may contain zero (x / 0 == 0).
template <typename F>
Bounds div_bounds(const Bounds& a, const Bounds& d, F f) {
  std::optional<Bounds> r;
  auto join = [&r](const Bounds& b) { r = r ? hull(*r, b) : b; };
  if (d.lo <= -1) join(div_corners(a, {d.lo, std::min<i128>(d.hi, -1)}, f));
  if (d.hi >= 1) join(div_corners(a, {std::max<i128>(d.lo, 1), d.hi}, f));
  if (d.lo <= 0 && d.hi >= 0) join({0, 0});
  return *r;
}

Bounds floormod_bounds(const Bounds& a, const Bounds& d) {
  if (d.is_point()) {
    i128 c = d.lo;
    if (c == 0) return {0, 0};
    if (floordiv128(a.lo, c) == floordiv128(a.hi, c)) return {floormod128(a.lo, c), floormod128(a.hi, c)};
    return c > 0 ? Bounds{0, c - 1} : Bounds{c + 1, 0};
  }
  std::optional<Bounds> r;
  auto join = [&r](const Bounds& b) { r = r ? hull(*r, b) : b; };
  if (d.hi >= 1) {
    i128 dmin = std::max<i128>(d.lo, 1);
    if (a.lo >= 0 && a.hi < dmin)
      join(a);
    else if (a.lo >= 0)
      join({0, std::min(a.hi, d.hi - 1)});
    else
      join({0, d.hi - 1});
  }
  if (d.lo <= -1) {
    i128 dmax = std::min<i128>(d.hi, -1);
    if (a.hi <= 0 && a.lo > dmax)
      join(a);
    else if (a.hi <= 0)
      join({std::max(a.lo, d.lo + 1), 0});
    else
      join({d.lo + 1, 0});
  }
  if (d.lo <= 0 && d.hi >= 0) join({0, 0});
  return *r;
}

Bounds truncmod_bounds(const Bounds& a, const Bounds& d) {
  i128 max_abs_d = std::max(d.hi < 0 ? -d.hi : d.hi, d.lo < 0 ? -d.lo : d.lo);
  i128 min_abs_d = (d.lo <= 0 && d.hi >= 0) ? 0 : std::min(d.lo < 0 ? -d.lo : d.lo, d.hi < 0 ? -d.hi : d.hi);
  i128 max_abs_a = std::max(a.lo < 0 ? -a.lo : a.lo, a.hi < 0 ? -a.hi : a.hi);
  if (min_abs_d > 0 && max_abs_a < min_abs_d) return a;  // |a| < |d|: the remainder is a
  i128 m = max_abs_d > 0 ? max_abs_d - 1 : 0;            // |r| < |d|, and r has a's sign
  Bounds r{a.lo < 0 ? std::max(a.lo, -m) : 0, a.hi > 0 ? std::min(a.hi, m) : 0};
  return r;
}

i128 truncdiv128(i128 a, i128 b) { return a / b; }

}  // namespace

i128 floordiv128(i128 a, i128 b) {
  i128 q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
i128 floormod128(i128 a, i128 b) { return a - floordiv128(a, b) * b; }

bool is_tracked(DataType t) { return t.is_integer() || t.is_bool(); }

Bounds type_range(DataType t) {
  if (t.is_bool()) return {0, 1};
  int bits = t.bits();
  if (t.is_uint()) return {0, (kOne << bits) - 1};
  return {-(kOne << (bits - 1)), (kOne << (bits - 1)) - 1};
}

bool fits(const Bounds& b, DataType t) {
  Bounds r = type_range(t);
  return b.lo >= r.lo && b.hi <= r.hi;
}

i128 imm_value(int64_t stored, DataType t) {
  if (t.is_bool()) return stored != 0;
  if (t.is_uint()) return static_cast<i128>(arith::as_unsigned(stored, t));
  return arith::wrap(stored, t);
}

std::optional<Bounds> const_value(const Expr& e) {
  if (auto* i = e.as<IntImmNode>()) {
    i128 v = imm_value(i->value, i->dtype);
    return Bounds{v, v};
  }
  if (auto* b = e.as<BroadcastNode>()) return const_value(b->value);
  return std::nullopt;
}

Analyzer::Analyzer(const VarBounds& vb) {
  for (const auto& [v, iv] : vb) {
    if (v && iv.min <= iv.max) bind(v, {iv.min, iv.max});
  }
}

bool Analyzer::bind(const VarNode* v, Bounds b) {
  if (!is_tracked(v->dtype)) return false;
  Bounds r = type_range(v->dtype);
  b = {std::max(b.lo, r.lo), std::min(b.hi, r.hi)};
  if (b.lo > b.hi) return false;
  vars_[v].push_back(b);
  states_.push_back(next_state_++);
  return true;
}

void Analyzer::unbind(const VarNode* v) {
  auto it = vars_.find(v);
  TE_ICHECK(it != vars_.end() && !it->second.empty(), "unbind without bind");
  it->second.pop_back();
  if (it->second.empty()) vars_.erase(it);
  states_.pop_back();
}

std::optional<Bounds> Analyzer::var_bounds(const VarNode* v) const {
  auto it = vars_.find(v);
  if (it == vars_.end()) return std::nullopt;
  return it->second.back();
}

std::optional<Bounds> Analyzer::bounds(const Expr& e) {
  if (!e.defined() || !is_tracked(e.dtype())) return std::nullopt;
  auto it = memo_.find(e.get());
  if (it != memo_.end() && it->second.state == state()) return it->second.value;
  std::optional<Bounds> r = compute(e);
  // A result that does not fit the type means the operation may wrap: any value can come.
  if (r && !fits(*r, e.dtype())) r = type_range(e.dtype());
  if (!r) r = type_range(e.dtype());
  memo_[e.get()] = Memo{e.node(), r, state()};
  return r;
}

std::optional<Bounds> Analyzer::compute(const Expr& e) {
  DataType t = e.dtype();
  switch (e->kind) {
    case ExprKind::IntImm: return const_value(e);
    case ExprKind::Var: {
      auto b = var_bounds(e.as<VarNode>());
      return b ? b : type_range(t);
    }
    case ExprKind::Cast: {
      const Expr& v = e.as<CastNode>()->value;
      if (!is_tracked(v.dtype())) return type_range(t);
      Bounds b = *bounds(v);
      if (t.is_bool()) {
        if (b.lo > 0 || b.hi < 0) return Bounds{1, 1};
        if (b.is_point()) return Bounds{0, 0};
        return Bounds{0, 1};
      }
      return fits(b, t) ? b : type_range(t);
    }
    case ExprKind::Binary: return compute_binary(e.as<BinaryNode>());
    case ExprKind::Not: {
      Bounds b = *bounds(e.as<NotNode>()->a);
      return Bounds{1 - b.hi, 1 - b.lo};
    }
    case ExprKind::Select: {
      auto* n = e.as<SelectNode>();
      Bounds c = *bounds(n->cond);
      if (c.lo == 1) return bounds(n->true_value);
      if (c.hi == 0) return bounds(n->false_value);
      return hull(*bounds(n->true_value), *bounds(n->false_value));
    }
    case ExprKind::Call: {
      auto* n = e.as<CallNode>();
      switch (n->op) {
        case Intrinsic::IfThenElse: {
          Bounds c = *bounds(n->args[0]);
          if (c.lo == 1) return bounds(n->args[1]);
          if (c.hi == 0) return bounds(n->args[2]);
          return hull(*bounds(n->args[1]), *bounds(n->args[2]));
        }
        case Intrinsic::Likely: return bounds(n->args[0]);
        case Intrinsic::Extern: return type_range(t);  // anything its C type holds
        case Intrinsic::Abs: {
          if (!is_tracked(n->args[0].dtype())) return type_range(t);
          Bounds a = *bounds(n->args[0]);
          if (a.lo >= 0) return a;
          if (a.hi <= 0) return Bounds{-a.hi, -a.lo};
          return Bounds{0, std::max(-a.lo, a.hi)};
        }
        default: return bitwise_bounds(n);
      }
    }
    case ExprKind::Let: {
      auto* n = e.as<LetNode>();
      std::optional<Bounds> vb = bounds(n->value);
      if (!vb || !bind(n->var.get(), *vb)) return bounds(n->body);
      std::optional<Bounds> r = bounds(n->body);
      unbind(n->var.get());
      return r;
    }
    case ExprKind::Ramp: {
      auto* n = e.as<RampNode>();
      auto steps = mul(*bounds(n->stride), Bounds{0, n->lanes - 1});
      if (!steps) return std::nullopt;
      return add(*bounds(n->base), *steps);
    }
    case ExprKind::Broadcast: return bounds(e.as<BroadcastNode>()->value);
    default: return type_range(t);
  }
}

// Bounds of the bitwise intrinsics where the operands' bounds decide them (masks with a
// non-negative operand, shifts by a constant in range, popcount); the type's range else.
Bounds Analyzer::bitwise_bounds(const CallNode* n) {
  DataType t = n->dtype;
  if (!is_tracked(t) || t.element_of().is_bool()) return type_range(t);
  const i128 bits = t.bits();
  if (n->op == Intrinsic::Popcount) return {0, bits};
  if (n->args.size() != 2) return type_range(t);
  Bounds a = *bounds(n->args[0]), b = *bounds(n->args[1]);
  // The smallest 2^k - 1 at or above v >= 0: a bound of v | w and v ^ w for 0 <= w <= v.
  auto all_ones_above = [](i128 v) {
    i128 r = 0;
    while (r < v) r = r * 2 + 1;
    return r;
  };
  switch (n->op) {
    case Intrinsic::BitAnd:
      if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
      if (a.lo >= 0) return {0, a.hi};
      if (b.lo >= 0) return {0, b.hi};
      return type_range(t);
    case Intrinsic::BitOr:
    case Intrinsic::BitXor:
      if (a.lo >= 0 && b.lo >= 0) return {0, all_ones_above(std::max(a.hi, b.hi))};
      return type_range(t);
    case Intrinsic::ShiftRight:
      if (b.is_point() && b.lo >= 0 && b.lo < bits)
        return {a.lo >> static_cast<int>(b.lo), a.hi >> static_cast<int>(b.lo)};
      return type_range(t);
    case Intrinsic::ShiftLeft:
      if (b.is_point() && b.lo >= 0 && b.lo < bits) {
        Bounds r{a.lo * (kOne << static_cast<int>(b.lo)), a.hi * (kOne << static_cast<int>(b.lo))};
        if (fits(a, t) && fits(r, t)) return r;
      }
      return type_range(t);
    default: return type_range(t);
  }
}

std::optional<Bounds> Analyzer::compute_binary(const BinaryNode* n) {
  DataType t = n->dtype;
  DataType ot = n->a.dtype();
  if (!is_tracked(ot)) return type_range(t);  // float comparisons: just a bool
  Bounds a = *bounds(n->a);
  Bounds b = *bounds(n->b);
  switch (n->op) {
    case BinOp::Add: return add(a, b);
    case BinOp::Sub: return sub(a, b);
    case BinOp::Mul: return mul(a, b);
    case BinOp::Div: return div_bounds(a, b, floordiv128);
    case BinOp::Mod: return floormod_bounds(a, b);
    case BinOp::TruncDiv: return div_bounds(a, b, truncdiv128);
    case BinOp::TruncMod: return truncmod_bounds(a, b);
    case BinOp::Min: return Bounds{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    case BinOp::Max: return Bounds{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    case BinOp::EQ:
      if (a.is_point() && b.is_point() && a.lo == b.lo) return Bounds{1, 1};
      if (a.hi < b.lo || b.hi < a.lo) return Bounds{0, 0};
      return Bounds{0, 1};
    case BinOp::NE:
      if (a.is_point() && b.is_point() && a.lo == b.lo) return Bounds{0, 0};
      if (a.hi < b.lo || b.hi < a.lo) return Bounds{1, 1};
      return Bounds{0, 1};
    case BinOp::LT:
      if (a.hi < b.lo) return Bounds{1, 1};
      if (a.lo >= b.hi) return Bounds{0, 0};
      return Bounds{0, 1};
    case BinOp::LE:
      if (a.hi <= b.lo) return Bounds{1, 1};
      if (a.lo > b.hi) return Bounds{0, 0};
      return Bounds{0, 1};
    case BinOp::GT:
      if (a.lo > b.hi) return Bounds{1, 1};
      if (a.hi <= b.lo) return Bounds{0, 0};
      return Bounds{0, 1};
    case BinOp::GE:
      if (a.lo >= b.hi) return Bounds{1, 1};
      if (a.hi < b.lo) return Bounds{0, 0};
      return Bounds{0, 1};
    case BinOp::And: return Bounds{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    case BinOp::Or: return Bounds{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  return type_range(t);
}

}  // namespace simp

bool const_bounds(const Expr& e, const VarBounds& bounds, Interval* out) {
  if (!e.defined() || !simp::is_tracked(e.dtype())) return false;
  Expr s = simplify(e, bounds);
  simp::Analyzer an(bounds);
  std::optional<simp::Bounds> b = an.bounds(s);
  // The whole range of the type says nothing, and a range int64 cannot hold is not returned.
  if (!b) return false;
  simp::Bounds full = simp::type_range(e.dtype());
  if (b->lo == full.lo && b->hi == full.hi && !b->is_point()) return false;
  if (b->lo < INT64_MIN || b->hi > INT64_MAX) return false;
  if (out) *out = Interval{static_cast<int64_t>(b->lo), static_cast<int64_t>(b->hi)};
  return true;
}

}  // namespace te
