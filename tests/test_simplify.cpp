// The simplifier: targeted rewrites that must fire, rewrites that must not (overflow, NaN),
// statements, and a seeded property test comparing random integer expressions before and
// after simplification on random values inside random variable bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <unordered_map>

#include <te/te.h>

#include "expr/int_arith.h"
#include "test_util.h"

using namespace te;

namespace {

std::string str(const Expr& e) { return to_string(e); }
std::string simp(const Expr& e, const VarBounds& b = {}) { return to_string(simplify(e, b)); }

template <typename T, typename... A>
Expr node(A&&... args) {
  return Expr(std::make_shared<const T>(std::forward<A>(args)...));
}

// ---- A reference evaluator for scalar integer and bool expressions (int_arith.h) ----
using Env = std::unordered_map<const VarNode*, int64_t>;

int64_t eval(const Expr& e, const Env& env) {
  DataType t = e.dtype();
  switch (e->kind) {
    case ExprKind::IntImm: return arith::wrap(e.as<IntImmNode>()->value, t);
    case ExprKind::Var: return env.at(e.as<VarNode>());
    case ExprKind::Cast: {
      const Expr& v = e.as<CastNode>()->value;
      int64_t x = eval(v, env);
      if (t.is_bool()) return x != 0;
      return arith::wrap(x, t);
    }
    case ExprKind::Binary: {
      auto* n = e.as<BinaryNode>();
      DataType ot = n->a.dtype();
      int64_t a = eval(n->a, env), b = eval(n->b, env);
      switch (n->op) {
        case BinOp::Add: return arith::add(a, b, ot);
        case BinOp::Sub: return arith::sub(a, b, ot);
        case BinOp::Mul: return arith::mul(a, b, ot);
        case BinOp::Div: return arith::floordiv(a, b, ot);
        case BinOp::Mod: return arith::floormod(a, b, ot);
        case BinOp::TruncDiv: return arith::truncdiv(a, b, ot);
        case BinOp::TruncMod: return arith::truncmod(a, b, ot);
        case BinOp::Min: return arith::less(a, b, ot) ? a : b;
        case BinOp::Max: return arith::less(a, b, ot) ? b : a;
        case BinOp::EQ: return a == b;
        case BinOp::NE: return a != b;
        case BinOp::LT: return arith::less(a, b, ot);
        case BinOp::LE: return !arith::less(b, a, ot);
        case BinOp::GT: return arith::less(b, a, ot);
        case BinOp::GE: return !arith::less(a, b, ot);
        case BinOp::And: return a && b;
        case BinOp::Or: return a || b;
      }
      break;
    }
    case ExprKind::Not: return !eval(e.as<NotNode>()->a, env);
    case ExprKind::Select: {
      auto* n = e.as<SelectNode>();
      int64_t c = eval(n->cond, env), x = eval(n->true_value, env), y = eval(n->false_value, env);
      return c ? x : y;
    }
    case ExprKind::Call: {
      auto* n = e.as<CallNode>();
      switch (n->op) {
        case Intrinsic::IfThenElse: return eval(n->args[0], env) ? eval(n->args[1], env) : eval(n->args[2], env);
        case Intrinsic::Likely: return eval(n->args[0], env);
        case Intrinsic::Abs: {
          int64_t x = eval(n->args[0], env);
          return x < 0 ? arith::sub(0, x, t) : x;
        }
        default: break;
      }
      break;
    }
    case ExprKind::Let: {
      auto* n = e.as<LetNode>();
      Env inner = env;
      inner[n->var.get()] = eval(n->value, env);
      return eval(n->body, inner);
    }
    default: break;
  }
  ADD_FAILURE() << "evaluator: unsupported node " << e;
  return 0;
}

// ---- Random expressions ----
const DataType kIntTypes[] = {Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32), UInt(64)};

int64_t type_min(DataType t) { return t.is_uint() ? 0 : *as_const_int(min_value(t)); }
int64_t type_max(DataType t) {  // uint64 is capped at INT64_MAX: VarBounds hold int64
  if (t == UInt(64)) return std::numeric_limits<int64_t>::max();
  return *as_const_int(max_value(t));
}

struct Case {
  std::vector<Var> vars;
  VarBounds bounds;
};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {
    for (DataType t : kIntTypes)
      for (int k = 0; k < 2; ++k) vars_.push_back(Var(fmt_name(t, k), t));
  }

  Case new_case() {
    Case c;
    c.vars = vars_;
    for (const Var& v : vars_) {
      if (chance(40)) continue;  // unbounded
      DataType t = v.dtype();
      int64_t lo, hi;
      switch (pick(4)) {
        case 0:
          lo = 0;
          hi = small(t, 100);
          break;
        case 1:
          lo = -static_cast<int64_t>(pick(50));
          hi = lo + static_cast<int64_t>(pick(100));
          break;
        case 2:
          lo = type_min(t);
          hi = lo + static_cast<int64_t>(pick(300));
          break;
        default: {
          int64_t a = value_of(t), b = value_of(t);
          lo = std::min(a, b);
          hi = std::max(a, b);
          if (t.is_uint() && (lo < 0 || hi < 0)) lo = 0, hi = type_max(t);
        }
      }
      lo = std::max(lo, type_min(t));
      hi = std::min(hi, type_max(t));
      if (lo > hi) continue;
      c.bounds[v.get()] = Interval{lo, hi};
    }
    return c;
  }

  // A value for v inside its bounds (edges often).
  int64_t sample(const Var& v, const VarBounds& b) {
    auto it = b.find(v.get());
    DataType t = v.dtype();
    if (it == b.end()) return arith::wrap(value_of(t), t);
    int64_t lo = it->second.min, hi = it->second.max;
    switch (pick(5)) {
      case 0: return lo;
      case 1: return hi;
      default: {
        uint64_t width = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
        uint64_t r = width == std::numeric_limits<uint64_t>::max() ? rng_() : rng_() % (width + 1);
        return static_cast<int64_t>(static_cast<uint64_t>(lo) + r);
      }
    }
  }

  Expr gen(DataType t, int depth) {
    if (depth <= 0 || chance(20)) return leaf(t);
    switch (pick(14)) {
      case 0: return gen(t, depth - 1) + gen(t, depth - 1);
      case 1: return gen(t, depth - 1) - gen(t, depth - 1);
      case 2: return gen(t, depth - 1) * (chance(60) ? constant(t) : gen(t, depth - 1));
      case 3: return gen(t, depth - 1) / divisor(t, depth);
      case 4: return gen(t, depth - 1) % divisor(t, depth);
      case 5: return truncdiv(gen(t, depth - 1), divisor(t, depth));
      case 6: return truncmod(gen(t, depth - 1), divisor(t, depth));
      case 7: return min(gen(t, depth - 1), gen(t, depth - 1));
      case 8: return max(gen(t, depth - 1), gen(t, depth - 1));
      case 9: return select(gen_bool(depth - 1), gen(t, depth - 1), gen(t, depth - 1));
      case 10: {
        DataType u = kIntTypes[pick(8)];
        return cast(t, gen(u, depth - 1));
      }
      case 11: {
        // The canonical split/fuse shapes: (a * c + b) / c and (a * c + b) % c.
        Expr c = small_positive(t);
        Expr s = gen(t, depth - 1) * c + gen(t, depth - 1);
        return chance(50) ? s / c : s % c;
      }
      case 12: return if_then_else(gen_bool(depth - 1), gen(t, depth - 1), gen(t, depth - 1));
      default: return t.is_int() && chance(50) ? abs(gen(t, depth - 1)) : gen(t, depth - 1) + constant(t);
    }
  }

  Expr gen_bool(int depth) {
    if (depth <= 0 || chance(10)) return chance(50) ? const_true() : const_false();
    DataType u = kIntTypes[pick(8)];
    switch (pick(10)) {
      case 0: return gen_bool(depth - 1) && gen_bool(depth - 1);
      case 1: return gen_bool(depth - 1) || gen_bool(depth - 1);
      case 2: return !gen_bool(depth - 1);
      case 3: return gen(u, depth - 1) == gen(u, depth - 1);
      case 4: return gen(u, depth - 1) != gen(u, depth - 1);
      case 5: return gen(u, depth - 1) <= gen(u, depth - 1);
      case 6: return gen(u, depth - 1) > gen(u, depth - 1);
      case 7: return gen(u, depth - 1) >= gen(u, depth - 1);
      default: return gen(u, depth - 1) < gen(u, depth - 1);
    }
  }

  uint64_t pick(uint64_t n) { return rng_() % n; }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }
  const std::vector<Var>& vars() const { return vars_; }

  // Extra int32 leaves: the loop and let variables in scope of a generated statement.
  std::vector<Var> scope;

 private:
  static std::string fmt_name(DataType t, int k) { return t.to_string() + "_" + std::to_string(k); }

  Expr leaf(DataType t) {
    if (t == Int(32) && !scope.empty() && chance(60)) return scope[pick(scope.size())];
    if (chance(65)) return vars_[index_of(t) * 2 + pick(2)];
    return constant(t);
  }
  static size_t index_of(DataType t) {
    for (size_t i = 0; i < 8; ++i)
      if (kIntTypes[i] == t) return i;
    return 0;
  }
  int64_t small(DataType t, int64_t n) { return std::min<int64_t>(static_cast<int64_t>(pick(n)) + 1, type_max(t)); }

  int64_t value_of(DataType t) {
    int64_t mn = t.is_uint() ? 0 : *as_const_int(min_value(t));
    int64_t mx = *as_const_int(max_value(t));  // uint64: -1, all bits set
    switch (pick(10)) {
      case 0: return mn;
      case 1: return mx;
      case 2: return static_cast<int64_t>(pick(5)) - 2;
      case 3: return arith::add(mn, static_cast<int64_t>(pick(3)), t);
      case 4: return arith::sub(mx, static_cast<int64_t>(pick(3)), t);
      case 5: return int64_t{1} << pick(static_cast<uint64_t>(t.bits() - 1));
      case 6: return static_cast<int64_t>(pick(200)) - 100;
      default: return static_cast<int64_t>(rng_());
    }
  }
  Expr constant(DataType t) { return make_const(t, value_of(t)); }
  Expr small_positive(DataType t) {
    static const int64_t kDivisors[] = {2, 3, 4, 7, 8, 10, 16, 64};
    return make_const(t, std::min<int64_t>(kDivisors[pick(8)], type_max(t)));
  }
  Expr divisor(DataType t, int depth) {
    if (chance(25)) return gen(t, depth - 1);
    static const int64_t kDivisors[] = {0, 1, -1, 2, 3, 4, 7, 8, 16, 64, -4, -7, 100};
    return make_const(t, kDivisors[pick(13)]);
  }

  std::mt19937_64 rng_;
  std::vector<Var> vars_;
};

uint64_t base_seed() {
  const char* s = std::getenv("TE_SIMPLIFY_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20240611;
}
// TE_SIMPLIFY_SCALE=k runs k times as many random cases (for a long soak).
int scale() {
  const char* s = std::getenv("TE_SIMPLIFY_SCALE");
  return s ? std::max(1, std::atoi(s)) : 1;
}

}  // namespace

// ---- Targeted rewrites ----

TEST(SimplifyFold, IntegerConstants) {
  EXPECT_EQ(simp(node<BinaryNode>(Int(32), BinOp::Add, Expr(2), Expr(3))), "5");
  EXPECT_EQ(simp(node<BinaryNode>(Int(8), BinOp::Add, make_const(Int(8), 100), make_const(Int(8), 100))),
            "int8(-56)");                                                           // wraps
  EXPECT_EQ(simp(node<BinaryNode>(Int(32), BinOp::Div, Expr(-7), Expr(2))), "-4");  // floor
  EXPECT_EQ(simp(node<BinaryNode>(Int(32), BinOp::Mod, Expr(-7), Expr(2))), "1");
  EXPECT_EQ(simp(node<BinaryNode>(Int(32), BinOp::TruncDiv, Expr(-7), Expr(2))), "-3");
  EXPECT_EQ(simp(node<BinaryNode>(Int(32), BinOp::TruncMod, Expr(-7), Expr(2))), "-1");
  EXPECT_EQ(simp(node<BinaryNode>(Int(32), BinOp::Div, Expr(7), Expr(0))), "0");
  EXPECT_EQ(simp(node<BinaryNode>(UInt(8), BinOp::Div, make_const(UInt(8), 200), make_const(UInt(8), 3))), "uint8(66)");
  EXPECT_EQ(simp(node<BinaryNode>(Bool(), BinOp::LT, make_const(UInt(32), 1), make_const(UInt(32), -1))), "true");
}

TEST(SimplifyFold, FloatsFollowIeeeInTheirOwnPrecision) {
  auto fbin = [](BinOp op, Expr a, Expr b) { return node<BinaryNode>(a.dtype(), op, a, b); };
  Expr s = simplify(fbin(BinOp::Add, Expr(0.1f), Expr(0.2f)));
  ASSERT_TRUE(as_const_float(s));
  EXPECT_EQ(*as_const_float(s), static_cast<double>(0.1f + 0.2f));
  EXPECT_EQ(s.dtype(), Float(32));
  s = simplify(fbin(BinOp::Add, Expr(0.1), Expr(0.2)));
  EXPECT_EQ(*as_const_float(s), 0.1 + 0.2);
  // 1/3 in float32 is not 1/3 in float64 rounded later.
  s = simplify(fbin(BinOp::Div, Expr(1.0f), Expr(3.0f)));
  EXPECT_EQ(*as_const_float(s), static_cast<double>(1.0f / 3.0f));
  s = simplify(fbin(BinOp::Div, Expr(1.0f), Expr(0.0f)));
  EXPECT_TRUE(std::isinf(*as_const_float(s)));
  s = simplify(fbin(BinOp::Div, Expr(0.0f), Expr(0.0f)));
  EXPECT_TRUE(std::isnan(*as_const_float(s)));
  s = simplify(fbin(BinOp::Mul, make_const(Float(16), 1000.0), make_const(Float(16), 1000.0)));
  EXPECT_TRUE(std::isinf(*as_const_float(s)));  // float16 overflows at 65504
  EXPECT_EQ(str(simplify(fbin(BinOp::Add, make_const(Float(16), 1.0), make_const(Float(16), 0.0004)))), "float16(1.0)");
  Expr nan = make_const(Float(32), std::nan(""));
  EXPECT_EQ(simp(node<BinaryNode>(Bool(), BinOp::EQ, nan, nan)), "false");
  EXPECT_EQ(simp(node<BinaryNode>(Bool(), BinOp::NE, nan, nan)), "true");
  // min/max with NaN differ between backends: not folded.
  EXPECT_EQ(simp(fbin(BinOp::Min, nan, Expr(1.0f))), "min(float32(nan), 1.0f)");
  EXPECT_EQ(simp(fbin(BinOp::Max, Expr(2.0f), Expr(1.0f))), "2.0f");
}

TEST(SimplifyFold, FloatIdentitiesOnlyWhenExact) {
  Var f("f", Float(32));
  EXPECT_EQ(simp(f * 1.0f), "f");
  EXPECT_EQ(simp(f / 1.0f), "f");
  EXPECT_EQ(simp(f - 0.0f), "f");
  EXPECT_EQ(simp(f + 0.0f), "(f + 0.0f)");  // -0.0 + 0.0 is +0.0
  EXPECT_EQ(simp(f * 0.0f), "(f * 0.0f)");  // NaN, inf and -0.0
  EXPECT_EQ(simp(f - f), "(f - f)");        // NaN
  EXPECT_EQ(simp(f == f), "(f == f)");      // NaN
  EXPECT_EQ(simp(!(f < 1.0f)), "!(f < 1.0f)");
  EXPECT_EQ(simp(!(f == 1.0f)), "(f != 1.0f)");
}

TEST(SimplifyFold, Casts) {
  EXPECT_EQ(simp(node<CastNode>(Int(8), Expr(300))), "int8(44)");
  EXPECT_EQ(simp(node<CastNode>(UInt(32), Expr(-1))), "uint32(4294967295)");
  EXPECT_EQ(simp(node<CastNode>(Float(32), Expr(16777217))), "16777216.0f");
  EXPECT_EQ(simp(node<CastNode>(Int(32), Expr(-2.7f))), "-2");
  EXPECT_EQ(simp(node<CastNode>(Float(32), Expr(0.1))), "0.1f");
  EXPECT_EQ(simp(node<CastNode>(Bool(), Expr(3))), "true");
  EXPECT_EQ(simp(node<CastNode>(UInt(64), Expr(-1.0))), "uint64(-1.0)");  // out of range: kept
  EXPECT_EQ(simp(node<CastNode>(Int(32), Expr(3e10))), "int32(30000000000.0)");
  EXPECT_EQ(simp(node<CastNode>(Int(32), max_value(Float(32)))), "int32(float32(inf))");
  Var x("x"), s("s", Int(8)), u("u", UInt(8));
  EXPECT_EQ(simp(cast(Int(32), cast(Int(64), x))), "x");
  EXPECT_EQ(simp(cast(Float(64), cast(Int(64), x))), "float64(x)");
  EXPECT_EQ(simp(cast(Int(16), cast(Int(8), x))), "int16(int8(x))");  // truncation matters
  EXPECT_EQ(simp(cast(Int(8), cast(Int(16), x))), "int8(x)");         // low bits survive
  EXPECT_EQ(simp(cast(Int(32), cast(Int(16), u))), "int32(u)");
  EXPECT_EQ(simp(cast(Int(32), cast(Float(32), x))), "int32(float32(x))");  // rounds
  EXPECT_EQ(simp(cast(Int(32), cast(Float(64), x))), "x");
  EXPECT_EQ(simp(cast(Int(64), cast(Float(16), s))), "int64(s)");
}

TEST(SimplifyArith, CollectsTermsAndConstants) {
  Var x("x"), y("y");
  EXPECT_EQ(simp((x + 3) + 5), "(x + 8)");
  EXPECT_EQ(simp(x * 2 + x * 3), "(x * 5)");
  EXPECT_EQ(simp(x - x), "0");
  EXPECT_EQ(simp(x + 0), "x");
  EXPECT_EQ(simp(x * 1), "x");
  EXPECT_EQ(simp(x * 0), "0");
  EXPECT_EQ(simp(3 + x), "(x + 3)");
  EXPECT_EQ(simp(x - 3), "(x - 3)");
  EXPECT_EQ(simp(x + y - x), "y");
  EXPECT_EQ(simp((x + y) * 4 - y * 4), "(x * 4)");
  EXPECT_EQ(simp(y - x * 2), "(y - (x * 2))");
  EXPECT_EQ(simp(0 - x - 5), "(-5 - x)");
  EXPECT_EQ(simp((x + 1) * (y + 2)), "((x + 1) * (y + 2))");
  EXPECT_EQ(simp(x / 7 * 7 + x % 7), "x");
  EXPECT_EQ(simp((x + y) / 8 * 16 + (x + y) % 8 * 2 + 1), "(((x * 2) + (y * 2)) + 1)");
  Var u("u", UInt(32));
  EXPECT_EQ(simp(u - 1 + 1), "u");
  EXPECT_EQ(simp(u + make_const(UInt(32), -1)), "(u - uint32(1))");
}

TEST(SimplifyArith, ModuloSeesThroughInnerModuloOfAMultiple) {
  Var x("x"), y("y");
  // x % 4 is x modulo 2: (x + x % 4) % 2 is (2x) % 2.
  EXPECT_EQ(simp((x + x % 4) % 2), "0");
  EXPECT_EQ(simp((x + x % 2 + y * 2 - 2) % 2), "0");        // skip_zeros' lattice offsets
  VarBounds b{{x.get(), {0, 1000}}, {y.get(), {0, 1000}}};  // 3 is no power of two: no wrapping
  EXPECT_EQ(simp((y + x % 6) % 3, b), "((y + x) % 3)");
  EXPECT_EQ(simp((y + x % 3) % 2, b), "((y + (x % 3)) % 2)");  // 2 does not divide 3
  // truncmod(e, d) == 0 holds exactly when e % d == 0.
  EXPECT_EQ(simp(truncmod(x + x % 2 - 2, 2) == 0), "true");
  EXPECT_EQ(simp(truncmod(x - 3, 2) != 0), "(((x + 1) % 2) != 0)");
}

TEST(SimplifyArith, DivisionAndModuloByConstants) {
  Var x("x"), y("y");
  VarBounds b{{y.get(), {0, 63}}, {x.get(), {0, 1000}}};
  EXPECT_EQ(simp((x * 64 + y) / 64, b), "x");
  EXPECT_EQ(simp((x * 64 + y) % 64, b), "y");
  EXPECT_EQ(simp((x * 8) / 4, b), "(x * 2)");
  EXPECT_EQ(simp((x * 128 + y) / 64, b), "(x * 2)");
  EXPECT_EQ(simp((x * 64 + y + 64) / 64, b), "(x + 1)");
  EXPECT_EQ(simp((x * 64 + y + 3) / 64, b), "(x + ((y + 3) / 64))");
  // A common factor (x * 16) / 32 == x / 2; an offset below the terms' alignment leaves a
  // quotient alone: (x * 8 + w) / 32 == x / 4 for w in [0, 8) (a row tile inside a group).
  Var w("w");
  VarBounds bw{{x.get(), {0, 1000}}, {w.get(), {0, 7}}};
  EXPECT_EQ(simp((x * 16) / 32, b), "(x / 2)");
  EXPECT_EQ(simp((x * 16) % 32, b), "((x % 2) * 16)");
  EXPECT_EQ(simp((x * 8 + w) / 32, bw), "(x / 4)");
  EXPECT_EQ(simp((x * 8 + w) % 32, bw), "(w + ((x % 4) * 8))");
  EXPECT_EQ(simp((x * 8 + w + 8) / 32, bw), "((x + 1) / 4)");
  EXPECT_EQ(simp((x * 8 + w + 1) / 32, bw), "((((x * 8) + w) + 1) / 32)");
  EXPECT_EQ(simp((x * 8 + 3) / 32, bw), "(x / 4)");
  EXPECT_EQ(simp((x * 8 + 3) % 32, bw), "(((x % 4) * 8) + 3)");
  EXPECT_EQ(simp(x / 1), "x");
  EXPECT_EQ(simp(x % 1), "0");
  EXPECT_EQ(simp(x / 0), "0");
  EXPECT_EQ(simp(x % 0), "0");
  EXPECT_EQ(simp(x / -1), "(0 - x)");
  EXPECT_EQ(simp(x / 4 / 8), "(x / 32)");
  EXPECT_EQ(simp(x % 64 % 8), "(x % 8)");
  EXPECT_EQ(simp(y % 64, b), "y");
  EXPECT_EQ(simp(y / 64, b), "0");
  EXPECT_EQ(simp(y % 10, b), "(y % 10)");
  // Residues modulo a power of two survive wrapping: no bounds needed on x.
  EXPECT_EQ(simp((x * 64 + y) % 64, {{y.get(), {0, 63}}}), "y");
  EXPECT_EQ(simp((x * 65 + 3) % 64), "((x + 3) % 64)");
  // Negative values: floor semantics.
  VarBounds neg{{y.get(), {-64, -1}}, {x.get(), {-10, 10}}};
  EXPECT_EQ(simp((x * 64 + y) / 64, neg), "(x - 1)");
  EXPECT_EQ(simp((x * 64 + y) % 64, neg), "(y + 64)");
  // Bounds of sub-expressions count too: z % 64 is in [0, 63] whatever z is.
  Var z("z");
  EXPECT_EQ(simp((x * 64 + z % 64) / 64, b), "x");
  EXPECT_EQ(simp((x * 64 + z % 64) % 64), "(z % 64)");
  EXPECT_EQ(simp((x * 64 + min(max(z, 0), 63)) / 64, b), "x");
  // Truncating division agrees with floor division on non-negative values only.
  EXPECT_EQ(simp(truncdiv(x * 64 + y, 64), b), "x");
  EXPECT_EQ(simp(truncmod(y, 64), b), "y");
  EXPECT_EQ(simp(truncdiv(y, 8), neg), "truncdiv(y, 8)");
  Var u("u", UInt(8));
  EXPECT_EQ(simp(truncdiv(u, make_const(UInt(8), 4))), "(u / uint8(4))");
}

TEST(SimplifyArith, NoRewriteThatOverflowCouldBreak) {
  Var x("x"), y("y");
  // x * 64 can wrap for an unbounded int32 x: (x*64 + y) / 64 is not x then.
  VarBounds yb{{y.get(), {0, 63}}};
  Expr e = (x * 64 + y) / 64;
  Expr s = simplify(e, yb);
  EXPECT_EQ(str(s), "(((x * 64) + y) / 64)");
  EXPECT_EQ(simp((x * 8) / 4), "((x * 8) / 4)");
  EXPECT_EQ(simp(x < x + 1), "(x < (x + 1))");
  EXPECT_EQ(simp(x < x + 1, {{x.get(), {0, 100}}}), "true");
  EXPECT_EQ(simp(min(x, x + 1)), "min(x, (x + 1))");
  EXPECT_EQ(simp(min(x, x + 1), {{x.get(), {-5, 5}}}), "x");
  EXPECT_EQ(simp(x + 1 == x + 1), "true");  // ring identity: exact under wrapping
  EXPECT_EQ(simp(x + 1 != x), "true");
}

TEST(SimplifyLogic, BoundsDecideComparisonsAndMinMax) {
  Var x("x"), y("y");
  VarBounds b{{x.get(), {0, 5}}, {y.get(), {10, 20}}};
  EXPECT_EQ(simp(x < 10, b), "true");
  EXPECT_EQ(simp(x < y, b), "true");
  EXPECT_EQ(simp(x >= y, b), "false");
  EXPECT_EQ(simp(x == y, b), "false");
  EXPECT_EQ(simp(x < 3, b), "(x < 3)");
  EXPECT_EQ(simp(min(x, 10), b), "x");
  EXPECT_EQ(simp(max(x, 10), b), "10");
  EXPECT_EQ(simp(min(y, x), b), "x");
  EXPECT_EQ(simp(max(x, y), b), "y");
  EXPECT_EQ(simp(min(x, y)), "min(x, y)");
  EXPECT_EQ(simp(min(min(x, 3), 5)), "min(x, 3)");
  EXPECT_EQ(simp(max(7, x)), "max(x, 7)");
  EXPECT_EQ(simp(x * 2 + 1 < x * 2 + 3, b), "true");
  EXPECT_EQ(simp(min(x, x)), "x");
  Var n("n");
  // A point interval is a constant.
  EXPECT_EQ(simp(n + 1, {{n.get(), {4, 4}}}), "5");
}

TEST(SimplifyLogic, BooleanRules) {
  Var x("x"), y("y");
  Var p("p", Bool()), q("q", Bool());
  EXPECT_EQ(simp(!(x < y)), "(x >= y)");
  EXPECT_EQ(simp(!(x == y)), "(x != y)");
  EXPECT_EQ(simp(!!p), "p");
  EXPECT_EQ(simp(const_true() && p), "p");
  EXPECT_EQ(simp(p && const_false()), "false");
  EXPECT_EQ(simp(const_false() || p), "p");
  EXPECT_EQ(simp(p || const_true()), "true");
  EXPECT_EQ(simp(p && p), "p");
  EXPECT_EQ(simp(p && !p), "false");
  EXPECT_EQ(simp(p || !p), "true");
  EXPECT_EQ(simp(p == const_true()), "p");
  EXPECT_EQ(simp(p == const_false()), "!p");
  EXPECT_EQ(simp(p && q), "(p && q)");
  EXPECT_EQ(simp(select(const_true(), x, y)), "x");
  EXPECT_EQ(simp(select(const_false(), x, y)), "y");
  EXPECT_EQ(simp(select(p, x, x)), "x");
  EXPECT_EQ(simp(select(p, const_true(), const_false())), "p");
  EXPECT_EQ(simp(select(x < 3, x + 1 - 1, y)), "select((x < 3), x, y)");
  EXPECT_EQ(simp(if_then_else(Expr(1) < 2, x, y)), "x");
  EXPECT_EQ(simp(if_then_else(x < 10, y, y)), "y");
  EXPECT_EQ(simp(likely(Expr(2) < 1)), "false");
}

TEST(SimplifyVector, RampAndBroadcastArithmetic) {
  Var x("x"), y("y");
  EXPECT_EQ(simp(ramp(x, 1, 4) + broadcast(y, 4)), "ramp((x + y), 1, 4)");
  EXPECT_EQ(simp(broadcast(y, 4) + ramp(x, 2, 4)), "ramp((y + x), 2, 4)");
  EXPECT_EQ(simp(ramp(x, 1, 4) + ramp(y, 3, 4)), "ramp((x + y), 4, 4)");
  EXPECT_EQ(simp(ramp(x, 1, 4) - ramp(x, 1, 4)), "broadcast(0, 4)");
  EXPECT_EQ(simp(ramp(x, 1, 4) * broadcast(Expr(3), 4)), "ramp((x * 3), 3, 4)");
  EXPECT_EQ(simp(broadcast(x, 4) * broadcast(Expr(2), 4) + broadcast(Expr(1), 4)), "broadcast(((x * 2) + 1), 4)");
  EXPECT_EQ(simp(ramp(x, 0, 8)), "broadcast(x, 8)");
  VarBounds b{{x.get(), {0, 100}}};
  EXPECT_EQ(simp(ramp(x * 8, 1, 8) / broadcast(Expr(8), 8), b), "broadcast(x, 8)");
  EXPECT_EQ(simp(ramp(x * 8, 1, 8) % broadcast(Expr(8), 8), b), "ramp(0, 1, 8)");
  EXPECT_EQ(simp(ramp(x * 16, 2, 8) / broadcast(Expr(2), 8), b), "ramp((x * 8), 1, 8)");
  // Lanes that stay inside one block of the divisor, known from the base's alignment
  // alone (x * 16 may sit at 16 mod 32, and its 16 lanes still end before the block).
  EXPECT_EQ(simp(ramp(x * 16, 1, 16) / broadcast(Expr(32), 16), b), "broadcast((x / 2), 16)");
  EXPECT_EQ(simp(ramp(x * 16, 1, 16) % broadcast(Expr(32), 16), b), "ramp(((x % 2) * 16), 1, 16)");
  EXPECT_EQ(simp(ramp(x * 16 + 4, 1, 4) / broadcast(Expr(32), 4), b), "broadcast((x / 2), 4)");
  EXPECT_EQ(simp(ramp(x * 16 + 1, 1, 16) / broadcast(Expr(32), 16), b),
            "(ramp(((x * 16) + 1), 1, 16) / broadcast(32, 16))");
  EXPECT_EQ(simp(ramp(x, 1, 8) < broadcast(Expr(200), 8), b), "broadcast(true, 8)");
  EXPECT_EQ(simp(ramp(x, 1, 8) < broadcast(Expr(50), 8), b), "(ramp(x, 1, 8) < broadcast(50, 8))");
  EXPECT_EQ(simp(select(broadcast(const_true(), 4), ramp(x, 1, 4), broadcast(y, 4))), "ramp(x, 1, 4)");
  EXPECT_EQ(simp(cast(Int(64, 4), broadcast(Expr(3), 4))), "broadcast(int64(3), 4)");
}

TEST(SimplifyBounds, ConstBoundsAndCanProve) {
  Var x("x"), y("y");
  VarBounds b{{x.get(), {0, 15}}, {y.get(), {-4, 4}}};
  Interval iv{};
  ASSERT_TRUE(const_bounds(x * 4 + 3, b, &iv));
  EXPECT_EQ(iv.min, 3);
  EXPECT_EQ(iv.max, 63);
  ASSERT_TRUE(const_bounds(x - y, b, &iv));
  EXPECT_EQ(iv.min, -4);
  EXPECT_EQ(iv.max, 19);
  ASSERT_TRUE(const_bounds(x % 4, {}, &iv));
  EXPECT_EQ(iv.min, 0);
  EXPECT_EQ(iv.max, 3);
  ASSERT_TRUE(const_bounds(y / 2, b, &iv));
  EXPECT_EQ(iv.min, -2);
  EXPECT_EQ(iv.max, 2);
  ASSERT_TRUE(const_bounds(min(x, 7) + max(y, 0), b, &iv));
  EXPECT_EQ(iv.min, 0);
  EXPECT_EQ(iv.max, 11);
  ASSERT_TRUE(const_bounds(x - x, {}, &iv));  // the simplifier sees x - x == 0
  EXPECT_EQ(iv.min, 0);
  EXPECT_EQ(iv.max, 0);
  ASSERT_TRUE(const_bounds(select(y < 0, x, 100), b, &iv));
  EXPECT_EQ(iv.min, 0);
  EXPECT_EQ(iv.max, 100);
  EXPECT_FALSE(const_bounds(x + y, {}, &iv));  // nothing known: the whole int32 range
  ASSERT_TRUE(const_bounds(x * 1000000, b, &iv));
  EXPECT_EQ(iv.max, 15000000);
  EXPECT_FALSE(const_bounds(x * 1000000000, b, &iv));  // may wrap: any int32
  EXPECT_FALSE(const_bounds(Var("f", Float(32)), {}, &iv));
  Var u("u", UInt(8));
  ASSERT_TRUE(const_bounds(cast(Int(32), u) + 1, {}, &iv));
  EXPECT_EQ(iv.min, 1);
  EXPECT_EQ(iv.max, 256);

  EXPECT_TRUE(can_prove(x < 16, b));
  EXPECT_TRUE(can_prove(x * 4 + 3 <= 63, b));
  EXPECT_FALSE(can_prove(x < 15, b));
  EXPECT_TRUE(can_prove(x + 1 > x, b));
  EXPECT_FALSE(can_prove(x + 1 > x));  // wraps at INT32_MAX
  EXPECT_TRUE(can_prove(x == x));
  expect_error([&] { can_prove(x + 1, b); }, {"can_prove", "bool", "int32"});
}

TEST(SimplifyStmt, LoopsBranchesAndLets) {
  Var i("i"), j("j"), n("n");
  Buffer c("C", Int(32), {1024});
  // Loop variables take their loop's bounds.
  Stmt s = for_loop(i, 0, 16, ForKind::Serial,
                    for_loop(j, 0, 64, ForKind::Serial, store(c, (i * 64 + j) / 64 + (i * 64 + j) % 64, {i * 64 + j})));
  EXPECT_EQ(to_string(simplify(s)),
            "for (i, 0, 16) {\n"
            "  for (j, 0, 64) {\n"
            "    C[((i * 64) + j)] = (i + j);\n"
            "  }\n"
            "}\n");
  // Decided branches go; an undecided one stays; the branch knows its condition.
  s = for_loop(i, 0, 16, ForKind::Serial,
               seq({if_then_else(i < 20, store(c, 1, {i}), store(c, 2, {i})),
                    if_then_else(i < 8, store(c, min(i, 7), {i}), store(c, max(i, 8), {i}))}));
  EXPECT_EQ(to_string(simplify(s)),
            "for (i, 0, 16) {\n"
            "  C[i] = 1;\n"
            "  if ((i < 8)) {\n"
            "    C[i] = i;\n"
            "  } else {\n"
            "    C[i] = i;\n"
            "  }\n"
            "}\n");
  // Extent 0 vanishes; extent 1 becomes its body.
  s = seq(
      {for_loop(i, 0, 0, ForKind::Serial, store(c, i, {i})), for_loop(j, 5, 1, ForKind::Parallel, store(c, j, {j}))});
  EXPECT_EQ(to_string(simplify(s)), "C[5] = 5;\n");
  s = for_loop(i, n, 1, ForKind::Serial, store(c, i + 1, {i}));
  EXPECT_EQ(to_string(simplify(s)), "C[n] = (n + 1);\n");
  s = for_loop(i, n * 2, 1, ForKind::Serial, store(c, i + 1, {i}));
  EXPECT_EQ(to_string(simplify(s)), "let i = (n * 2);\nC[i] = (i + 1);\n");
  // Thread-bound loops stay (they define the launch), even with one iteration.
  s = for_loop(i, 0, 1, ForKind::ThreadBinding, store(c, i, {i}), "threadIdx.x");
  EXPECT_EQ(to_string(simplify(s)), "launch_thread threadIdx.x (i, 0, 1) {\n  C[0] = 0;\n}\n");
  // A let is kept, and its value's bounds are known in its body.
  Var t("t");
  s = for_loop(i, 0, 4, ForKind::Serial, let_stmt(t, i * 2, store(c, select(t < 8, t, 0), {t})));
  EXPECT_EQ(to_string(simplify(s)), "for (i, 0, 4) {\n  let t = (i * 2);\n  C[t] = t;\n}\n");
  // Nothing left to do.
  s = for_loop(i, 0, 4, ForKind::Serial, if_then_else(i > 10, store(c, i, {i})));
  EXPECT_EQ(to_string(simplify(s)), "evaluate(0);\n");
  // Asserts that always pass disappear; a passing assert tells its body the condition.
  s = assert_stmt(n > 0, "n must be positive", if_then_else(n >= 1, store(c, n, {n})));
  EXPECT_EQ(to_string(simplify(s)), "assert((n > 0), \"n must be positive\");\nC[n] = n;\n");
  s = for_loop(i, 0, 4, ForKind::Serial, assert_stmt(i < 4, "in range", store(c, i, {i})));
  EXPECT_EQ(to_string(simplify(s)), "for (i, 0, 4) {\n  C[i] = i;\n}\n");
  // Predicates that always hold are dropped; a store no lane takes goes.
  Expr vi = ramp(i * 4, 1, 4);
  s = for_loop(i, 0, 8, ForKind::Serial,
               seq({store(c, broadcast(Expr(1), 4), {vi}, vi < broadcast(Expr(32), 4)),
                    store(c, broadcast(Expr(2), 4), {vi}, vi >= broadcast(Expr(32), 4))}));
  EXPECT_EQ(to_string(simplify(s)), "for (i, 0, 8) {\n  C[ramp((i * 4), 1, 4)] = broadcast(1, 4);\n}\n");
}

TEST(SimplifyStmt, SymbolicExtentsStillBoundTheLoop) {
  Var n("n"), io("i.outer"), ii("i.inner");
  Buffer c("C", Int(32), {n});
  // i.outer < (n + 63) / 64 <= 2^25, so i.outer * 64 + i.inner cannot wrap.
  Stmt s = for_loop(
      io, 0, (n + 63) / 64, ForKind::Serial,
      for_loop(ii, 0, 64, ForKind::Serial, store(c, (io * 64 + ii) / 64 * 3 + (io * 64 + ii) % 64, {io * 64 + ii})));
  EXPECT_EQ(to_string(simplify(s)),
            "for (i.outer, 0, ((n + 63) / 64)) {\n"
            "  for (i.inner, 0, 64) {\n"
            "    C[((i.outer * 64) + i.inner)] = ((i.outer * 3) + i.inner);\n"
            "  }\n"
            "}\n");
}

TEST(Simplify, KeepsUnchangedNodesAndHandlesUndefined) {
  Var x("x"), y("y");
  Expr e = min(x, y) + 1;
  EXPECT_TRUE(simplify(e).same_as(e));
  EXPECT_FALSE(simplify(Expr()).defined());
  EXPECT_FALSE(simplify(Stmt()).defined());
  Buffer c("C", Int(32), {4});
  Stmt s = store(c, x, {y});
  EXPECT_TRUE(simplify(s).same_as(s));
}

TEST(Simplify, LargeInputsStayFast) {
  // A long sum, a deep chain of divisions and a wide min tree: linear-ish, no blowup.
  Var x("x");
  Expr sum = x;
  for (int k = 0; k < 3000; ++k) sum = sum + (k % 2 ? x : Expr(k));
  EXPECT_EQ(str(simplify(sum)), "((x * 1501) + 2248500)");
  Expr d = x;
  for (int k = 0; k < 200; ++k) d = (d + 1) / 2 + d % 3;
  EXPECT_TRUE(simplify(d).defined());
  Expr m = x;
  for (int k = 0; k < 200; ++k) m = min(m + 1, max(m, x * k)) + select(m < k, m, x);
  EXPECT_TRUE(simplify(m, {{x.get(), {0, 10}}}).defined());
  Var i("i");
  Buffer c("C", Int(32), {64});
  Stmt s = store(c, i, {i});
  for (int k = 0; k < 100; ++k)
    s = for_loop(Var("v" + std::to_string(k)), 0, 2, ForKind::Serial, seq({s, store(c, i + k, {i})}));
  EXPECT_TRUE(simplify(s).defined());
}

// ---- The property test ----

TEST(SimplifyProperty, RandomIntegerExpressionsKeepTheirValues) {
  const uint64_t seed = base_seed();
  std::cout << "simplify property seed: " << seed << " (TE_SIMPLIFY_SEED overrides)\n";
  Gen g(seed);
  int checked = 0, changed = 0;
  const int kCases = 6000 * scale();
  for (int c = 0; c < kCases && !HasFailure(); ++c) {
    Case cs = g.new_case();
    bool want_bool = g.chance(20);
    DataType t = kIntTypes[g.pick(8)];
    Expr e = want_bool ? g.gen_bool(4) : g.gen(t, static_cast<int>(2 + g.pick(5)));
    Expr s = simplify(e, cs.bounds);
    std::string bounds_text;
    for (const Var& v : cs.vars) {
      auto it = cs.bounds.find(v.get());
      if (it != cs.bounds.end())
        bounds_text +=
            " " + v.name() + " in [" + std::to_string(it->second.min) + ", " + std::to_string(it->second.max) + "]";
    }
    SCOPED_TRACE("seed " + std::to_string(seed) + " case " + std::to_string(c) + "\n  expr: " + str(e) +
                 "\n  simplified: " + str(s) + "\n  bounds:" + bounds_text);
    ASSERT_EQ(s.dtype(), e.dtype());
    changed += !s.same_as(e);
    Interval iv{};
    bool has_bounds = const_bounds(e, cs.bounds, &iv);
    for (int k = 0; k < 12; ++k) {
      Env env;
      std::string values;
      for (const Var& v : cs.vars) {
        env[v.get()] = g.sample(v, cs.bounds);
        values += " " + v.name() + "=" + std::to_string(env[v.get()]);
      }
      int64_t want = eval(e, env), got = eval(s, env);
      ASSERT_EQ(want, got) << "values:" << values;
      if (has_bounds) {
        // Bounds are of the mathematical value: unsigned values read as unsigned.
        __int128 v = e.dtype().is_uint() ? static_cast<__int128>(arith::as_unsigned(want, e.dtype())) : want;
        ASSERT_TRUE(v >= iv.min && v <= iv.max)
            << "const_bounds [" << iv.min << ", " << iv.max << "] misses " << want << " at" << values;
      }
      if (e.dtype().is_bool() && want == 0) {
        ASSERT_FALSE(can_prove(e, cs.bounds)) << "at" << values;
      }
      ++checked;
    }
    // Idempotence: a second pass changes nothing.
    ASSERT_EQ(str(simplify(s, cs.bounds)), str(s)) << "not idempotent";
  }
  std::cout << "checked " << checked << " evaluations; " << changed << " of " << kCases
            << " expressions were rewritten\n";
  EXPECT_GT(changed, kCases / 4);
}

TEST(SimplifyProperty, VectorExpressionsAgreeLaneByLane) {
  // Ramp/broadcast rewrites checked by evaluating each lane as a scalar expression.
  Gen g(base_seed() + 1);
  for (int c = 0; c < 1000 * scale() && !HasFailure(); ++c) {
    DataType t = g.chance(50) ? Int(32) : kIntTypes[g.pick(8)];
    Var x("x", t), y("y", t);
    int lanes = 2 << g.pick(3);
    int64_t stride = static_cast<int64_t>(g.pick(9)) - 4, d = static_cast<int64_t>(g.pick(17)) - 4;
    // An aligned base (a constant offset) or an unknown one (y).
    Expr offset = g.chance(50) ? Expr(y) : make_const(t, static_cast<int64_t>(g.pick(8)));
    Expr base = x * make_const(t, static_cast<int64_t>(g.pick(20))) + offset;
    Expr r = ramp(base, make_const(t, stride), lanes);
    Expr bd = broadcast(make_const(t, d), lanes);
    Expr e;
    switch (g.pick(7)) {
      case 0: e = r / bd; break;
      case 1: e = r % bd; break;
      case 2: e = min(r, bd); break;
      case 3: e = r < bd; break;
      case 4: e = r + broadcast(y, lanes); break;
      case 5: e = r * bd; break;
      default: e = select(r >= bd, r, bd); break;
    }
    VarBounds b;
    if (g.chance(80)) b[x.get()] = {0, static_cast<int64_t>(g.pick(50))};
    if (g.chance(80)) b[y.get()] = {0, static_cast<int64_t>(g.pick(8))};
    Expr s = simplify(e, b);
    SCOPED_TRACE("expr: " + str(e) + "\n  simplified: " + str(s));
    for (int k = 0; k < 8; ++k) {
      Env env{{x.get(), g.sample(x, b)}, {y.get(), g.sample(y, b)}};
      for (int lane = 0; lane < lanes; ++lane) {
        // Lane `lane` of a vector expression, as a scalar expression.
        std::function<Expr(const Expr&)> at = [&](const Expr& v) -> Expr {
          if (!v.dtype().is_vector()) return v;
          if (auto* rr = v.as<RampNode>()) return rr->base + rr->stride * make_const(t, lane);
          if (auto* bb = v.as<BroadcastNode>()) return bb->value;
          if (auto* bn = v.as<BinaryNode>()) return make_binary(bn->op, at(bn->a), at(bn->b));
          if (auto* sn = v.as<SelectNode>()) return select(at(sn->cond), at(sn->true_value), at(sn->false_value));
          ADD_FAILURE() << "unexpected vector node " << v;
          return v;
        };
        ASSERT_EQ(eval(at(e), env), eval(at(s), env)) << "lane " << lane;
      }
    }
  }
}

// ---- Statements: random loop nests run by a small reference executor ----
namespace {

struct StoreEvent {
  std::string buffer;
  int64_t index, value;
  bool operator==(const StoreEvent& o) const { return buffer == o.buffer && index == o.index && value == o.value; }
};
struct AssertFailed {
  std::string message;
};

// Runs s and records every store (scalar stores only) in order.
void run(const Stmt& s, Env& env, std::vector<StoreEvent>* trace) {
  if (!s.defined()) return;
  switch (s->kind) {
    case StmtKind::LetStmt: {
      auto* n = s.as<LetStmtNode>();
      env[n->var.get()] = eval(n->value, env);
      run(n->body, env, trace);
      return;
    }
    case StmtKind::For: {
      auto* n = s.as<ForNode>();
      int64_t mn = eval(n->min, env), ext = eval(n->extent, env);
      for (int64_t i = 0; i < ext; ++i) {
        env[n->var.get()] = arith::wrap(mn + i, n->var.dtype());
        run(n->body, env, trace);
      }
      return;
    }
    case StmtKind::Store: {
      auto* n = s.as<StoreNode>();
      if (n->predicate.defined() && !eval(n->predicate, env)) return;
      trace->push_back({n->buffer.name(), eval(n->indices[0], env), eval(n->value, env)});
      return;
    }
    case StmtKind::IfThenElse: {
      auto* n = s.as<IfThenElseNode>();
      run(eval(n->cond, env) ? n->then_case : n->else_case, env, trace);
      return;
    }
    case StmtKind::Seq:
      for (const Stmt& x : s.as<SeqNode>()->seq) run(x, env, trace);
      return;
    case StmtKind::Evaluate: eval(s.as<EvaluateNode>()->value, env); return;
    case StmtKind::Assert: {
      auto* n = s.as<AssertNode>();
      if (!eval(n->cond, env)) throw AssertFailed{n->message};
      run(n->body, env, trace);
      return;
    }
    default: ADD_FAILURE() << "executor: unsupported statement\n" << s;
  }
}

std::vector<StoreEvent> run_all(const Stmt& s, Env env, std::string* failure) {
  std::vector<StoreEvent> trace;
  try {
    run(s, env, &trace);
  } catch (const AssertFailed& f) {
    *failure = f.message;
  }
  return trace;
}

Stmt gen_stmt(Gen& g, const Buffer& out, int depth) {
  int choice = depth <= 0 ? 0 : static_cast<int>(g.pick(7));
  switch (choice) {
    case 1:
    case 2: {
      Var v("v" + std::to_string(g.scope.size()));
      Expr mn = g.chance(60) ? Expr(static_cast<int>(g.pick(5)) - 2) : g.gen(Int(32), 1);
      Expr ext = g.chance(70) ? Expr(static_cast<int>(g.pick(4))) : min(max(g.gen(Int(32), 1), 0), 3);
      static const ForKind kinds[] = {ForKind::Serial, ForKind::Parallel, ForKind::Unrolled, ForKind::Vectorized};
      g.scope.push_back(v);
      Stmt body = gen_stmt(g, out, depth - 1);
      g.scope.pop_back();
      if (g.chance(10)) return for_loop(v, mn, ext, ForKind::ThreadBinding, body, "threadIdx.x");
      return for_loop(v, mn, ext, kinds[g.pick(4)], body);
    }
    case 3: {
      Expr c = g.gen_bool(2);
      Stmt t = gen_stmt(g, out, depth - 1);
      return g.chance(50) ? if_then_else(c, t) : if_then_else(c, t, gen_stmt(g, out, depth - 1));
    }
    case 4: {
      Var v("t" + std::to_string(g.scope.size()));
      Expr value = g.gen(Int(32), 2);
      g.scope.push_back(v);
      Stmt body = gen_stmt(g, out, depth - 1);
      g.scope.pop_back();
      return let_stmt(v, value, body);
    }
    case 5: return seq({gen_stmt(g, out, depth - 1), gen_stmt(g, out, depth - 1)});
    case 6: return assert_stmt(g.gen_bool(1), "assert " + std::to_string(g.pick(1000)), gen_stmt(g, out, depth - 1));
    default: {
      Expr p = g.chance(15) ? g.gen_bool(1) : Expr();
      return store(out, g.gen(Int(32), 2), {g.gen(Int(32), 2)}, p);
    }
  }
}

}  // namespace

TEST(SimplifyProperty, RandomStatementsStoreTheSameValuesInTheSameOrder) {
  const uint64_t seed = base_seed() + 2;
  Gen g(seed);
  Buffer out("OUT", Int(32), {1 << 20});
  int rewritten = 0;
  const int kCases = 1500 * scale();
  for (int c = 0; c < kCases && !HasFailure(); ++c) {
    Case cs = g.new_case();
    Stmt s = gen_stmt(g, out, 4);
    Stmt r = simplify(s, cs.bounds);
    rewritten += !r.same_as(s);
    SCOPED_TRACE("seed " + std::to_string(seed) + " case " + std::to_string(c) + "\nstmt:\n" + to_string(s) +
                 "simplified:\n" + to_string(r));
    for (int k = 0; k < 4; ++k) {
      Env env;
      for (const Var& v : cs.vars) env[v.get()] = g.sample(v, cs.bounds);
      std::string fail_a, fail_b;
      std::vector<StoreEvent> a = run_all(s, env, &fail_a), b = run_all(r, env, &fail_b);
      ASSERT_EQ(a.size(), b.size());
      ASSERT_TRUE(a == b) << "the stores differ";
      ASSERT_EQ(fail_a, fail_b);
    }
    ASSERT_EQ(to_string(simplify(r, cs.bounds)), to_string(r)) << "not idempotent";
  }
  EXPECT_GT(rewritten, kCases / 4);
}
