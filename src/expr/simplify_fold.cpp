// Node construction for the simplifier and folding of immediates: integers with the
// wrapping semantics of int_arith.h, floats with IEEE-754 rounded to the result type.
#include <algorithm>
#include <cmath>
#include <limits>

#include "expr/float_round.h"
#include "expr/int_arith.h"
#include "expr/make_node.h"
#include "expr/simplify_internal.h"

namespace te::simp {

Expr make_int(DataType t, int64_t v) {
  if (t.is_vector()) return make_broadcast(make_int(t.element_of(), v), t.lanes());
  return make_expr<IntImmNode>(t, arith::wrap(v, t));
}
Expr make_bool(bool v, int lanes) { return make_int(Bool(lanes), v ? 1 : 0); }

Expr make_bin(BinOp op, const Expr& a, const Expr& b) {
  DataType t = is_comparison(op) ? Bool(a.dtype().lanes()) : a.dtype();
  return make_expr<BinaryNode>(t, op, a, b);
}
Expr make_not(const Expr& a) { return make_expr<NotNode>(a.dtype(), a); }
Expr make_cast(DataType t, const Expr& v) { return make_expr<CastNode>(t, v); }
Expr make_select(const Expr& c, const Expr& t, const Expr& f) { return make_expr<SelectNode>(t.dtype(), c, t, f); }
Expr make_broadcast(const Expr& v, int lanes) {
  if (lanes == 1) return v;
  return make_expr<BroadcastNode>(v.dtype().with_lanes(lanes), v, lanes);
}
Expr make_ramp(const Expr& base, const Expr& stride, int lanes) {
  return make_expr<RampNode>(base.dtype().with_lanes(lanes), base, stride, lanes);
}
Expr make_call(DataType t, Intrinsic op, std::vector<Expr> args) { return make_expr<CallNode>(t, op, std::move(args)); }

Stmt make_noop() { return Stmt(std::make_shared<const EvaluateNode>(make_int(Int(32), 0))); }
bool is_noop(const Stmt& s) {
  if (!s.defined()) return true;
  if (auto* q = s.as<SeqNode>()) return q->seq.empty();
  auto* e = s.as<EvaluateNode>();
  return e && (e->value.as<IntImmNode>() || e->value.as<FloatImmNode>());
}

std::optional<int64_t> const_int(const Expr& e) {
  if (auto* i = e.as<IntImmNode>()) return i->value;
  if (auto* b = e.as<BroadcastNode>()) return const_int(b->value);
  return std::nullopt;
}

namespace {

const Expr& scalar_of(const Expr& e) {
  if (auto* b = e.as<BroadcastNode>()) return b->value;
  return e;
}

double round_to(DataType t, double v) { return round_to_float_type(v, t); }

template <typename T>
T ieee_div(T x, T y) {
  if (y != 0) return x / y;
  if (std::isnan(x) || x == 0) return std::numeric_limits<T>::quiet_NaN();
  bool negative = std::signbit(x) != std::signbit(y);
  return negative ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
}

template <typename T>
std::optional<T> float_arith(BinOp op, T x, T y) {
  switch (op) {
    case BinOp::Add: return x + y;
    case BinOp::Sub: return x - y;
    case BinOp::Mul: return x * y;
    case BinOp::Div: return ieee_div(x, y);
    case BinOp::Min:
    case BinOp::Max:
      // Backends may differ on NaN and on the sign of a zero result: leave those alone.
      if (std::isnan(x) || std::isnan(y) || (x == y && std::signbit(x) != std::signbit(y))) return std::nullopt;
      return op == BinOp::Min ? std::min(x, y) : std::max(x, y);
    default: return std::nullopt;
  }
}

Expr fold_float(BinOp op, DataType t, double x, double y) {
  switch (op) {
    case BinOp::EQ: return make_bool(x == y);
    case BinOp::NE: return make_bool(x != y);
    case BinOp::LT: return make_bool(x < y);
    case BinOp::LE: return make_bool(x <= y);
    case BinOp::GT: return make_bool(x > y);
    case BinOp::GE: return make_bool(x >= y);
    default: break;
  }
  double r;
  if (t.bits() == 64) {
    auto v = float_arith<double>(op, x, y);
    if (!v) return Expr();
    r = *v;
  } else {
    // float32 operations computed in float are correctly rounded; float16 and bfloat16
    // ones are too when computed in float and rounded once more (24 >= 2 * 11 + 2 bits).
    auto v = float_arith<float>(op, static_cast<float>(x), static_cast<float>(y));
    if (!v) return Expr();
    r = round_to(t, static_cast<double>(*v));
  }
  return Expr(std::make_shared<const FloatImmNode>(t, r));
}

Expr fold_int(BinOp op, DataType t, int64_t x, int64_t y) {
  int64_t r = arith::binary(op, arith::wrap(x, t), arith::wrap(y, t), t);
  return is_comparison(op) || op == BinOp::And || op == BinOp::Or ? make_bool(r != 0) : make_int(t, r);
}

}  // namespace

Expr fold_binary(BinOp op, const Expr& a, const Expr& b) {
  const Expr& sa = scalar_of(a);
  const Expr& sb = scalar_of(b);
  DataType t = sa.dtype();
  if (sb.dtype() != t) return Expr();
  Expr r;
  if (auto* x = sa.as<IntImmNode>()) {
    auto* y = sb.as<IntImmNode>();
    if (!y) return Expr();
    r = fold_int(op, t, x->value, y->value);
  } else if (auto* x = sa.as<FloatImmNode>()) {
    auto* y = sb.as<FloatImmNode>();
    if (!y) return Expr();
    r = fold_float(op, t, x->value, y->value);
  }
  if (!r.defined()) return r;
  return make_broadcast(r, a.dtype().lanes());
}

Expr fold_cast(DataType t, const Expr& v) {
  DataType from = v.dtype();
  if (!t.is_scalar() || !from.is_scalar()) return Expr();
  if (auto* i = v.as<IntImmNode>()) {
    if (t.is_integer() || t.is_bool()) return make_int(t, from.is_bool() ? (i->value != 0) : i->value);
    if (!t.is_float()) return Expr();
    bool is_unsigned = from.is_uint();
    uint64_t u = arith::as_unsigned(i->value, from);
    int64_t s = from.is_bool() ? (i->value != 0) : arith::wrap(i->value, from);
    double r;
    if (t.bits() == 64)
      r = is_unsigned ? static_cast<double>(u) : static_cast<double>(s);
    else {
      // Through double (exact to 2^53; beyond, 53 >= 2 * 24 + 2 digits keep the double
      // rounding innocuous), then one rounding to t.
      r = round_to(t, is_unsigned ? static_cast<double>(u) : static_cast<double>(s));
    }
    return Expr(std::make_shared<const FloatImmNode>(t, r));
  }
  auto* f = v.as<FloatImmNode>();
  if (!f) return Expr();
  double x = f->value;
  if (t.is_float()) {
    // float16 and bfloat16 alike.
    if (t.bits() == 16 && static_cast<double>(static_cast<float>(x)) != x && !std::isnan(x)) return Expr();
    return Expr(std::make_shared<const FloatImmNode>(t, round_to(t, x)));
  }
  if (t.is_bool()) {
    if (std::isnan(x)) return Expr();
    return make_bool(x != 0);
  }
  if (!t.is_integer() || !std::isfinite(x)) return Expr();
  double tx = std::trunc(x);
  int bits = t.bits();
  if (t.is_uint()) {
    if (!(tx >= 0 && tx < std::ldexp(1.0, bits))) return Expr();
    return make_int(t, static_cast<int64_t>(static_cast<uint64_t>(tx)));
  }
  if (!(tx >= -std::ldexp(1.0, bits - 1) && tx < std::ldexp(1.0, bits - 1))) return Expr();
  return make_int(t, static_cast<int64_t>(tx));
}

namespace {
double round_half_even(double x) {
  double r = std::floor(x);
  double diff = x - r;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  return std::copysign(r, x);  // -0.4 rounds to -0.0, as IEEE's roundeven does
}
}  // namespace

// Integer bitwise operations on immediates, with the interpreter's semantics.
Expr fold_bitwise(Intrinsic op, const std::vector<Expr>& args, DataType t) {
  auto* x = args[0].as<IntImmNode>();
  auto* y = args.size() > 1 ? args[1].as<IntImmNode>() : nullptr;
  if (!x || (args.size() > 1 && !y)) return Expr();
  switch (op) {
    case Intrinsic::BitAnd: return make_int(t, arith::bit_and(x->value, y->value, t));
    case Intrinsic::BitOr: return make_int(t, arith::bit_or(x->value, y->value, t));
    case Intrinsic::BitXor: return make_int(t, arith::bit_xor(x->value, y->value, t));
    case Intrinsic::ShiftLeft: return make_int(t, arith::shift_left(x->value, y->value, t));
    case Intrinsic::ShiftRight: return make_int(t, arith::shift_right(x->value, y->value, t));
    case Intrinsic::BitNot: return make_int(t, arith::bit_not(x->value, t));
    case Intrinsic::Popcount: return make_int(t, arith::popcount(x->value, t));
    default: return Expr();
  }
}

Expr fold_call(Intrinsic op, const std::vector<Expr>& args, DataType t) {
  if (args.empty() || !t.is_scalar() || op == Intrinsic::Extern) return Expr();
  if (t.is_integer())
    if (Expr f = fold_bitwise(op, args, t); f.defined()) return f;
  if (args.size() != 1) return Expr();
  if (auto* f = args[0].as<FloatImmNode>(); f && t.is_bool()) {
    switch (op) {
      case Intrinsic::IsNan: return make_int(t, std::isnan(f->value));
      case Intrinsic::IsInf: return make_int(t, std::isinf(f->value));
      case Intrinsic::IsFinite: return make_int(t, std::isfinite(f->value));
      default: return Expr();
    }
  }
  if (auto* i = args[0].as<IntImmNode>()) {
    if (op == Intrinsic::Abs && t.is_int()) {
      int64_t v = arith::wrap(i->value, t);
      return make_int(t, v < 0 ? arith::sub(0, v, t) : v);
    }
    return Expr();
  }
  auto* f = args[0].as<FloatImmNode>();
  if (!f) return Expr();
  double x = f->value, r;
  switch (op) {
    case Intrinsic::Floor: r = std::floor(x); break;
    case Intrinsic::Ceil: r = std::ceil(x); break;
    case Intrinsic::Trunc: r = std::trunc(x); break;
    case Intrinsic::Round: r = std::round(x); break;
    case Intrinsic::NearbyInt: r = std::isfinite(x) ? round_half_even(x) : x; break;
    case Intrinsic::Abs: r = std::fabs(x); break;
    default: return Expr();  // exp, log, ...: the backends' libm decides the last bit
  }
  return Expr(std::make_shared<const FloatImmNode>(t, r));
}

}  // namespace te::simp
