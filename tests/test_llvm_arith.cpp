// The LLVM backend's numeric semantics against exact C++ references and interpret():
// integer division and modulo of every int8 pair (and sampled wider types), wrapping,
// comparisons, float min/max, casts (saturating float -> int, float16 rounding) and the
// intrinsics, in scalar and vector code.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "te/te.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;

namespace {

// out[i] = fn(A[i], B[i]) over n elements, `lanes` at a time (n a multiple of lanes).
LoweredFunc elementwise2(DataType in, DataType out, const std::function<Expr(Expr, Expr)>& fn, int lanes) {
  Var n("n"), i("i");
  Buffer A("A", in, {n}), B("B", in, {n}), C("C", out, {n});
  Stmt body;
  if (lanes == 1) {
    body = serial(i, 0, n, store(C, fn(load(A, {i}), load(B, {i})), {i}));
  } else {
    Expr idx = ramp(i * lanes, 1, lanes);
    body = serial(i, 0, n / lanes, store(C, fn(load(A, {idx}), load(B, {idx})), {idx}));
  }
  return make_func("ew", {buffer_param(A), buffer_param(B), buffer_param(C)}, body);
}

// ---- Integer references, independent of src/expr/int_arith.h ----
template <typename T>
T ref_floordiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return static_cast<T>(0 - static_cast<uint64_t>(a));
    T q = static_cast<T>(a / b);
    if (a % b != 0 && ((a < 0) != (b < 0))) q = static_cast<T>(q - 1);
    return q;
  }
  return static_cast<T>(a / b);
}
template <typename T>
T ref_floormod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  }
  return static_cast<T>(a % b);
}
template <typename T>
T ref_truncdiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return static_cast<T>(0 - static_cast<uint64_t>(a));
  return static_cast<T>(a / b);
}
template <typename T>
T ref_truncmod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return 0;
  return static_cast<T>(a % b);
}

struct IntOp {
  BinOp op;
  const char* name;
};
const IntOp kDivisions[] = {
    {BinOp::Div, "floordiv"}, {BinOp::Mod, "floormod"}, {BinOp::TruncDiv, "truncdiv"}, {BinOp::TruncMod, "truncmod"}};

template <typename T>
T reference(BinOp op, T a, T b) {
  switch (op) {
    case BinOp::Div: return ref_floordiv(a, b);
    case BinOp::Mod: return ref_floormod(a, b);
    case BinOp::TruncDiv: return ref_truncdiv(a, b);
    case BinOp::TruncMod: return ref_truncmod(a, b);
    case BinOp::Add: return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    case BinOp::Sub: return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
    case BinOp::Mul: return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    case BinOp::Min: return std::min(a, b);
    case BinOp::Max: return std::max(a, b);
    default: break;
  }
  ADD_FAILURE() << "no reference";
  return 0;
}

// Runs every op on the pairs (a[k], b[k]) in scalar and vector code and checks each
// result against the reference.
template <typename T>
void check_int_ops(const std::vector<T>& a, const std::vector<T>& b, std::initializer_list<BinOp> ops) {
  int64_t n = static_cast<int64_t>(a.size());
  NDArray A = NDArray::from_vector(a, {n}), B = NDArray::from_vector(b, {n});
  for (int lanes : {1, 16}) {
    for (BinOp op : ops) {
      SCOPED_TRACE(std::string(binop_name(op)) + " " + dtype_of<T>().to_string() + " lanes " + std::to_string(lanes));
      LoweredFunc f = elementwise2(
          dtype_of<T>(), dtype_of<T>(), [op](Expr x, Expr y) { return make_binary(op, x, y); }, lanes);
      NDArray C = NDArray::empty({n}, dtype_of<T>());
      build(f)("ew")(A, B, C);
      std::vector<T> c = C.to_vector<T>();
      for (int64_t k = 0; k < n; ++k)
        ASSERT_EQ(c[k], reference(op, a[k], b[k])) << +a[k] << " " << binop_name(op) << " " << +b[k];
    }
  }
}

TEST(LlvmArith, EveryInt8PairDividesLikeTheReference) {
  std::vector<int8_t> a, b;
  for (int x = -128; x < 128; ++x)
    for (int y = -128; y < 128; ++y) {
      a.push_back(static_cast<int8_t>(x));
      b.push_back(static_cast<int8_t>(y));
    }
  check_int_ops(a, b,
                {BinOp::Div, BinOp::Mod, BinOp::TruncDiv, BinOp::TruncMod, BinOp::Add, BinOp::Sub, BinOp::Mul,
                 BinOp::Min, BinOp::Max});
}

TEST(LlvmArith, EveryUInt8PairDividesLikeTheReference) {
  std::vector<uint8_t> a, b;
  for (int x = 0; x < 256; ++x)
    for (int y = 0; y < 256; ++y) {
      a.push_back(static_cast<uint8_t>(x));
      b.push_back(static_cast<uint8_t>(y));
    }
  check_int_ops(a, b, {BinOp::Div, BinOp::Mod, BinOp::TruncDiv, BinOp::TruncMod, BinOp::Min, BinOp::Max});
}

// Edge values and random samples of a wider type, all pairs.
template <typename T>
void check_sampled() {
  using L = std::numeric_limits<T>;
  std::vector<T> values = {0, 1, 2, 3, 7, L::max(), L::min(), static_cast<T>(L::max() - 1)};
  if constexpr (std::is_signed_v<T>)
    for (T x : {T(-1), T(-2), T(-3), T(-7), static_cast<T>(L::min() + 1)}) values.push_back(x);
  std::mt19937_64 rng(42);
  for (int k = 0; k < 24; ++k) values.push_back(static_cast<T>(rng()));
  std::vector<T> a, b;
  for (T x : values)
    for (T y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  while (a.size() % 16) {
    a.push_back(1);
    b.push_back(1);
  }
  check_int_ops(a, b,
                {BinOp::Div, BinOp::Mod, BinOp::TruncDiv, BinOp::TruncMod, BinOp::Add, BinOp::Sub, BinOp::Mul,
                 BinOp::Min, BinOp::Max});
}

TEST(LlvmArith, SampledWiderIntegersDivideLikeTheReference) {
  check_sampled<int16_t>();
  check_sampled<int32_t>();
  check_sampled<int64_t>();
  check_sampled<uint16_t>();
  check_sampled<uint32_t>();
  check_sampled<uint64_t>();
}

TEST(LlvmArith, ConstantDivisorsMatchTheInterpreter) {
  // Division by constants takes LLVM's strength-reduced paths.
  for (int divisor : {-7, -1, 1, 2, 3, 8, 64}) {
    SCOPED_TRACE(divisor);
    for (int lanes : {1, 8}) {
      LoweredFunc f = elementwise2(
          Int(32), Int(32),
          [divisor](Expr x, Expr) {
            return x / divisor + x % divisor * 1000 + truncdiv(x, divisor) * 7 + truncmod(x, divisor);
          },
          lanes);
      std::vector<int32_t> a;
      for (int x = -300; x < 300; ++x) a.push_back(x);
      a.push_back(std::numeric_limits<int32_t>::min());
      a.push_back(std::numeric_limits<int32_t>::max());
      while (a.size() % 8) a.push_back(0);
      int64_t n = static_cast<int64_t>(a.size());
      expect_matches_interpreter(
          f, {NDArray::from_vector(a, {n}), NDArray::from_vector(a, {n}), NDArray::empty({n}, Int(32))});
    }
  }
}

std::vector<float> interesting_floats() {
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  return {0.0f,          -0.0f,    0.5f,    -0.5f, 1.5f,       2.5f,   -2.5f,         3.7f,
          -3.7f,         1e10f,    -1e10f,  3e9f,  -3e9f,      255.5f, 256.0f,        -129.0f,
          65504.0f,      65520.0f, 1e-8f,   inf,   -inf,       nan,    2147483520.0f, -2147483648.0f,
          4294967040.0f, 1e-3f,    100.25f, -7.0f, 12345.678f, 0.1f,   2.0f,          -1.0f};
}

TEST(LlvmArith, FloatToIntCastsSaturateLikeTheInterpreter) {
  std::vector<float> v = interesting_floats();
  int64_t n = static_cast<int64_t>(v.size());
  for (DataType to : {Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32), UInt(64), Bool()}) {
    for (int lanes : {1, 8}) {
      SCOPED_TRACE(to.to_string() + " lanes " + std::to_string(lanes));
      LoweredFunc f = elementwise2(
          Float(32), to, [to](Expr x, Expr) { return cast(to.with_lanes(x.dtype().lanes()), x); }, lanes);
      expect_matches_interpreter(f,
                                 {NDArray::from_vector(v, {n}), NDArray::from_vector(v, {n}), NDArray::empty({n}, to)});
    }
  }
  // And one exact spot check against C++: NaN -> 0, saturation at both ends.
  LoweredFunc f = elementwise2(
      Float(32), Int(8), [](Expr x, Expr) { return cast(Int(8), x); }, 1);
  std::vector<float> w = {std::nanf(""), 1e9f, -1e9f, -3.9f, 127.9f};
  NDArray out = NDArray::empty({5}, Int(8));
  build(f)("ew")(NDArray::from_vector(w, {5}), NDArray::from_vector(w, {5}), out);
  EXPECT_EQ(out.to_vector<int8_t>(), (std::vector<int8_t>{0, 127, -128, -3, 127}));
}

TEST(LlvmArith, FloatCastsRoundLikeTheInterpreter) {
  // double -> float16 must round once (not through float), float -> float16 to even.
  std::vector<double> d = {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                           0.1,
                           65519.99,
                           65520.0,
                           1e-8,
                           -2.5e-8,
                           3.14159265358979,
                           std::ldexp(1.0, -25) * 1.0000001,
                           std::numeric_limits<double>::infinity(),
                           std::nan(""),
                           1e300,
                           -0.0,
                           1.0 + std::ldexp(1.0, -11),
                           1.0 + 3 * std::ldexp(1.0, -11),
                           1e-300,
                           70000.0};
  int64_t n = static_cast<int64_t>(d.size());
  for (DataType to : {Float(16), Float(32), Int(32), UInt(16)}) {
    for (int lanes : {1, 8}) {
      if (lanes > 1 && n % lanes) continue;
      SCOPED_TRACE(to.to_string() + " lanes " + std::to_string(lanes));
      LoweredFunc f = elementwise2(
          Float(64), to, [to](Expr x, Expr) { return cast(to.with_lanes(x.dtype().lanes()), x); }, lanes);
      expect_matches_interpreter(f,
                                 {NDArray::from_vector(d, {n}), NDArray::from_vector(d, {n}), NDArray::empty({n}, to)});
    }
  }
  // Integers to floats, and floats back.
  std::vector<int64_t> ints = {0,
                               1,
                               -1,
                               2049,
                               65519,
                               65520,
                               1 << 24,
                               (1 << 24) + 1,
                               std::numeric_limits<int64_t>::max(),
                               std::numeric_limits<int64_t>::min(),
                               123456789012345LL,
                               -98765,
                               3,
                               7,
                               100000,
                               -70000};
  int64_t m = static_cast<int64_t>(ints.size());
  for (DataType to : {Float(16), Float(32), Float(64), Int(8), UInt(32), Bool()}) {
    LoweredFunc f = elementwise2(
        Int(64), to, [to](Expr x, Expr) { return cast(to.with_lanes(x.dtype().lanes()), x); }, 8);
    SCOPED_TRACE(to.to_string());
    expect_matches_interpreter(
        f, {NDArray::from_vector(ints, {m}), NDArray::from_vector(ints, {m}), NDArray::empty({m}, to)});
  }
}

TEST(LlvmArith, FloatArithmeticAndComparisonsMatchTheInterpreter) {
  std::vector<float> v = interesting_floats();
  std::vector<float> a, b;
  for (float x : v)
    for (float y : v) {
      a.push_back(x);
      b.push_back(y);
    }
  int64_t n = static_cast<int64_t>(a.size());
  for (DataType t : {Float(16), Float(32), Float(64)}) {
    NDArray A = NDArray::empty({n}, t), B = NDArray::empty({n}, t);
    {
      // The same values, converted by a te cast.
      LoweredFunc conv = elementwise2(
          Float(32), t, [t](Expr x, Expr) { return cast(t.with_lanes(x.dtype().lanes()), x); }, 1);
      Module m = build(conv);
      m("ew")(NDArray::from_vector(a, {n}), NDArray::from_vector(a, {n}), A);
      m("ew")(NDArray::from_vector(b, {n}), NDArray::from_vector(b, {n}), B);
    }
    for (BinOp op : {BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Mod, BinOp::TruncDiv, BinOp::TruncMod,
                     BinOp::Min, BinOp::Max}) {
      for (int lanes : {1, 8}) {
        SCOPED_TRACE(std::string(binop_name(op)) + " " + t.to_string() + " lanes " + std::to_string(lanes));
        // Float %, truncdiv and truncmod have no DSL operator; the IR nodes still have a meaning.
        LoweredFunc f = elementwise2(
            t, t,
            [op](Expr x, Expr y) {
              if (op == BinOp::Mod || op == BinOp::TruncMod || op == BinOp::TruncDiv)
                return Expr(std::make_shared<BinaryNode>(x.dtype(), op, x, y));
              return make_binary(op, x, y);
            },
            lanes);
        expect_matches_interpreter(f, {A, B, NDArray::empty({n}, t)});
      }
    }
    for (BinOp op : {BinOp::EQ, BinOp::NE, BinOp::LT, BinOp::LE, BinOp::GT, BinOp::GE}) {
      SCOPED_TRACE(std::string(binop_name(op)) + " " + t.to_string());
      LoweredFunc f = elementwise2(
          t, Bool(), [op](Expr x, Expr y) { return make_binary(op, x, y); }, 8);
      expect_matches_interpreter(f, {A, B, NDArray::empty({n}, Bool())});
    }
  }
}

TEST(LlvmArith, IntrinsicsMatchTheInterpreter) {
  std::vector<float> v = interesting_floats();
  for (float x : {0.25f, 0.75f, 1.25f, -1.75f, 4.5f, -4.5f, 5.5f, -0.49999997f, 8388609.0f, 0.5f}) v.push_back(x);
  int64_t n = static_cast<int64_t>(v.size());
  using Fn = std::function<Expr(Expr, Expr)>;
  std::vector<std::pair<const char*, Fn>> fns = {
      {"floor", [](Expr x, Expr) { return floor(x); }},  {"ceil", [](Expr x, Expr) { return ceil(x); }},
      {"round", [](Expr x, Expr) { return round(x); }},  {"nearbyint", [](Expr x, Expr) { return nearbyint(x); }},
      {"trunc", [](Expr x, Expr) { return trunc(x); }},  {"abs", [](Expr x, Expr) { return abs(x); }},
      {"exp", [](Expr x, Expr) { return exp(x); }},      {"log", [](Expr x, Expr) { return log(x); }},
      {"sqrt", [](Expr x, Expr) { return sqrt(x); }},    {"tanh", [](Expr x, Expr) { return tanh(x); }},
      {"pow", [](Expr x, Expr y) { return pow(x, y); }}, {"fma", [](Expr x, Expr y) { return fma(x, y, x); }},
  };
  std::vector<float> w(v.rbegin(), v.rend());
  for (DataType t : {Float(16), Float(32), Float(64)}) {
    NDArray A = NDArray::empty({n}, t), B = NDArray::empty({n}, t);
    LoweredFunc conv = elementwise2(
        Float(32), t, [t](Expr x, Expr) { return cast(t.with_lanes(x.dtype().lanes()), x); }, 1);
    Module m = build(conv);
    m("ew")(NDArray::from_vector(v, {n}), NDArray::from_vector(v, {n}), A);
    m("ew")(NDArray::from_vector(w, {n}), NDArray::from_vector(w, {n}), B);
    for (auto& [name, fn] : fns) {
      for (int lanes : {1, 4}) {
        SCOPED_TRACE(std::string(name) + " " + t.to_string() + " lanes " + std::to_string(lanes));
        expect_matches_interpreter(elementwise2(t, t, fn, lanes), {A, B, NDArray::empty({n}, t)});
      }
    }
  }
  // Integer abs wraps; rounding functions are the identity on integers.
  std::vector<int32_t> ints = {
      0, 1, -1, 5, -5, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), -77};
  NDArray I = NDArray::from_vector(ints, {8});
  NDArray out = NDArray::empty({8}, Int(32));
  build(elementwise2(
      Int(32), Int(32), [](Expr x, Expr y) { return abs(x) + floor(y) - round(y); }, 8))("ew")(I, I, out);
  EXPECT_EQ(out.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 1, 5, 5, std::numeric_limits<int32_t>::min(),
                                                            std::numeric_limits<int32_t>::max(), 77}));
}

TEST(LlvmArith, FloatFunctionsOfIntegersAreRejected) {
  LoweredFunc f = elementwise2(
      Int(32), Int(32),
      [](Expr x, Expr) {
        return make_zero(Int(32)) + Expr(std::make_shared<CallNode>(x.dtype(), Intrinsic::Exp, std::vector<Expr>{x}));
      },
      1);
  expect_error([&] { build(f); }, {"build: ew", "exp needs a float argument, got int32"});
}

TEST(LlvmArith, FmaContractionIsUsedWhenAllowed) {
  LoweredFunc f = elementwise2(
      Float(32), Float(32), [](Expr x, Expr y) { return x * y + x; }, 8);
  BuildOptions on;
  EXPECT_TRUE(contains(assembly(f, on), "vfmadd")) << assembly(f, on);
  EXPECT_FALSE(contains(assembly(f, exact_options()), "vfmadd"));
  // Contracted results stay within rounding of the separately rounded ones.
  NDArray a = random_array<float>({64}, 5), b = random_array<float>({64}, 6);
  expect_matches_interpreter(f, {a, b, NDArray::empty({64}, Float(32))}, 1e-5, on);
}

}  // namespace

TEST(LlvmArith, Float16CompareMasksCombineLikeTheInterpreter) {
  // A float16 comparison and an int8 one, combined in 16-lane masks: with AVX512-FP16
  // (Sapphire Rapids) LLVM 14 and 19 mixed up their lanes, so te's target machines
  // leave that extension off (make_target_machine).
  const int64_t n = 31;
  Tensor F = placeholder({n}, Bool(), "F"), U = placeholder({n}, UInt(64), "U");
  Tensor C = compute(
      {n},
      [&](Expr i) {
        Expr small = cast(Float(16), U(i)) < pow(make_const(Float(16), 69.9375), cast(Float(16), i));
        Expr ok = select(make_const(Int(8), 0) <= cast(Int(8), U(i)), small, F(i));
        return if_then_else(ok, make_const(Int(32), 0), cast(Int(32), U(i)) / 7);
      },
      "C");
  Schedule s = create_schedule({C});
  s[C].vectorize(C.axis(0));
  std::vector<uint64_t> u(n);
  std::vector<bool> f(n);
  for (int64_t i = 0; i < n; ++i) {
    u[static_cast<size_t>(i)] = i % 3 == 0 ? 91 + i : 0x9d7f3a2b1c0d5e5bull * static_cast<uint64_t>(i + 1);
    f[static_cast<size_t>(i)] = i % 2 == 1;
  }
  expect_matches_interpreter(lower(s, {F, U, C}, "masks"), {NDArray::from_vector(f, {n}), NDArray::from_vector(u, {n}),
                                                            NDArray::empty({n}, Int(32))});
}
