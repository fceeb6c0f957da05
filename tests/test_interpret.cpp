// te::interpret on hand-built loop IR: programs, every dtype's arithmetic and casts
// against plain C++, guarded and vectorized loads, GPU thread semantics, and every error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "te/te.h"

using namespace te;

namespace {

#define EXPECT_HAS(message, part)                               \
  EXPECT_NE(std::string(message).find(part), std::string::npos) \
      << "expected \"" << (part) << "\" in the message: " << (message)

Param buffer_param(const Buffer& b) {
  Param p;
  p.buffer = b;
  return p;
}
Param scalar_param(const Var& v) {
  Param p;
  p.var = v;
  return p;
}
LoweredFunc make_func(std::string name, std::vector<Param> params, Stmt body) {
  return LoweredFunc{std::move(name), std::move(params), std::move(body)};
}
Stmt serial(const Var& v, Expr min, Expr extent, Stmt body) {
  return for_loop(v, std::move(min), std::move(extent), ForKind::Serial, std::move(body));
}
Stmt thread_loop(const Var& v, Expr extent, const std::string& tag, Stmt body) {
  return for_loop(v, 0, std::move(extent), ForKind::ThreadBinding, std::move(body), tag);
}

// The te::Error message of f, or a test failure if it does not throw one.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InternalError& e) {
    ADD_FAILURE() << "internal error instead of a user error: " << e.what();
    return e.what();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a te::Error";
  return "";
}

// A 1-D array 0.5 * k - 3 (or k for integers), k = 0..n-1.
NDArray ramp_array(int64_t n, float scale = 0.5f, float offset = -3.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = scale * static_cast<float>(k) + offset;
  return NDArray::from_vector(v, {n});
}

// ---- Elementwise runners over every dtype ----

// out[i] = fn(A[i], B[i]) for all i, in `lanes`-wide vector steps when lanes > 1.
template <typename Out, typename In>
std::vector<Out> elementwise2(std::vector<In> a, std::vector<In> b, const std::function<Expr(Expr, Expr)>& fn,
                              int lanes = 1) {
  size_t n = a.size();
  while (a.size() % static_cast<size_t>(lanes) != 0) {
    a.push_back(a[0]);
    b.push_back(b[0]);
  }
  int64_t size = static_cast<int64_t>(a.size());
  Var len("n");
  Buffer A("A", dtype_of<In>(), {len}), B("B", dtype_of<In>(), {len});
  Buffer C("C", dtype_of<Out>(), {len});
  Var i("i");
  Stmt body;
  if (lanes == 1) {
    body = serial(i, 0, len, store(C, fn(load(A, {i}), load(B, {i})), {i}));
  } else {
    Expr idx = ramp(i * lanes, 1, lanes);
    body = serial(i, 0, len / lanes, store(C, fn(load(A, {idx}), load(B, {idx})), {idx}));
  }
  LoweredFunc f = make_func("ew2", {buffer_param(A), buffer_param(B), buffer_param(C)}, body);
  NDArray c = NDArray::empty({size}, dtype_of<Out>());
  interpret(f, {NDArray::from_vector(a, {size}), NDArray::from_vector(b, {size}), c});
  std::vector<Out> out = c.to_vector<Out>();
  out.resize(n);
  return out;
}

template <typename Out, typename In>
std::vector<Out> elementwise1(std::vector<In> a, const std::function<Expr(Expr)>& fn, int lanes = 1) {
  return elementwise2<Out, In>(
      a, a, [&](Expr x, Expr) { return fn(x); }, lanes);
}

template <typename T>
std::vector<std::pair<T, T>> all_pairs(const std::vector<T>& values) {
  std::vector<std::pair<T, T>> pairs;
  for (T x : values)
    for (T y : values) pairs.emplace_back(x, y);
  return pairs;
}

// ---- Integer references, written independently of src/expr/int_arith.h ----

template <typename T>
T wrap_u64(uint64_t v) {
  return static_cast<T>(v);  // modular narrowing
}
template <typename T>
T ref_floordiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_u64<T>(0 - static_cast<uint64_t>(a));
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
    if (b == -1) return wrap_u64<T>(0 - static_cast<uint64_t>(a));
  return static_cast<T>(a / b);
}
template <typename T>
T ref_truncmod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return 0;
  return static_cast<T>(a % b);
}

template <typename T>
std::vector<T> interesting_ints() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {
      0, 1, 2, 3, 7, 100, L::max(), L::min(), static_cast<T>(L::max() - 1), static_cast<T>(L::max() / 3)};
  if constexpr (std::is_signed_v<T>)
    for (T x : {-1, -2, -3, -7, -100}) v.push_back(x);
  return v;
}

template <typename T>
void check_int_arithmetic() {
  SCOPED_TRACE(dtype_of<T>().to_string());
  auto pairs = all_pairs(interesting_ints<T>());
  std::vector<T> a, b;
  for (auto& [x, y] : pairs) {
    a.push_back(x);
    b.push_back(y);
  }
  using Ref = std::function<T(T, T)>;
  std::vector<std::tuple<BinOp, Ref>> ops = {
      {BinOp::Add, [](T x, T y) { return wrap_u64<T>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); }},
      {BinOp::Sub, [](T x, T y) { return wrap_u64<T>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)); }},
      {BinOp::Mul, [](T x, T y) { return wrap_u64<T>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)); }},
      {BinOp::Div, ref_floordiv<T>},
      {BinOp::Mod, ref_floormod<T>},
      {BinOp::TruncDiv, ref_truncdiv<T>},
      {BinOp::TruncMod, ref_truncmod<T>},
      {BinOp::Min, [](T x, T y) { return std::min(x, y); }},
      {BinOp::Max, [](T x, T y) { return std::max(x, y); }},
  };
  for (int lanes : {1, 4}) {
    for (auto& [op, ref] : ops) {
      SCOPED_TRACE(std::string(binop_name(op)) + " lanes " + std::to_string(lanes));
      auto got = elementwise2<T, T>(
          a, b, [op = op](Expr x, Expr y) { return make_binary(op, x, y); }, lanes);
      for (size_t k = 0; k < a.size(); ++k) ASSERT_EQ(got[k], ref(a[k], b[k])) << "operands " << +a[k] << ", " << +b[k];
    }
    using Cmp = std::function<bool(T, T)>;
    std::vector<std::tuple<BinOp, Cmp>> cmps = {
        {BinOp::EQ, [](T x, T y) { return x == y; }}, {BinOp::NE, [](T x, T y) { return x != y; }},
        {BinOp::LT, [](T x, T y) { return x < y; }},  {BinOp::LE, [](T x, T y) { return x <= y; }},
        {BinOp::GT, [](T x, T y) { return x > y; }},  {BinOp::GE, [](T x, T y) { return x >= y; }},
    };
    for (auto& [op, ref] : cmps) {
      SCOPED_TRACE(binop_name(op));
      auto got = elementwise2<bool, T>(
          a, b, [op = op](Expr x, Expr y) { return make_binary(op, x, y); }, lanes);
      for (size_t k = 0; k < a.size(); ++k) ASSERT_EQ(got[k], ref(a[k], b[k])) << "operands " << +a[k] << ", " << +b[k];
    }
  }
  // abs wraps: abs(INT_MIN) == INT_MIN; the rounding intrinsics are the identity.
  if constexpr (std::is_signed_v<T>) {
    auto got = elementwise1<T, T>(a, [](Expr x) { return abs(x); });
    for (size_t k = 0; k < a.size(); ++k)
      ASSERT_EQ(got[k], a[k] < 0 ? wrap_u64<T>(0 - static_cast<uint64_t>(a[k])) : a[k]);
  }
}

TEST(InterpretDtypes, IntegerArithmeticMatchesCpp) {
  check_int_arithmetic<int8_t>();
  check_int_arithmetic<int16_t>();
  check_int_arithmetic<int32_t>();
  check_int_arithmetic<int64_t>();
  check_int_arithmetic<uint8_t>();
  check_int_arithmetic<uint16_t>();
  check_int_arithmetic<uint32_t>();
  check_int_arithmetic<uint64_t>();
}

TEST(InterpretDtypes, DivisionByZeroAndIntMinOverMinusOne) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> a = {7, -7, 7, kMin, kMin, -7, 7, 0};
  std::vector<int32_t> b = {0, 0, 2, -1, -1, 2, -2, 0};
  auto div = elementwise2<int32_t, int32_t>(a, b, [](Expr x, Expr y) { return x / y; });
  auto mod = elementwise2<int32_t, int32_t>(a, b, [](Expr x, Expr y) { return x % y; });
  auto tdiv = elementwise2<int32_t, int32_t>(a, b, [](Expr x, Expr y) { return truncdiv(x, y); });
  auto tmod = elementwise2<int32_t, int32_t>(a, b, [](Expr x, Expr y) { return truncmod(x, y); });
  EXPECT_EQ(div, (std::vector<int32_t>{0, 0, 3, kMin, kMin, -4, -4, 0}));
  EXPECT_EQ(mod, (std::vector<int32_t>{0, 0, 1, 0, 0, 1, -1, 0}));
  EXPECT_EQ(tdiv, (std::vector<int32_t>{0, 0, 3, kMin, kMin, -3, -3, 0}));
  EXPECT_EQ(tmod, (std::vector<int32_t>{0, 0, 1, 0, 0, -1, 1, 0}));
  auto udiv = elementwise2<uint32_t, uint32_t>({7u, 0xFFFFFFFFu}, {0u, 2u}, [](Expr x, Expr y) { return x / y; });
  EXPECT_EQ(udiv, (std::vector<uint32_t>{0u, 0x7FFFFFFFu}));
}

// ---- Float references: float16 computes in float and rounds to half ----

template <typename T>
struct FloatRef {
  using Compute = T;
  static T from(Compute v) { return v; }
  static Compute to(T v) { return v; }
};
template <>
struct FloatRef<half> {
  using Compute = float;
  static half from(float v) { return half(v); }
  static float to(half v) { return static_cast<float>(v); }
};

template <typename T>
double as_double(T v) {
  return static_cast<double>(FloatRef<T>::to(v));
}

// Same value, same sign of zero, or both NaN.
template <typename T>
bool same_float(T x, T y) {
  double a = as_double(x), b = as_double(y);
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

template <typename T>
std::vector<T> interesting_floats() {
  using R = FloatRef<T>;
  using C = typename R::Compute;
  std::vector<C> v = {0,
                      C(-0.0),
                      1,
                      -1,
                      C(0.1),
                      C(-2.25),
                      C(1.5),
                      C(2.5),
                      C(-2.5),
                      C(3.5),
                      C(7.9),
                      C(-7.9),
                      C(1e-3),
                      C(300.0),
                      C(6e4),
                      C(-6e4),
                      std::numeric_limits<C>::infinity(),
                      -std::numeric_limits<C>::infinity(),
                      std::numeric_limits<C>::quiet_NaN()};
  if (!std::is_same_v<T, half>) v.push_back(C(1e30));
  std::vector<T> out;
  for (C c : v) out.push_back(R::from(c));
  return out;
}

template <typename T>
void check_float_arithmetic() {
  SCOPED_TRACE(dtype_of<T>().to_string());
  using R = FloatRef<T>;
  using C = typename R::Compute;
  auto pairs = all_pairs(interesting_floats<T>());
  std::vector<T> a, b;
  for (auto& [x, y] : pairs) {
    a.push_back(x);
    b.push_back(y);
  }
  using Ref = std::function<C(C, C)>;
  std::vector<std::tuple<BinOp, Ref>> ops = {
      {BinOp::Add, [](C x, C y) { return x + y; }},         {BinOp::Sub, [](C x, C y) { return x - y; }},
      {BinOp::Mul, [](C x, C y) { return x * y; }},         {BinOp::Div, [](C x, C y) { return x / y; }},
      {BinOp::Min, [](C x, C y) { return x < y ? x : y; }}, {BinOp::Max, [](C x, C y) { return x > y ? x : y; }},
  };
  for (int lanes : {1, 8}) {
    for (auto& [op, ref] : ops) {
      SCOPED_TRACE(std::string(binop_name(op)) + " lanes " + std::to_string(lanes));
      auto got = elementwise2<T, T>(
          a, b, [op = op](Expr x, Expr y) { return make_binary(op, x, y); }, lanes);
      for (size_t k = 0; k < a.size(); ++k) {
        T want = R::from(ref(R::to(a[k]), R::to(b[k])));
        ASSERT_TRUE(same_float(got[k], want)) << as_double(a[k]) << " " << binop_name(op) << " " << as_double(b[k])
                                              << " gave " << as_double(got[k]) << ", expected " << as_double(want);
      }
    }
    using Cmp = std::function<bool(C, C)>;
    std::vector<std::tuple<BinOp, Cmp>> cmps = {
        {BinOp::EQ, [](C x, C y) { return x == y; }}, {BinOp::NE, [](C x, C y) { return x != y; }},
        {BinOp::LT, [](C x, C y) { return x < y; }},  {BinOp::LE, [](C x, C y) { return x <= y; }},
        {BinOp::GT, [](C x, C y) { return x > y; }},  {BinOp::GE, [](C x, C y) { return x >= y; }},
    };
    for (auto& [op, ref] : cmps) {
      auto got = elementwise2<bool, T>(
          a, b, [op = op](Expr x, Expr y) { return make_binary(op, x, y); }, lanes);
      for (size_t k = 0; k < a.size(); ++k)
        ASSERT_EQ(got[k], ref(R::to(a[k]), R::to(b[k])))
            << as_double(a[k]) << " " << binop_name(op) << " " << as_double(b[k]);
    }
  }
}

TEST(InterpretDtypes, FloatArithmeticMatchesCppInTheTypesPrecision) {
  check_float_arithmetic<half>();
  check_float_arithmetic<float>();
  check_float_arithmetic<double>();
}

TEST(InterpretDtypes, Float32RoundsAfterEveryOperation) {
  // (a + b) - a: 1e8f + 1 rounds back to 1e8f in float (it would be 1 in double).
  auto f32 = elementwise2<float, float>({1e8f}, {1.0f}, [](Expr x, Expr y) { return (x + y) - x; });
  EXPECT_EQ(f32[0], 0.0f);
  // float16: 2048 + 1 rounds to 2048 (half's spacing there is 2).
  auto f16 = elementwise2<half, half>({half(2048.0f)}, {half(1.0f)}, [](Expr x, Expr y) { return (x + y) - x; });
  EXPECT_EQ(static_cast<float>(f16[0]), 0.0f);
  auto f64 = elementwise2<double, double>({1e8}, {1.0}, [](Expr x, Expr y) { return (x + y) - x; });
  EXPECT_EQ(f64[0], 1.0);
}

template <typename T>
void check_float_intrinsics() {
  SCOPED_TRACE(dtype_of<T>().to_string());
  using R = FloatRef<T>;
  using C = typename R::Compute;
  std::vector<T> a = interesting_floats<T>();
  using Ref = std::function<C(C)>;
  std::vector<std::tuple<const char*, std::function<Expr(Expr)>, Ref>> ops = {
      {"floor", [](Expr x) { return floor(x); }, [](C x) { return std::floor(x); }},
      {"ceil", [](Expr x) { return ceil(x); }, [](C x) { return std::ceil(x); }},
      {"round", [](Expr x) { return round(x); }, [](C x) { return std::round(x); }},
      {"nearbyint", [](Expr x) { return nearbyint(x); }, [](C x) { return std::nearbyint(x); }},
      {"trunc", [](Expr x) { return trunc(x); }, [](C x) { return std::trunc(x); }},
      {"abs", [](Expr x) { return abs(x); }, [](C x) { return std::fabs(x); }},
      {"exp", [](Expr x) { return exp(x); }, [](C x) { return std::exp(x); }},
      {"log", [](Expr x) { return log(x); }, [](C x) { return std::log(x); }},
      {"sqrt", [](Expr x) { return sqrt(x); }, [](C x) { return std::sqrt(x); }},
      {"tanh", [](Expr x) { return tanh(x); }, [](C x) { return std::tanh(x); }},
      {"neg", [](Expr x) { return -x; }, [](C x) { return -x; }},
  };
  for (int lanes : {1, 4}) {
    for (auto& [name, fn, ref] : ops) {
      SCOPED_TRACE(std::string(name) + " lanes " + std::to_string(lanes));
      auto got = elementwise1<T, T>(a, fn, lanes);
      for (size_t k = 0; k < a.size(); ++k) {
        T want = R::from(ref(R::to(a[k])));
        ASSERT_TRUE(same_float(got[k], want))
            << name << "(" << as_double(a[k]) << ") gave " << as_double(got[k]) << ", expected " << as_double(want);
      }
    }
    auto pairs = all_pairs(a);
    std::vector<T> x, y;
    for (auto& [p, q] : pairs) {
      x.push_back(p);
      y.push_back(q);
    }
    auto got = elementwise2<T, T>(
        x, y, [](Expr p, Expr q) { return pow(p, q); }, lanes);
    for (size_t k = 0; k < x.size(); ++k)
      ASSERT_TRUE(same_float(got[k], R::from(std::pow(R::to(x[k]), R::to(y[k])))))
          << "pow(" << as_double(x[k]) << ", " << as_double(y[k]) << ")";
    got = elementwise2<T, T>(
        x, y, [](Expr p, Expr q) { return fma(p, q, p); }, lanes);
    for (size_t k = 0; k < x.size(); ++k)
      ASSERT_TRUE(same_float(got[k], R::from(std::fma(R::to(x[k]), R::to(y[k]), R::to(x[k])))))
          << "fma(" << as_double(x[k]) << ", " << as_double(y[k]) << ", " << as_double(x[k]) << ")";
  }
}

TEST(InterpretDtypes, FloatIntrinsicsMatchCpp) {
  check_float_intrinsics<half>();
  check_float_intrinsics<float>();
  check_float_intrinsics<double>();
}

TEST(InterpretDtypes, RoundingModesAndFusedMultiplyAdd) {
  std::vector<float> v = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 3.5f, -3.5f, 2.4f};
  auto rounded = elementwise1<float, float>(v, [](Expr x) { return round(x); });
  auto even = elementwise1<float, float>(v, [](Expr x) { return nearbyint(x); });
  EXPECT_EQ(rounded, (std::vector<float>{1, 2, 3, -1, -3, 4, -4, 2}));
  EXPECT_EQ(even, (std::vector<float>{0, 2, 2, -0.0f, -2, 4, -4, 2}));
  // a * a - (1 + 2^-11) is 2^-24 when fused, 0 when the product rounds to float first.
  float a = 1.0f + std::ldexp(1.0f, -12);
  float c = -(1.0f + std::ldexp(1.0f, -11));
  auto fused = elementwise2<float, float>({a}, {c}, [](Expr x, Expr y) { return fma(x, x, y); });
  auto unfused = elementwise2<float, float>({a}, {c}, [](Expr x, Expr y) { return x * x + y; });
  EXPECT_EQ(fused[0], std::ldexp(1.0f, -24));
  EXPECT_EQ(unfused[0], 0.0f);
  // Bool logic.
  auto logic = elementwise2<bool, bool>({true, true, false, false}, {true, false, true, false},
                                        [](Expr x, Expr y) { return (x && y) || (!x && !y); });
  EXPECT_EQ(logic, (std::vector<bool>{true, false, false, true}));
}

// ---- Casts between every pair of dtypes ----

template <typename To, typename From>
To ref_cast(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (std::is_same_v<From, half>)
      return static_cast<float>(v) != 0.0f;
    else
      return v != 0;
  } else if constexpr (std::is_same_v<From, bool>) {
    if constexpr (std::is_same_v<To, half>)
      return half(v ? 1.0f : 0.0f);
    else
      return static_cast<To>(v ? 1 : 0);
  } else if constexpr (std::is_same_v<To, half>) {
    // No source value here lies near a half rounding midpoint, so going through float
    // rounds as a direct conversion would.
    return half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<From, half>) {
    return ref_cast<To, float>(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // Truncate toward zero, saturate, NaN -> 0.
    double d = static_cast<double>(v);
    if (std::isnan(d)) return 0;
    d = std::trunc(d);
    if (d < static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (d >= std::ldexp(1.0, std::numeric_limits<To>::digits)) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(v);
  }
}

template <typename T>
std::vector<T> cast_sources() {
  if constexpr (std::is_same_v<T, bool>) {
    return {true, false};
  } else if constexpr (std::is_integral_v<T>) {
    std::vector<T> v;
    for (int64_t x : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{127}, int64_t{-128}, int64_t{255}, int64_t{256},
                      int64_t{-1000}, int64_t{65535}, int64_t{70000}, int64_t{2049}, int64_t{16777217},
                      int64_t{std::numeric_limits<int32_t>::max()}, int64_t{std::numeric_limits<int32_t>::min()},
                      std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()})
      v.push_back(static_cast<T>(x));
    return v;
  } else {
    using R = FloatRef<T>;
    using C = typename R::Compute;
    std::vector<T> v;
    for (double x : {0.0,          -0.0,          0.4,     0.5,     -0.5,    0.9,   -0.9,  1.5,
                     -7.9,         127.5,         128.0,   -128.0,  -129.0,  255.9, 256.0, 32767.0,
                     32768.0,      -32769.0,      65504.0, 65535.0, 70000.0, 3e9,   -3e9,  2147483647.0,
                     2147483648.0, -2147483649.0, 1e19,    2e19,    -1e19,   1e30,  -1e30})
      v.push_back(R::from(static_cast<C>(x)));
    for (C x :
         {std::numeric_limits<C>::infinity(), -std::numeric_limits<C>::infinity(), std::numeric_limits<C>::quiet_NaN()})
      v.push_back(R::from(x));
    return v;
  }
}

template <typename To, typename From>
void check_cast() {
  SCOPED_TRACE(dtype_of<From>().to_string() + " -> " + dtype_of<To>().to_string());
  std::vector<From> src = cast_sources<From>();
  for (int lanes : {1, 4}) {
    auto got = elementwise1<To, From>(
        src, [](Expr x) { return cast(dtype_of<To>(), x); }, lanes);
    for (size_t k = 0; k < src.size(); ++k) {
      To want = ref_cast<To, From>(src[k]);
      if constexpr (std::is_same_v<To, half> || std::is_floating_point_v<To>) {
        ASSERT_TRUE(same_float(got[k], want))
            << "source #" << k << " gave " << as_double(got[k]) << ", expected " << as_double(want);
      } else {
        ASSERT_EQ(got[k], want) << "source #" << k;
      }
    }
  }
}

template <typename To, typename... From>
void check_casts_to() {
  (check_cast<To, From>(), ...);
}

template <typename... T>
void check_all_casts() {
  (check_casts_to<T, T...>(), ...);
}

TEST(InterpretDtypes, CastsBetweenEveryPairMatchCpp) {
  check_all_casts<bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, half, float,
                  double>();
}

TEST(InterpretDtypes, CastSpecialCases) {
  // float64 -> float16 rounds once: 1 + 2^-11 + 2^-30 is above the midpoint between 1 and
  // the next half, although rounding to float first would land exactly on it.
  double tricky = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  auto h = elementwise1<half, double>({tricky, 1e300, -1e300}, [](Expr x) { return cast(Float(16), x); });
  EXPECT_EQ(h[0].bits, 0x3C01);
  EXPECT_TRUE(std::isinf(static_cast<float>(h[1])));
  EXPECT_TRUE(std::isinf(static_cast<float>(h[2])) && static_cast<float>(h[2]) < 0);
  // float64 -> float32 beyond float's range: infinity, or FLT_MAX below the midpoint.
  double just_above = static_cast<double>(std::numeric_limits<float>::max()) * (1 + 1e-9);
  auto f = elementwise1<float, double>({1e300, just_above}, [](Expr x) { return cast(Float(32), x); });
  EXPECT_TRUE(std::isinf(f[0]));
  EXPECT_EQ(f[1], std::numeric_limits<float>::max());
  // uint64 values above INT64_MAX convert as unsigned.
  auto u = elementwise1<double, uint64_t>({~uint64_t{0}}, [](Expr x) { return cast(Float(64), x); });
  EXPECT_EQ(u[0], 18446744073709551615.0);
  // Saturation and NaN: documented, not undefined.
  auto s = elementwise1<int32_t, float>({1e20f, -1e20f, std::nanf(""), -2.7f}, [](Expr x) { return cast(Int(32), x); });
  EXPECT_EQ(s, (std::vector<int32_t>{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0, -2}));
}

// ---- Whole programs ----

TEST(Interpret, VectorAddBindsSymbolicShape) {
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), C("C", Float(32), {n});
  Var i("i");
  Stmt body = serial(i, 0, n, store(C, load(A, {i}) + load(B, {i}), {i}));
  LoweredFunc f = make_func("vadd", {buffer_param(A), buffer_param(B), buffer_param(C)}, body);
  for (int64_t len : {0, 1, 1000}) {
    NDArray a = ramp_array(len), b = ramp_array(len, -0.25f, 1.0f), c = NDArray::empty({len}, Float(32));
    interpret(f, {a, b, c});
    auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
    for (size_t k = 0; k < cv.size(); ++k) ASSERT_EQ(cv[k], av[k] + bv[k]);
  }
}

// C = A x B with C's init loop and update loop, flat (after storage flattening) or with
// one index per dimension (before it).
LoweredFunc matmul_func(bool flat) {
  Var M("M"), N("N"), K("K");
  Buffer A("A", Float(32), {M, K}), B("B", Float(32), {K, N}), C("C", Float(32), {M, N});
  Var i("i"), j("j"), k("k");
  auto at = [&](const Buffer& buf, Expr r, Expr c, Expr cols) {
    return flat ? load(buf, {r * cols + c}) : load(buf, {r, c});
  };
  auto c_index = [&]() -> std::vector<Expr> { return flat ? std::vector<Expr>{i * N + j} : std::vector<Expr>{i, j}; };
  Stmt init = store(C, make_const(Float(32), 0.0), c_index());
  Stmt update = serial(k, 0, K, store(C, at(C, i, j, N) + at(A, i, k, K) * at(B, k, j, N), c_index()));
  Stmt body = serial(i, 0, M, serial(j, 0, N, seq({init, update})));
  return make_func("matmul", {buffer_param(A), buffer_param(B), buffer_param(C)}, body);
}

TEST(Interpret, MatrixMultiplyWithReduction) {
  const int64_t M = 96, N = 80, K = 64;
  std::vector<float> a(M * K), b(K * N);
  for (size_t x = 0; x < a.size(); ++x) a[x] = static_cast<float>(static_cast<int>(x * 7 % 13) - 6) * 0.37f;
  for (size_t x = 0; x < b.size(); ++x) b[x] = static_cast<float>(static_cast<int>(x * 5 % 11) - 5) * 0.21f;
  std::vector<float> want(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0;
      for (int64_t k = 0; k < K; ++k) acc = acc + a[i * K + k] * b[k * N + j];
      want[i * N + j] = acc;
    }
  for (bool flat : {true, false}) {
    SCOPED_TRACE(flat ? "flat indices" : "multi-dimensional indices");
    NDArray c = NDArray::empty({M, N}, Float(32));
    interpret(matmul_func(flat), {NDArray::from_vector(a, {M, K}), NDArray::from_vector(b, {K, N}), c});
    EXPECT_EQ(c.to_vector<float>(), want);
  }
}

TEST(Interpret, GuardedLoopFromUnevenSplit) {
  Var n("n");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  Var io("i.outer"), ii("i.inner");
  Expr i = io * 16 + ii;
  Stmt body =
      serial(io, 0, (n + 15) / 16, serial(ii, 0, 16, if_then_else(likely(i < n), store(C, load(A, {i}) * 2.0f, {i}))));
  LoweredFunc f = make_func("guarded", {buffer_param(A), buffer_param(C)}, body);
  NDArray a = ramp_array(100), c = NDArray::empty({100}, Float(32));
  interpret(f, {a, c});
  auto av = a.to_vector<float>(), cv = c.to_vector<float>();
  for (size_t k = 0; k < cv.size(); ++k) ASSERT_EQ(cv[k], av[k] * 2.0f);
}

TEST(Interpret, VectorizedLoopWithPredicatedTail) {
  Var n("n"), scale("scale", Float(32));
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  Var io("i.outer");
  Expr idx = ramp(io * 8, 1, 8);
  Expr in_range = idx < broadcast(n, 8);
  Expr value = load(A, {idx}, in_range) * broadcast(scale, 8) + broadcast(make_const(Float(32), 1.0), 8);
  Stmt body = serial(io, 0, (n + 7) / 8, store(C, value, {idx}, in_range));
  LoweredFunc f = make_func("vscale", {buffer_param(A), buffer_param(C), scalar_param(scale)}, body);
  NDArray a = ramp_array(37), c = NDArray::empty({37}, Float(32));
  interpret(f, {a, c, 3.0f});
  auto av = a.to_vector<float>(), cv = c.to_vector<float>();
  for (size_t k = 0; k < cv.size(); ++k) ASSERT_EQ(cv[k], av[k] * 3.0f + 1.0f);

  // The store's predicate also masks the value: an unpredicated load in it is computed
  // only for the lanes that are stored.
  Stmt masked_by_store = serial(io, 0, (n + 7) / 8, store(C, load(A, {idx}) + load(A, {idx}), {idx}, in_range));
  interpret(make_func("vdouble", {buffer_param(A), buffer_param(C)}, masked_by_store), {a, c});
  cv = c.to_vector<float>();
  for (size_t k = 0; k < cv.size(); ++k) ASSERT_EQ(cv[k], av[k] + av[k]);
}

TEST(Interpret, VectorNodesLetSelectAndStridedRamps) {
  Buffer A("A", Int(32), {16}), C("C", Int(32), {8});
  Var s("s"), base("base");
  // C[0..3] = let base = A[1] in select(e > 5, e, -e) + base, e = A[ramp(0, 2, 4)] (the
  // even elements); C[4..7] = the odd elements, A[ramp(s, 2, 4)] with s = 1 from a LetStmt.
  Expr evens = load(A, {ramp(0, 2, 4)});
  Expr picked =
      let(base, load(A, {1}), select(evens > broadcast(5, 4), evens, broadcast(0, 4) - evens) + broadcast(base, 4));
  Stmt body = let_stmt(s, make_const(Int(32), 1),
                       seq({store(C, picked, {ramp(0, 1, 4)}), store(C, load(A, {ramp(s, 2, 4)}), {ramp(4, 1, 4)}),
                            evaluate(load(A, {ramp(12, 1, 4)}))}));
  std::vector<int32_t> a(16);
  for (int k = 0; k < 16; ++k) a[static_cast<size_t>(k)] = k * 3 - 4;
  NDArray c = NDArray::empty({8}, Int(32));
  interpret(make_func("vec", {buffer_param(A), buffer_param(C)}, body), {NDArray::from_vector(a, {16}), c});
  std::vector<int32_t> want(8);
  for (int k = 0; k < 4; ++k) {
    int32_t e = a[static_cast<size_t>(2 * k)];
    want[static_cast<size_t>(k)] = (e > 5 ? e : -e) + a[1];
    want[static_cast<size_t>(4 + k)] = a[static_cast<size_t>(2 * k + 1)];
  }
  EXPECT_EQ(c.to_vector<int32_t>(), want);
}

TEST(Interpret, AllocateWithSymbolicShapeAndScalarParams) {
  // tmp[n] = A * alpha; C[i] = tmp[n - 1 - i] + offset (a reversed copy through a local buffer).
  Var n("n"), alpha("alpha", Float(64)), offset("offset", Int(32));
  Buffer A("A", Float(64), {n}), C("C", Float(64), {n}), tmp("tmp", Float(64), {n}, MemoryScope::Local);
  Var i("i"), j("j");
  Stmt body = allocate(tmp, seq({serial(i, 0, n, store(tmp, load(A, {i}) * alpha, {i})),
                                 serial(j, 0, n, store(C, load(tmp, {n - 1 - j}) + cast(Float(64), offset), {j}))}));
  LoweredFunc f = make_func("rev", {buffer_param(A), buffer_param(C), scalar_param(alpha), scalar_param(offset)}, body);
  std::vector<double> a = {1, 2, 3, 4, 5};
  NDArray c = NDArray::empty({5}, Float(64));
  interpret(f, {NDArray::from_vector(a, {5}), c, 0.5, 10});
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{12.5, 12, 11.5, 11, 10.5}));
  // A float parameter also takes an integer.
  interpret(f, {NDArray::from_vector(a, {5}), c, 2, 0});
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{10, 8, 6, 4, 2}));
}

// ---- if_then_else guards loads; select does not ----

TEST(Interpret, IfThenElseDoesNotEvaluateTheUntakenSide) {
  Var n("n"), m("m");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {m});
  Var i("i");
  // Scalar: C[i] = i < n ? A[i] : -1 over m > n points.
  Stmt scalar_body = serial(i, 0, m, store(C, if_then_else(i < n, load(A, {i}), make_const(Float(32), -1.0)), {i}));
  NDArray a = ramp_array(10), c = NDArray::empty({16}, Float(32));
  interpret(make_func("ite", {buffer_param(A), buffer_param(C)}, scalar_body), {a, c});
  auto av = a.to_vector<float>(), cv = c.to_vector<float>();
  for (size_t k = 0; k < 16; ++k) ASSERT_EQ(cv[k], k < 10 ? av[k] : -1.0f);

  // Vector: lanes 8..15 straddle the end of A; only the in-range lanes load.
  Var io("io");
  Expr idx = ramp(io * 8, 1, 8);
  Expr vec = if_then_else(idx < broadcast(n, 8), load(A, {idx}), broadcast(make_const(Float(32), -1.0), 8));
  Stmt vector_body = serial(io, 0, m / 8, store(C, vec, {idx}));
  NDArray c2 = NDArray::empty({16}, Float(32));
  interpret(make_func("ite_vec", {buffer_param(A), buffer_param(C)}, vector_body), {a, c2});
  EXPECT_EQ(c2.to_vector<float>(), cv);

  // select evaluates both sides, so the same program reads out of bounds.
  Stmt select_body = serial(i, 0, m, store(C, select(i < n, load(A, {i}), make_const(Float(32), -1.0)), {i}));
  std::string msg = error_of([&] {
    interpret(make_func("sel", {buffer_param(A), buffer_param(C)}, select_body), {a, c});
  });
  EXPECT_HAS(msg, "out-of-bounds load from buffer 'A'");
  EXPECT_HAS(msg, "index 10");
}

// ---- GPU thread axes ----

TEST(InterpretGpu, BarrierMakesSharedWritesVisibleToOtherThreads) {
  Buffer A("A", Float(32), {64}), B("B", Float(32), {64});
  Buffer S("S", Float(32), {64}, MemoryScope::Shared);
  Var tx("threadIdx.x");
  // Each thread writes S[tx]; after the barrier it reads its neighbour's element.
  Stmt body = thread_loop(
      tx, 64, "threadIdx.x",
      allocate(S, seq({store(S, load(A, {tx}), {tx}), barrier(), store(B, load(S, {(tx + 1) % 64}), {tx})})));
  NDArray a = ramp_array(64), b = NDArray::empty({64}, Float(32));
  interpret(make_func("rotate", {buffer_param(A), buffer_param(B)}, body), {a, b});
  auto av = a.to_vector<float>(), bv = b.to_vector<float>();
  for (size_t t = 0; t < 64; ++t) ASSERT_EQ(bv[t], av[(t + 1) % 64]) << "thread " << t;
}

TEST(InterpretGpu, BlocksTimesThreadsWithSharedMemoryPerBlock) {
  // Each block of 64 threads reverses its slice of A through block-level shared memory.
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  Buffer S("S", Float(32), {64}, MemoryScope::Shared);
  Var bx("blockIdx.x"), tx("threadIdx.x");
  Expr g = bx * 64 + tx;
  Stmt body = for_loop(
      bx, 0, n / 64, ForKind::ThreadBinding,
      allocate(S, thread_loop(tx, 64, "threadIdx.x",
                              seq({store(S, load(A, {g}), {tx}), barrier(), store(B, load(S, {63 - tx}), {g})}))),
      "blockIdx.x");
  NDArray a = ramp_array(256), b = NDArray::empty({256}, Float(32));
  interpret(make_func("reverse_blocks", {buffer_param(A), buffer_param(B)}, body), {a, b});
  auto av = a.to_vector<float>(), bv = b.to_vector<float>();
  for (size_t k = 0; k < 256; ++k) ASSERT_EQ(bv[k], av[(k / 64) * 64 + 63 - k % 64]) << "element " << k;
}

TEST(InterpretGpu, BlocksTimesThreadsWithoutBarrierAndGuard) {
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  Var bx("blockIdx.x"), tx("threadIdx.x");
  Expr g = bx * 64 + tx;
  Stmt body =
      for_loop(bx, 0, (n + 63) / 64, ForKind::ThreadBinding,
               thread_loop(tx, 64, "threadIdx.x", if_then_else(likely(g < n), store(B, load(A, {g}) + 1.0f, {g}))),
               "blockIdx.x");
  NDArray a = ramp_array(200), b = NDArray::empty({200}, Float(32));
  interpret(make_func("add_one", {buffer_param(A), buffer_param(B)}, body), {a, b});
  auto av = a.to_vector<float>(), bv = b.to_vector<float>();
  for (size_t k = 0; k < 200; ++k) ASSERT_EQ(bv[k], av[k] + 1.0f);
}

TEST(InterpretGpu, BarriersInsideASerialLoopWithPerThreadLocals) {
  // A tiled sum: per tile, threads stage A into shared memory, sync, and each thread adds
  // another thread's element to its own local accumulator.
  Buffer A("A", Float(32), {128}), B("B", Float(32), {32});
  Buffer S("S", Float(32), {32}, MemoryScope::Shared), acc("acc", Float(32), {1}, MemoryScope::Local);
  Var tx("threadIdx.x"), ko("ko");
  Stmt tile = seq({store(S, load(A, {ko * 32 + tx}), {tx}), barrier(),
                   store(acc, load(acc, {0}) + load(S, {(tx + ko) % 32}), {0}), barrier()});
  Stmt body = thread_loop(tx, 32, "threadIdx.x",
                          allocate(S, allocate(acc, seq({store(acc, make_const(Float(32), 0.0), {0}),
                                                         serial(ko, 0, 4, tile), store(B, load(acc, {0}), {tx})}))));
  NDArray a = ramp_array(128), b = NDArray::empty({32}, Float(32));
  interpret(make_func("tiled", {buffer_param(A), buffer_param(B)}, body), {a, b});
  auto av = a.to_vector<float>(), bv = b.to_vector<float>();
  for (size_t t = 0; t < 32; ++t) {
    float want = 0;
    for (size_t k = 0; k < 4; ++k) want = want + av[k * 32 + (t + k) % 32];
    ASSERT_EQ(bv[t], want) << "thread " << t;
  }
}

TEST(InterpretGpu, NestedThreadAxesShareOneBlock) {
  Buffer A("A", Int(32), {32}), B("B", Int(32), {32});
  Buffer S("S", Int(32), {32}, MemoryScope::Shared);
  Var ty("threadIdx.y"), tx("threadIdx.x");
  Expr t = ty * 8 + tx;
  // Uniform conditions (even thread-dependent ones that hold for all) are fine.
  Stmt inner =
      if_then_else(t < 32, seq({store(S, load(A, {t}), {t}), barrier(), store(B, load(S, {(t + 9) % 32}), {t})}));
  Stmt body = allocate(S, thread_loop(ty, 4, "threadIdx.y", thread_loop(tx, 8, "threadIdx.x", inner)));
  std::vector<int32_t> a(32);
  for (int k = 0; k < 32; ++k) a[static_cast<size_t>(k)] = k * k;
  NDArray b = NDArray::empty({32}, Int(32));
  interpret(make_func("nested", {buffer_param(A), buffer_param(B)}, body), {NDArray::from_vector(a, {32}), b});
  auto bv = b.to_vector<int32_t>();
  for (size_t k = 0; k < 32; ++k) ASSERT_EQ(bv[k], a[(k + 9) % 32]);
}

TEST(InterpretGpu, BarrierInDivergentControlFlowIsAnError) {
  Buffer A("A", Float(32), {64});
  Var tx("threadIdx.x"), k("k");
  Stmt divergent_if = thread_loop(tx, 64, "threadIdx.x", if_then_else(tx < 32, barrier()));
  std::string msg =
      error_of([&] { interpret(make_func("div_if", {buffer_param(A)}, divergent_if), {ramp_array(64)}); });
  EXPECT_HAS(msg, "interpret 'div_if'");
  EXPECT_HAS(msg, "barrier in divergent control flow");
  EXPECT_HAS(msg, "32 of the 64 threads");

  Stmt divergent_loop = thread_loop(tx, 64, "threadIdx.x", serial(k, 0, tx % 2 + 1, barrier()));
  msg = error_of([&] { interpret(make_func("div_loop", {buffer_param(A)}, divergent_loop), {ramp_array(64)}); });
  EXPECT_HAS(msg, "barrier in divergent control flow");

  Var ty("threadIdx.y");
  Stmt divergent_nested =
      thread_loop(ty, 2, "threadIdx.y", if_then_else(ty == 0, thread_loop(tx, 4, "threadIdx.x", barrier())));
  msg = error_of([&] { interpret(make_func("div_nested", {buffer_param(A)}, divergent_nested), {ramp_array(64)}); });
  EXPECT_HAS(msg, "barrier in divergent control flow");
}

// ---- Errors ----

TEST(InterpretErrors, ArgumentChecks) {
  Var n("n"), alpha("alpha", Float(32)), count("count", Int(32));
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), M2("M2", Float(32), {n, 2 * n});
  Var i("i");
  Stmt body = serial(i, 0, n, store(B, load(A, {i}) * alpha, {i}));
  LoweredFunc f = make_func("scale", {buffer_param(A), buffer_param(B), scalar_param(alpha)}, body);
  NDArray a = ramp_array(5), b = NDArray::empty({5}, Float(32));

  std::string msg = error_of([&] { interpret(f, {a, b}); });
  EXPECT_HAS(msg, "interpret 'scale'");
  EXPECT_HAS(msg, "takes 3 arguments (A, B, alpha) but 2 were given");

  msg = error_of([&] { interpret(f, {a, NDArray::empty({5}, Int(32)), 1.0f}); });
  EXPECT_HAS(msg, "parameter 'B' expects an array of float32, but was given int32");

  msg = error_of([&] { interpret(f, {a, NDArray::empty({5, 1}, Float(32)), 1.0f}); });
  EXPECT_HAS(msg, "parameter 'B' expects a 1-dimensional array");
  EXPECT_HAS(msg, "(5, 1)");

  msg = error_of([&] { interpret(f, {a, NDArray::empty({7}, Float(32)), 1.0f}); });
  EXPECT_HAS(msg, "parameter 'B' dimension 0 has extent 7");
  EXPECT_HAS(msg, "shape variable 'n' is already 5");
  EXPECT_HAS(msg, "parameter 'A' dimension 0");

  msg = error_of([&] { interpret(f, {a, b, a}); });
  EXPECT_HAS(msg, "scalar parameter 'alpha'");
  EXPECT_HAS(msg, "given an array");
  msg = error_of([&] { interpret(f, {2.0f, b, 1.0f}); });
  EXPECT_HAS(msg, "parameter 'A' (argument 0) is a buffer of float32 but was given a number");

  LoweredFunc g = make_func("counted", {buffer_param(A), scalar_param(count)}, evaluate(count));
  msg = error_of([&] { interpret(g, {a, 2.5}); });
  EXPECT_HAS(msg, "scalar parameter 'count' has type int32 but was given a floating-point number");
  msg = error_of([&] { interpret(g, {a, int64_t{1} << 40}); });
  EXPECT_HAS(msg, "cannot hold 1099511627776");

  // A shape entry that is an expression is evaluated once the variables are bound.
  LoweredFunc h = make_func("wide", {buffer_param(A), buffer_param(M2)}, evaluate(n));
  interpret(h, {a, NDArray::empty({5, 10}, Float(32))});
  msg = error_of([&] { interpret(h, {a, NDArray::empty({5, 9}, Float(32))}); });
  EXPECT_HAS(msg, "parameter 'M2' dimension 1 has extent 9, but its shape expression requires 10");

  // A scalar parameter that is also a shape variable is checked against the arrays.
  LoweredFunc k = make_func("both", {buffer_param(A), scalar_param(n)}, evaluate(n));
  interpret(k, {a, 5});
  msg = error_of([&] { interpret(k, {a, 6}); });
  EXPECT_HAS(msg, "scalar parameter 'n' is 6, but shape variable 'n' is already 5");
}

TEST(InterpretErrors, OutOfBoundsAccesses) {
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  Var i("i");
  LoweredFunc reads_past =
      make_func("reads_past", {buffer_param(A), buffer_param(B)}, serial(i, 0, n, store(B, load(A, {i + 1}), {i})));
  NDArray a = ramp_array(10), b = NDArray::empty({10}, Float(32));
  std::string msg = error_of([&] { interpret(reads_past, {a, b}); });
  EXPECT_HAS(msg, "interpret 'reads_past': out-of-bounds load from buffer 'A': index 10 is outside [0, 10)");

  LoweredFunc writes_before =
      make_func("writes_before", {buffer_param(A), buffer_param(B)}, serial(i, 0, n, store(B, load(A, {i}), {i - 1})));
  msg = error_of([&] { interpret(writes_before, {a, b}); });
  EXPECT_HAS(msg, "out-of-bounds store to buffer 'B': index -1 is outside [0, 10)");

  // Vector lanes are checked one by one.
  Var io("io");
  LoweredFunc vector_past = make_func("vector_past", {buffer_param(A), buffer_param(B)},
                                      serial(io, 0, 2, store(B, load(A, {ramp(io * 7, 1, 4)}), {ramp(io * 4, 1, 4)})));
  msg = error_of([&] { interpret(vector_past, {a, b}); });
  EXPECT_HAS(msg, "out-of-bounds load from buffer 'A': index 10");

  // Multi-dimensional indices are checked per dimension.
  Buffer M("M", Float(32), {3, 4});
  LoweredFunc multi = make_func("multi", {buffer_param(M)}, evaluate(load(M, {1, 4})));
  msg = error_of([&] { interpret(multi, {NDArray::empty({3, 4}, Float(32))}); });
  EXPECT_HAS(msg, "out-of-bounds load from buffer 'M': index (1, 4) is outside shape (3, 4)");

  // Local allocations are checked too.
  Buffer T("T", Int(32), {n}, MemoryScope::Local);
  LoweredFunc local = make_func("local", {buffer_param(A)}, allocate(T, store(T, make_const(Int(32), 1), {n})));
  msg = error_of([&] { interpret(local, {a}); });
  EXPECT_HAS(msg, "out-of-bounds store to buffer 'T': index 10 is outside [0, 10)");
}

TEST(InterpretErrors, MalformedIrIsRejectedBeforeAnythingRuns) {
  // Hand-made nodes can skip the builders' type rules; interpret checks before running,
  // so the store in front of the bad expression never happens.
  Buffer A("A", Int(32), {4});
  Expr mixed(std::make_shared<const BinaryNode>(Int(32), BinOp::Add, Expr(1), Expr(2.0f)));
  Stmt body = seq({store(A, make_const(Int(32), 7), {0}), evaluate(mixed)});
  NDArray a = NDArray::empty({4}, Int(32));
  std::string msg = error_of([&] { interpret(make_func("mixed", {buffer_param(A)}, body), {a}); });
  EXPECT_HAS(msg, "operands of '+' have different types int32 and float32");
  EXPECT_EQ(a.to_vector<int32_t>()[0], 0);

  Var n("n");
  Buffer T("T", Int(32), {n - 20}, MemoryScope::Local);
  Buffer B("B", Int(32), {n});
  msg = error_of([&] {
    interpret(make_func("negative", {buffer_param(B)}, allocate(T, evaluate(n))), {NDArray::empty({10}, Int(32))});
  });
  EXPECT_HAS(msg, "Allocate of buffer 'T': dimension 0 has negative extent -10");
}

TEST(InterpretErrors, AssertUnboundVariablesAndUnloweredNodes) {
  Var n("n");
  Buffer A("A", Float(32), {n});
  LoweredFunc checked =
      make_func("checked", {buffer_param(A)}, assert_stmt(n > 5, "A must have more than 5 elements", evaluate(n)));
  interpret(checked, {ramp_array(6)});
  std::string msg = error_of([&] { interpret(checked, {ramp_array(3)}); });
  EXPECT_HAS(msg, "interpret 'checked': assertion failed: A must have more than 5 elements");

  Var stray("stray");
  msg = error_of([&] { interpret(make_func("stray", {buffer_param(A)}, evaluate(stray + 1)), {ramp_array(3)}); });
  EXPECT_HAS(msg, "variable 'stray' is used but not bound");

  Buffer T("T", Float(32), {4});
  msg = error_of([&] { interpret(make_func("no_alloc", {buffer_param(A)}, evaluate(load(T, {0}))), {ramp_array(3)}); });
  EXPECT_HAS(msg, "buffer 'T' is accessed but is neither a parameter nor inside its Allocate");

  Tensor P = placeholder({4}, Float(32), "P");
  msg = error_of([&] { interpret(make_func("tensor_read", {}, evaluate(P(0))), {}); });
  EXPECT_HAS(msg, "a read of tensor 'P' is not loop IR: lower() the schedule");
  IterVar k = reduce_axis({0, 4}, "k");
  msg = error_of([&] { interpret(make_func("reduce", {}, evaluate(sum(P(k), std::vector<IterVar>{k}))), {}); });
  EXPECT_HAS(msg, "a sum reduction is not loop IR: lower() the schedule");
}

}  // namespace
