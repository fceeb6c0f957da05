#include "expr_gen.h"

#include <cmath>
#include <limits>

namespace te::fuzz {

const std::vector<DataType>& integer_types() {
  static const std::vector<DataType> t = {Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32), UInt(64)};
  return t;
}

const std::vector<DataType>& all_scalar_types() {
  static const std::vector<DataType> t = {Int(8),   Int(16),  Int(32),   Int(64),   UInt(8),   UInt(16),
                                          UInt(32), UInt(64), Float(16), Float(32), Float(64), Bool()};
  return t;
}

const std::vector<DataType>& types_with_bfloat16() {
  static const std::vector<DataType> t = [] {
    std::vector<DataType> v = all_scalar_types();
    v.push_back(BFloat(16));
    return v;
  }();
  return t;
}

ExprGen::ExprGen(Rng& rng, ExprGenOptions options, ConstantMaker make_constant)
    : rng_(rng), opt_(options), make_constant_(std::move(make_constant)) {}

DataType ExprGen::any_type(bool allow_bool) {
  std::vector<DataType> ok;
  for (DataType t : opt_.bfloat16 ? types_with_bfloat16() : all_scalar_types())
    if (!(t.is_bool() && !allow_bool) && !(t.is_float() && !opt_.floats)) ok.push_back(t);
  return rng_.pick(ok);
}

Expr ExprGen::immediate(DataType t) {
  if (t.is_bool()) return rng_.chance(50) ? const_true() : const_false();
  if (opt_.positive_only) return t.is_float() ? make_const(t, rng_.uniform(0.5, 2.0)) : make_const(t, rng_.range(1, 2));
  if (opt_.small_constants) {
    int64_t v = rng_.range(t.is_uint() ? 0 : -4, 4);
    return t.is_float() ? make_const(t, static_cast<double>(v)) : make_const(t, v);
  }
  if (t.is_float()) {
    const double inf = std::numeric_limits<double>::infinity();
    switch (rng_.below(12)) {
      case 0: return make_const(t, std::numeric_limits<double>::quiet_NaN());
      case 1: return make_const(t, rng_.chance(50) ? inf : -inf);
      case 2: return make_const(t, rng_.chance(50) ? 0.0 : -0.0);
      case 3: return make_const(t, std::ldexp(1.0, static_cast<int>(rng_.range(-20, 20))));
      case 4: return make_const(t, static_cast<double>(rng_.range(-3, 3)) + 0.5);
      case 5: return make_const(t, 1e300 * (rng_.chance(50) ? 1 : -1));  // rounds to inf below float64
      case 6: return make_const(t, 0.1);                                 // inexact in every precision
      default: return make_const(t, rng_.uniform(-100, 100));
    }
  }
  const int bits = t.bits();
  const int64_t mn = t.is_uint() ? 0 : *as_const_int(min_value(t));
  const int64_t mx = *as_const_int(max_value(t));
  switch (rng_.below(9)) {
    case 0: return make_const(t, mn);
    case 1: return make_const(t, mx);
    case 2: return make_const(t, rng_.range(t.is_uint() ? 0 : -2, 2));
    case 3: return make_const(t, static_cast<int64_t>(int64_t{1} << rng_.below(static_cast<uint64_t>(bits - 1))));
    case 4: return make_const(t, t.is_uint() ? rng_.range(0, 100) : rng_.range(-100, 100));
    case 5: return make_const(t, static_cast<int64_t>(static_cast<uint64_t>(mx) - rng_.below(3)));
    default: {
      // Random bits wrapped to the type.
      uint64_t u = rng_.bits();
      if (bits < 64) u &= (uint64_t{1} << bits) - 1;
      int64_t v = static_cast<int64_t>(u);
      if (t.is_int() && bits < 64 && (u >> (bits - 1))) v -= int64_t{1} << bits;
      return make_const(t, v);
    }
  }
}

Expr ExprGen::wrap_constant(DataType t, const Expr& imm) { return make_constant_ ? make_constant_(t, imm) : imm; }

Expr ExprGen::constant(DataType t) { return wrap_constant(t, immediate(t)); }

Expr ExprGen::leaf(DataType t) {
  std::vector<Expr> same;
  for (const Expr& e : leaves_)
    if (e.dtype() == t) same.push_back(e);
  if (!same.empty() && rng_.chance(70)) return rng_.pick(same);
  if (!leaves_.empty() && rng_.chance(60)) {
    const Expr& e = rng_.pick(leaves_);
    if (!(e.dtype().is_float() && !opt_.floats)) return cast(t, e);
  }
  return constant(t);
}

Expr ExprGen::divisor(DataType t, int depth) {
  if (rng_.chance(50)) return gen(t, depth - 1);
  static const int64_t kSmall[] = {0, 1, -1, 2, 3, 7, 8, -3, 64};
  int64_t d = rng_.pick(kSmall);
  if (t.is_uint() && d < 0) d = 5;
  return wrap_constant(t, make_const(t, d));
}

Expr ExprGen::gen(DataType t, int depth) {
  if (t.is_bool()) return gen_bool(depth);
  if (depth <= 0 || rng_.chance(15)) return leaf(t);
  if (opt_.lets && !opt_.positive_only && rng_.chance(4)) {
    DataType u = any_type(true);
    Var v("let" + std::to_string(lets_++), u);
    Expr value = gen(u, depth - 1);
    leaves_.push_back(v);
    Expr body = gen(t, depth - 1);
    leaves_.pop_back();
    return let(v, value, body);
  }
  return t.is_float() ? gen_float(t, depth) : gen_int(t, depth);
}

// Every operand below is drawn in its own statement: C++ leaves the order of evaluating
// function arguments (and operands of overloaded operators) unspecified, and a seed
// must give the same case whichever compiler built the fuzzer.
std::pair<Expr, Expr> ExprGen::two(DataType t, int depth) {
  Expr a = gen(t, depth);
  Expr b = gen(t, depth);
  return {a, b};
}

Expr ExprGen::gen_int(DataType t, int depth) {
  const bool wrap_ok = opt_.signed_wrap || t.is_uint() || t.bits() < 32;
  const int d = depth - 1;
  for (int attempt = 0; attempt < 8; ++attempt) {
    switch (rng_.below(17)) {
      case 0:
        if (wrap_ok) {
          auto [a, b] = two(t, d);
          return a + b;
        }
        break;
      case 1:
        if (wrap_ok) {
          auto [a, b] = two(t, d);
          return a - b;
        }
        break;
      case 2:
        if (wrap_ok) {
          auto [a, b] = two(t, d);
          return a * b;
        }
        break;
      case 3:
      case 4:
      case 5:
      case 6:
        if (opt_.int_division) {
          static const BinOp kOps[] = {BinOp::Div, BinOp::Mod, BinOp::TruncDiv, BinOp::TruncMod};
          BinOp op = kOps[rng_.below(4)];
          Expr a = gen(t, d);
          Expr b = divisor(t, depth);
          return make_binary(op, a, b);
        }
        break;
      case 7: {
        auto [a, b] = two(t, d);
        return min(a, b);
      }
      case 8: {
        auto [a, b] = two(t, d);
        return max(a, b);
      }
      case 9:
      case 10: {
        bool guarded = rng_.chance(50);
        Expr c = gen_bool(d);
        auto [a, b] = two(t, d);
        return guarded ? if_then_else(c, a, b) : select(c, a, b);
      }
      case 11:
      case 12: {
        DataType u = any_type(true);
        return cast(t, gen(u, d));  // from floats: saturating
      }
      case 13:
        if (wrap_ok) return abs(gen(t, d));
        break;
      case 14:
        if (wrap_ok) return -gen(t, d);
        break;
      case 15: {
        // Rounding intrinsics are the identity on integers (the builder drops them).
        Expr x = gen(t, d);
        return rng_.chance(50) ? floor(x) : round(x);
      }
      default:
        // The index shapes split and fuse produce: (a * c + b) / c and % c.
        if (wrap_ok && opt_.int_division) {
          static const int64_t kFactors[] = {2, 3, 4, 7, 16};
          Expr c = wrap_constant(t, make_const(t, rng_.pick(kFactors)));
          auto [a, b] = two(t, d);
          Expr s = a * c + b;
          return rng_.chance(50) ? s / c : s % c;
        }
        break;
    }
  }
  return leaf(t);
}

Expr ExprGen::gen_float(DataType t, int depth) {
  const int d = depth - 1;
  if (opt_.positive_only) {
    bool add = rng_.chance(50);
    auto [a, b] = two(t, d);
    return add ? a + b : a * b;
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    switch (rng_.below(opt_.exact_floats_only ? 9 : 24)) {
      case 0: {
        auto [a, b] = two(t, d);
        return a + b;
      }
      case 1: {
        auto [a, b] = two(t, d);
        return a - b;
      }
      case 2: {
        auto [a, b] = two(t, d);
        return a * b;
      }
      case 3: {
        auto [a, b] = two(t, d);
        return min(a, b);
      }
      case 4: {
        auto [a, b] = two(t, d);
        return max(a, b);
      }
      case 5:
      case 6: {
        Expr c = gen_bool(d);
        auto [a, b] = two(t, d);
        return rng_.chance(50) ? if_then_else(c, a, b) : select(c, a, b);
      }
      case 7: return abs(gen(t, d));
      case 8: return -gen(t, d);
      case 9:
        if (opt_.float_division) {
          auto [a, b] = two(t, d);
          return a / b;
        }
        break;
      case 10:
      case 11: {
        DataType u = any_type(true);
        return cast(t, gen(u, d));
      }
      case 12: return floor(gen(t, d));
      case 13: return ceil(gen(t, d));
      case 14: return round(gen(t, d));
      case 15: return nearbyint(gen(t, d));
      case 16: return trunc(gen(t, d));
      case 17: {
        auto [a, b] = two(t, d);
        Expr c = gen(t, d);
        return fma(a, b, c);
      }
      case 18:
        if (opt_.transcendental) return exp(gen(t, d));
        break;
      case 19:
        if (opt_.transcendental) return log(gen(t, d));
        break;
      case 20:
        if (opt_.transcendental) return sqrt(gen(t, d));
        break;
      case 21:
        if (opt_.transcendental) {
          auto [a, b] = two(t, d);
          return pow(a, b);
        }
        break;
      case 22:
        if (opt_.transcendental) return tanh(gen(t, d));
        break;
      default: {
        Expr a = gen(t, d);
        Expr c = constant(t);
        return a + c;
      }
    }
  }
  return leaf(t);
}

Expr ExprGen::gen_bool(int depth) {
  if (depth <= 0 || rng_.chance(10)) return leaf(Bool());
  const int d = depth - 1;
  DataType u = any_type(false);
  switch (rng_.below(12)) {
    case 0: {
      auto [a, b] = two(Bool(), d);
      return a && b;
    }
    case 1: {
      auto [a, b] = two(Bool(), d);
      return a || b;
    }
    case 2: return !gen_bool(d);
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 8: {
      static const BinOp kOps[] = {BinOp::EQ, BinOp::NE, BinOp::LT, BinOp::LE, BinOp::GT, BinOp::GE};
      BinOp op = kOps[rng_.below(6)];
      auto [a, b] = two(u, d);
      return make_binary(op, a, b);
    }
    case 9: return cast(Bool(), gen(u, d));
    case 10: {
      Expr c = gen_bool(d);
      auto [a, b] = two(Bool(), d);
      return select(c, a, b);
    }
    default: return likely(gen_bool(d));
  }
}

}  // namespace te::fuzz
