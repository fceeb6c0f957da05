#include "interpret/lane_ops.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "expr/float_round.h"
#include "expr/int_arith.h"
#include "te/error.h"
#include "te/bfloat16.h"
#include "te/float16.h"

namespace te::interp {
namespace {

// float16 and bfloat16 arithmetic happens in float; this rounds a float result to t.
double finish(float v, DataType t) {
  if (t.is_bfloat()) return static_cast<float>(bfloat16(v));
  if (t.bits() == 16) return static_cast<float>(half(v));
  return v;
}

// Half to even, independent of the floating-point environment's rounding mode.
template <typename F>
F nearbyint_even(F x) {
  F r = std::round(x);  // half away from zero
  if (std::fabs(x - std::trunc(x)) == F(0.5)) r = F(2) * std::round(x / F(2));
  return r;
}

// op on two float lanes in precision F (float for float16/bfloat16/float32, double for
// float64); arithmetic results are rounded to t.
template <typename F>
Scalar float_op(BinOp op, F a, F b, DataType t) {
  auto num = [&](F v) -> Scalar {
    if constexpr (std::is_same_v<F, double>)
      return float_scalar(v);
    else
      return float_scalar(finish(v, t));
  };
  switch (op) {
    case BinOp::Add: return num(a + b);
    case BinOp::Sub: return num(a - b);
    case BinOp::Mul: return num(a * b);
    case BinOp::Div:
    case BinOp::TruncDiv: return num(a / b);
    case BinOp::Mod: {
      F q = a / b;
      F fq = std::floor(q);
      F p = b * fq;
      return num(a - p);
    }
    case BinOp::TruncMod: return num(std::fmod(a, b));
    case BinOp::Min: return num(a < b ? a : b);
    case BinOp::Max: return num(a > b ? a : b);
    case BinOp::EQ: return int_scalar(a == b);
    case BinOp::NE: return int_scalar(a != b);
    case BinOp::LT: return int_scalar(a < b);
    case BinOp::LE: return int_scalar(a <= b);
    case BinOp::GT: return int_scalar(a > b);
    case BinOp::GE: return int_scalar(a >= b);
    case BinOp::And: return int_scalar(a != F(0) && b != F(0));
    case BinOp::Or: return int_scalar(a != F(0) || b != F(0));
  }
  TE_ICHECK(false, "float_op: unknown operator");
  return int_scalar(0);
}

// Float -> integer: truncate toward zero, saturate to the type's range, NaN -> 0.
int64_t float_to_int(double v, DataType to) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  int bits = to.bits();
  if (to.is_uint()) {
    if (t <= 0) return 0;
    double limit = std::ldexp(1.0, bits);        // 2^bits, exact
    if (t >= limit) return arith::wrap(-1, to);  // all ones: the maximum
    return arith::wrap(static_cast<int64_t>(static_cast<uint64_t>(t)), to);
  }
  double limit = std::ldexp(1.0, bits - 1);  // 2^(bits-1), exact
  if (t >= limit) return static_cast<int64_t>(arith::as_unsigned(-1, to) >> 1);
  if (t < -limit) return arith::wrap(static_cast<int64_t>(uint64_t{1} << (bits - 1)), to);
  return static_cast<int64_t>(t);
}

[[noreturn]] void needs_float(Intrinsic op, DataType t) {
  throw Error(fmt::format("{} needs a float argument, got {}", intrinsic_name(op), t.to_string()));
}

[[noreturn]] void needs_integer(Intrinsic op, DataType t) {
  throw Error(fmt::format("{} needs integer arguments, got {}", intrinsic_name(op), t.to_string()));
}

template <typename F>
F float_unary(Intrinsic op, F x) {
  switch (op) {
    case Intrinsic::Floor: return std::floor(x);
    case Intrinsic::Ceil: return std::ceil(x);
    case Intrinsic::Round: return std::round(x);
    case Intrinsic::NearbyInt: return nearbyint_even(x);
    case Intrinsic::Trunc: return std::trunc(x);
    case Intrinsic::Abs: return std::fabs(x);
    case Intrinsic::Exp: return std::exp(x);
    case Intrinsic::Log: return std::log(x);
    case Intrinsic::Sqrt: return std::sqrt(x);
    case Intrinsic::Tanh: return std::tanh(x);
    case Intrinsic::Sin: return std::sin(x);
    case Intrinsic::Cos: return std::cos(x);
    case Intrinsic::Tan: return std::tan(x);
    case Intrinsic::Asin: return std::asin(x);
    case Intrinsic::Acos: return std::acos(x);
    case Intrinsic::Atan: return std::atan(x);
    case Intrinsic::Sinh: return std::sinh(x);
    case Intrinsic::Cosh: return std::cosh(x);
    case Intrinsic::Erf: return std::erf(x);
    case Intrinsic::Sigmoid: return F(1) / (F(1) + std::exp(-x));
    case Intrinsic::Exp2: return std::exp2(x);
    case Intrinsic::Log2: return std::log2(x);
    case Intrinsic::Log10: return std::log10(x);
    case Intrinsic::Log1p: return std::log1p(x);
    case Intrinsic::Expm1: return std::expm1(x);
    case Intrinsic::Rsqrt: return F(1) / std::sqrt(x);
    case Intrinsic::Likely: return x;
    default: break;
  }
  TE_ICHECK(false, "float_unary: not a one-argument intrinsic");
  return x;
}

}  // namespace

Scalar float_binary_lane(BinOp op, DataType t, Scalar a, Scalar b) {
  if (t.bits() == 64) return float_op(op, a.f, b.f, t);
  return float_op(op, static_cast<float>(a.f), static_cast<float>(b.f), t);
}

Scalar cast_lane(DataType from, DataType to, Scalar v) {
  if (to.is_bool()) return int_scalar(from.is_float() ? v.f != 0 : v.i != 0);
  if (to.is_float()) {
    if (from.is_float()) return float_scalar(round_to_float_type(v.f, to));
    return float_scalar(int_to_float(v.i, from, to));
  }
  if (from.is_float()) return int_scalar(float_to_int(v.f, to));
  return int_scalar(arith::wrap(v.i, to));
}

Scalar unary_intrinsic_lane(Intrinsic op, DataType t, Scalar x) {
  switch (op) {  // classification: bool results (on integers, constant answers)
    case Intrinsic::IsNan: return int_scalar(t.is_float() && std::isnan(x.f));
    case Intrinsic::IsInf: return int_scalar(t.is_float() && std::isinf(x.f));
    case Intrinsic::IsFinite: return int_scalar(!t.is_float() || std::isfinite(x.f));
    case Intrinsic::BitNot:
      if (!t.is_integer()) needs_integer(op, t);
      return int_scalar(arith::bit_not(x.i, t));
    case Intrinsic::Popcount:
      if (!t.is_integer()) needs_integer(op, t);
      return int_scalar(arith::popcount(x.i, t));
    default: break;
  }
  if (t.is_float()) {
    if (t.bits() == 64) return float_scalar(float_unary(op, x.f));
    return float_scalar(finish(float_unary(op, static_cast<float>(x.f)), t));
  }
  switch (op) {
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round:
    case Intrinsic::NearbyInt:
    case Intrinsic::Trunc:
    case Intrinsic::Likely: return x;
    case Intrinsic::Abs:
      if (t.is_int() && x.i < 0) return int_scalar(arith::sub(0, x.i, t));
      return x;
    default: needs_float(op, t);
  }
}

Scalar binary_intrinsic_lane(Intrinsic op, DataType t, Scalar x, Scalar y) {
  switch (op) {
    case Intrinsic::Pow:
    case Intrinsic::Atan2: {
      if (!t.is_float()) needs_float(op, t);
      auto f = [op](auto a, auto b) { return op == Intrinsic::Pow ? std::pow(a, b) : std::atan2(a, b); };
      if (t.bits() == 64) return float_scalar(f(x.f, y.f));
      return float_scalar(finish(f(static_cast<float>(x.f), static_cast<float>(y.f)), t));
    }
    default: break;
  }
  if (!t.is_integer()) needs_integer(op, t);
  switch (op) {
    case Intrinsic::BitAnd: return int_scalar(arith::bit_and(x.i, y.i, t));
    case Intrinsic::BitOr: return int_scalar(arith::bit_or(x.i, y.i, t));
    case Intrinsic::BitXor: return int_scalar(arith::bit_xor(x.i, y.i, t));
    case Intrinsic::ShiftLeft: return int_scalar(arith::shift_left(x.i, y.i, t));
    case Intrinsic::ShiftRight: return int_scalar(arith::shift_right(x.i, y.i, t));
    default: break;
  }
  TE_ICHECK(false, "binary_intrinsic_lane: not a two-argument intrinsic");
  return x;
}

Scalar fma_lane(DataType t, Scalar a, Scalar b, Scalar c) {
  if (!t.is_float()) return int_scalar(arith::add(arith::mul(a.i, b.i, t), c.i, t));
  if (t.bits() == 64) return float_scalar(std::fma(a.f, b.f, c.f));
  float r = std::fma(static_cast<float>(a.f), static_cast<float>(b.f), static_cast<float>(c.f));
  return float_scalar(finish(r, t));
}

}  // namespace te::interp
