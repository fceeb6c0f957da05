// The math library (sin ... rsqrt, isnan/isinf/isfinite) and the integer bitwise operators
// (& | ^ ~ << >> popcount): type rules and errors, printing, folding and bounds, then
// interpret() against C++ references written here and the JIT against interpret(), bit
// for bit, in scalar and vectorized schedules. The CUDA side runs in
// test_cuda_emulation.cpp (MathLibrary, BitwiseOperators) and test_cuda_nvcc.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_emulation/harness.h"
#include "cuda_emulation/math_bitwise_kernels.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;

namespace {

// ---- Building expressions ----

TEST(MathBitwiseExpr, TypeRulesCombineOperandsAsArithmeticDoes) {
  Var x("x"), l("l", Int(64)), u("u", UInt(8));
  EXPECT_EQ((x & 15).dtype(), Int(32));
  EXPECT_EQ((x << l).dtype(), Int(64));
  EXPECT_EQ((u >> 3).dtype(), UInt(8));  // the literal takes u's type
  EXPECT_EQ(popcount(u).dtype(), UInt(8));
  EXPECT_EQ(isnan(Var("f", Float(16))).dtype(), Bool());
  EXPECT_EQ(atan2(Var("f", Float(32)), 1.0).dtype(), Float(32));  // the literal takes f's type
  EXPECT_EQ(atan2(Var("f", Float(32)), Var("d", Float(64))).dtype(), Float(64));
  EXPECT_EQ(sigmoid(broadcast(Var("g", Float(32)), 4)).dtype(), Float(32, 4));
}

TEST(MathBitwiseExpr, FloatAndBoolOperandsAreRefusedNamingTheTypes) {
  Var x("x"), f("f", Float(32));
  expect_error([&] { (void)(f & x); }, {"operator &: expects integer operands, got float32 and int32"});
  expect_error([&] { (void)(x << f); }, {"operator <<: expects integer operands, got int32 and float32"});
  expect_error([&] { (void)((x < 3) | (x > 5)); },
               {"operator |: expects integer operands, got bool and bool", "use && || != on bool"});
  expect_error([&] { (void)(~f); }, {"operator ~: expects an integer operand, got float32"});
  expect_error([&] { (void)(~(x < 1)); }, {"operator ~", "got bool (use ! on bool)"});
  expect_error([&] { (void)popcount(f); }, {"popcount: expects an integer operand, got float32"});
  expect_error([&] { (void)(x ^ Expr()); }, {"operator ^: an operand is undefined"});
  expect_error([&] { (void)(Var("u", UInt(8)) & 300); }, {"integer literal 300 does not fit uint8"});
}

TEST(MathBitwiseExpr, MathFunctionsNeedFloatsAndClassifyIntegersAsFinite) {
  Var x("x");
  expect_error([&] { (void)sin(x); }, {"sin: expects a floating-point argument, got int32 (cast it first)"});
  expect_error([&] { (void)erf(x); }, {"erf: expects a floating-point argument, got int32"});
  expect_error([&] { (void)atan2(x, x); }, {"atan2: expects floating-point arguments, got int32 and int32"});
  expect_error([&] { (void)isnan(x < 1); }, {"isnan: expects a number, got bool"});
  EXPECT_TRUE(is_const_int(isnan(x), 0));
  EXPECT_TRUE(is_const_int(isinf(x), 0));
  EXPECT_TRUE(is_const_int(isfinite(x), 1));
}

TEST(MathBitwiseExpr, PrintsAsCWritesIt) {
  Var x("x"), y("y"), f("f", Float(32));
  EXPECT_EQ(to_string((x & 15) | (y ^ x)), "((x & 15) | (y ^ x))");
  EXPECT_EQ(to_string(~x + (x << 2) - (y >> x)), "((~x + (x << 2)) - (y >> x))");
  EXPECT_EQ(to_string(popcount(x)), "popcount(x)");
  EXPECT_EQ(to_string(atan2(f, sigmoid(f))), "atan2(f, sigmoid(f))");
  EXPECT_EQ(to_string(isfinite(rsqrt(f))), "isfinite(rsqrt(f))");
}

int64_t folded(const Expr& e) {
  Expr s = simplify(e);
  const int64_t* v = as_const_int(s);
  if (!v) ADD_FAILURE() << "not folded: " << s;
  return v ? *v : 0;
}

TEST(MathBitwiseExpr, ConstantsFoldWithTheDefinedShiftResults) {
  EXPECT_EQ(folded(Expr(12) & 10), 8);
  EXPECT_EQ(folded(Expr(12) | 3), 15);
  EXPECT_EQ(folded(Expr(12) ^ 10), 6);
  EXPECT_EQ(folded(~Expr(0)), -1);
  EXPECT_EQ(folded(~make_const(UInt(8), 0)), 255);
  EXPECT_EQ(folded(popcount(make_const(Int(16), -1))), 16);
  EXPECT_EQ(folded(Expr(1) << 31), INT32_MIN);  // wraps
  EXPECT_EQ(folded(Expr(1) << 32), 0);          // the width and beyond: 0
  EXPECT_EQ(folded(Expr(-1) >> 40), -1);        // the sign fills
  EXPECT_EQ(folded(make_const(Int(8), -128) >> 9), -1);
  EXPECT_EQ(folded(make_const(UInt(8), 200) >> 3), 25);
  EXPECT_EQ(folded(Expr(-8) >> -2), -32);  // a negative amount shifts the other way
  EXPECT_EQ(folded(Expr(-8) << -2), -2);
  EXPECT_EQ(folded(Expr(5) << make_const(Int(32), INT32_MIN)), 0);
  Var x("x");
  EXPECT_EQ(folded(x - x + (Expr(3) << 4)), 48);
  EXPECT_EQ(folded(cast(Int(32), isnan(make_const(Float(32), std::nan(""))))), 1);
  EXPECT_EQ(folded(cast(Int(32), isinf(make_const(Float(64), -INFINITY)))), 1);
}

TEST(MathBitwiseExpr, BoundsFollowMasksShiftsAndPopcount) {
  Var x("x"), y("y");
  VarBounds vb = {{x.get(), {-1000, 1000}}, {y.get(), {0, 100}}};
  auto bounds = [&](const Expr& e) {
    Interval r;
    EXPECT_TRUE(const_bounds(e, vb, &r)) << e;
    return std::pair<int64_t, int64_t>(r.min, r.max);
  };
  EXPECT_EQ(bounds(x & 7), (std::pair<int64_t, int64_t>(0, 7)));
  EXPECT_EQ(bounds(y & x), (std::pair<int64_t, int64_t>(0, 100)));
  EXPECT_EQ(bounds(y | 3), (std::pair<int64_t, int64_t>(0, 127)));
  EXPECT_EQ(bounds(x >> 2), (std::pair<int64_t, int64_t>(-250, 250)));
  EXPECT_EQ(bounds(y << 3), (std::pair<int64_t, int64_t>(0, 800)));
  EXPECT_EQ(bounds(popcount(x)), (std::pair<int64_t, int64_t>(0, 32)));
  Interval unknown;
  EXPECT_FALSE(const_bounds(x << y, vb, &unknown));  // may wrap: no bounds
}

// ---- C++ references, independent of te's int_arith.h ----

template <typename T>
T ref_shift(T a, T b, bool left) {
  using U = std::make_unsigned_t<T>;
  constexpr unsigned width = sizeof(T) * 8;
  const bool negative = std::is_signed_v<T> && b < 0;
  const U k = negative ? static_cast<U>(U(0) - static_cast<U>(b)) : static_cast<U>(b);
  if (negative) left = !left;
  if (left) return k >= width ? T(0) : static_cast<T>(static_cast<U>(static_cast<U>(a) << k));
  if (k >= width) return std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
  return static_cast<T>(a >> k);
}

template <typename T>
T ref_bitwise(const std::string& op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (op == "and") return static_cast<T>(a & b);
  if (op == "or") return static_cast<T>(a | b);
  if (op == "xor") return static_cast<T>(a ^ b);
  if (op == "not") return static_cast<T>(~a);
  if (op == "popcount") return static_cast<T>(__builtin_popcountll(static_cast<U>(a)));
  if (op == "shl" || op == "shr") return ref_shift<T>(a, b, op == "shl");
  if (op == "shl_in_range" || op == "shr_in_range") return ref_shift<T>(a, static_cast<T>(b & 7), op == "shl_in_range");
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

template <typename T>
std::vector<T> bitwise_reference(const std::string& op, const NDArray& x, const NDArray& y) {
  std::vector<T> xs = x.to_vector<T>(), ys = y.to_vector<T>(), out;
  for (size_t i = 0; i < xs.size(); ++i) out.push_back(ref_bitwise<T>(op, xs[i], ys[i]));
  return out;
}

// out = op(X, Y) as a compute: plain, or split by 8 with the inner loop vectorized.
LoweredFunc elementwise(DataType in, int arity, const std::function<Expr(Expr, Expr)>& op, bool vectorized,
                        const std::string& name) {
  Var n("n");
  Tensor X = placeholder({n}, in, "X"), Y = placeholder({n}, in, "Y");
  Tensor O = compute(
      {n}, [&](Expr i) { return op(X(i), arity > 1 ? Expr(Y(i)) : Expr(X(i))); }, "O");
  Schedule s = create_schedule({O});
  if (vectorized) {
    auto [outer, inner] = s[O].split(O.axis(0), 8);
    s[O].vectorize(inner);
  }
  return lower(s, {X, Y, O}, name);
}

template <typename T>
void check_bitwise_type(DataType t, size_t type_index) {
  const int64_t n = 203;
  std::vector<Argument> inputs = cuda_test::bitwise_args(n, 7 + type_index);
  NDArray x = inputs[2 * type_index].array(), y = inputs[2 * type_index + 1].array();
  for (const cuda_test::BitwiseOp& op : cuda_test::bitwise_ops()) {
    std::vector<T> want = bitwise_reference<T>(op.name, x, y);
    for (bool vectorized : {false, true}) {
      SCOPED_TRACE(t.to_string() + " " + op.name + (vectorized ? " vectorized" : ""));
      LoweredFunc f = elementwise(t, 2, op.apply, vectorized, "bitwise");
      NDArray by_interpret = NDArray::empty({n}, t), by_jit = NDArray::empty({n}, t);
      interpret(f, {x, y, by_interpret});
      EXPECT_EQ(by_interpret.to_vector<T>(), want);
      build(f)("bitwise")(x, y, by_jit);
      EXPECT_EQ(cuda_test::compare_arrays(by_interpret, by_jit), "");
    }
  }
}

TEST(MathBitwiseRun, BitwiseOperatorsMatchTheReferenceInTheInterpreterAndTheJit) {
  check_bitwise_type<int8_t>(Int(8), 0);
  check_bitwise_type<uint8_t>(UInt(8), 1);
  check_bitwise_type<int16_t>(Int(16), 2);
  check_bitwise_type<int32_t>(Int(32), 3);
  check_bitwise_type<uint32_t>(UInt(32), 4);
  check_bitwise_type<int64_t>(Int(64), 5);
  check_bitwise_type<uint64_t>(UInt(64), 6);
}

// The reference of a math_ops() function in precision F (libm's functions of that type).
template <typename F>
F ref_math(const std::string& op, F x, F (*round)(F)) {
  if (op == "sin") return std::sin(x);
  if (op == "cos") return std::cos(x);
  if (op == "tan") return std::tan(x);
  if (op == "asin") return std::asin(x);
  if (op == "acos") return std::acos(x);
  if (op == "atan") return std::atan(x);
  if (op == "atan2") return std::atan2(x, round(F(1.5) - x));
  if (op == "sinh") return std::sinh(x);
  if (op == "cosh") return std::cosh(x);
  if (op == "erf") return std::erf(x);
  if (op == "sigmoid") return F(1) / (F(1) + std::exp(-x));
  if (op == "exp2") return std::exp2(x);
  if (op == "log2") return std::log2(x);
  if (op == "log10") return std::log10(x);
  if (op == "log1p") return std::log1p(x);
  if (op == "expm1") return std::expm1(x);
  if (op == "rsqrt") return F(1) / std::sqrt(x);
  ADD_FAILURE() << "no reference for " << op;
  return x;
}

float identity_float(float v) { return v; }
double identity_double(double v) { return v; }
float to_half_value(float v) { return static_cast<float>(half(v)); }

TEST(MathBitwiseRun, MathFunctionsMatchLibmInTheInterpreterAndTheJit) {
  const int64_t n = 97;
  std::vector<DataType> types = {Float(32), Float(64), Float(16)};
  LoweredFunc inputs_of = cuda_test::math_library_func();
  std::vector<Argument> inputs = cuda_test::math_library_args(n, inputs_of);
  for (size_t ti = 0; ti < types.size(); ++ti) {
    DataType t = types[ti];
    NDArray x = inputs[ti].array();
    for (const cuda_test::MathOp& op : cuda_test::math_ops()) {
      NDArray want = NDArray::empty({n}, t);
      if (t == Float(64)) {
        std::vector<double> xs = x.to_vector<double>(), r;
        for (double v : xs) r.push_back(ref_math<double>(op.name, v, identity_double));
        want = NDArray::from_vector(r, {n});
      } else if (t == Float(32)) {
        std::vector<float> xs = x.to_vector<float>(), r;
        for (float v : xs) r.push_back(ref_math<float>(op.name, v, identity_float));
        want = NDArray::from_vector(r, {n});
      } else {  // float16: computed in float, rounded once (inner float16 operations round too)
        std::vector<half> xs = x.to_vector<half>(), r;
        for (half v : xs) r.push_back(half(ref_math<float>(op.name, static_cast<float>(v), to_half_value)));
        want = NDArray::from_vector(r, {n});
      }
      for (bool vectorized : {false, true}) {
        SCOPED_TRACE(t.to_string() + " " + op.name + (vectorized ? " vectorized" : ""));
        LoweredFunc f = elementwise(
            t, 1, [&](Expr a, Expr) { return op.apply(a); }, vectorized, "math");
        NDArray by_interpret = NDArray::empty({n}, t), by_jit = NDArray::empty({n}, t);
        interpret(f, {x, x, by_interpret});
        EXPECT_EQ(cuda_test::compare_arrays(want, by_interpret), "");
        // libm's own results: the default fast_vector_math computes vector exp (and
        // sigmoid) by te's polynomial, within 2 ulp (test_vector_math).
        BuildOptions libm;
        libm.fast_vector_math = false;
        build(f, libm)("math")(x, x, by_jit);
        EXPECT_EQ(cuda_test::compare_arrays(by_interpret, by_jit), "");
      }
    }
  }
}

TEST(MathBitwiseRun, ClassificationMatchesTheStandardLibrary) {
  const int64_t n = 40;
  LoweredFunc inputs_of = cuda_test::math_library_func();
  std::vector<Argument> inputs = cuda_test::math_library_args(n, inputs_of);
  NDArray x = inputs[1].array();  // float64
  std::vector<double> xs = x.to_vector<double>();
  const char* names[] = {"isnan", "isinf", "isfinite"};
  for (int j = 0; j < 3; ++j) {
    for (bool vectorized : {false, true}) {
      SCOPED_TRACE(std::string(names[j]) + (vectorized ? " vectorized" : ""));
      Var m("m");
      Tensor X = placeholder({m}, Float(64), "X");
      Tensor O = compute(
          {m}, [&](Expr i) { return cast(Int(32), cuda_test::classify_ops()[j](X(i))); }, "O");
      Schedule s = create_schedule({O});
      if (vectorized) {
        auto [outer, inner] = s[O].split(O.axis(0), 4);
        s[O].vectorize(inner);
      }
      LoweredFunc f = lower(s, {X, O}, "classify");
      std::vector<int32_t> want;
      for (double v : xs) want.push_back(j == 0 ? std::isnan(v) : j == 1 ? std::isinf(v) : std::isfinite(v));
      NDArray a = NDArray::empty({n}, Int(32)), b = NDArray::empty({n}, Int(32));
      interpret(f, {x, a});
      EXPECT_EQ(a.to_vector<int32_t>(), want);
      build(f)("classify")(x, b);
      EXPECT_EQ(b.to_vector<int32_t>(), want);
    }
  }
}

// Loop IR built by hand can hold a bitwise intrinsic on floats (the builders refuse it):
// both backends say what is wrong.
TEST(MathBitwiseRun, BitwiseIntrinsicsOnFloatsInHandBuiltIrAreRefused) {
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  auto bad = [&](Expr i) {
    Expr a = load(A, {i});
    return store(B, Expr(std::make_shared<const CallNode>(Float(32), Intrinsic::BitAnd, std::vector<Expr>{a, a})), {i});
  };
  // A grid of one thread per element: runs on the CPU too (thread loops run serially).
  LoweredFunc f{"bad", {cuda_test::buffer_param(A), cuda_test::buffer_param(B)}, cuda_test::grid_1d(n, 32, bad)};
  NDArray x = NDArray::empty({4}, Float(32)), y = NDArray::empty({4}, Float(32));
  expect_error([&] { interpret(f, {x, y}); }, {"bitwise_and needs integer arguments, got float32"});
  expect_error([&] { (void)build(f); }, {"bitwise_and needs integer arguments, got float32"});
  expect_error([&] { (void)build_cuda(f); }, {"bitwise_and needs integer arguments, got float32"});
}

// The CUDA source: te's shift helpers where the amount may be out of range, C's shifts
// (through the unsigned type for <<) where it is provably in [0, width).
TEST(MathBitwiseCuda, ShiftsUseHelpersOnlyWhereTheAmountMayBeOutOfRange) {
  Var n("n");
  Tensor X = placeholder({n}, Int(32), "X"), Y = placeholder({n}, Int(32), "Y");
  Tensor P = compute(
      {n}, [&](Expr i) { return (X(i) << Y(i)) + (X(i) >> (Y(i) & 31)); }, "P");
  Schedule s = create_schedule({P});
  auto [bx, tx] = s[P].split(P.axis(0), 64);
  s[P].bind(bx, thread_axis("blockIdx.x"));
  s[P].bind(tx, thread_axis("threadIdx.x"));
  std::string src = build_cuda(lower(s, {X, Y, P}, "shifts")).source();
  EXPECT_NE(src.find("te_shl_i32("), std::string::npos) << src;
  EXPECT_EQ(src.find("te_shr_i32("), std::string::npos) << src;
  EXPECT_NE(src.find(" >> (y & 31)"), std::string::npos) << src;  // y: Y[i], read once
}

TEST(MathBitwiseCuda, FastMathUsesCudasIntrinsics) {
  Var n("n");
  Tensor X = placeholder({n}, Float(32), "X");
  Tensor P = compute(
      {n}, [&](Expr i) { return sin(X(i)) + cos(X(i)) + log2(X(i)) + sigmoid(X(i)) + rsqrt(X(i)); }, "P");
  Schedule s = create_schedule({P});
  auto [bx, tx] = s[P].split(P.axis(0), 64);
  s[P].bind(bx, thread_axis("blockIdx.x"));
  s[P].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc f = lower(s, {X, P}, "fast");
  std::string exact = build_cuda(f).source();
  for (const char* name : {"sinf(", "cosf(", "log2f(", "expf(", "1.0f / sqrtf("})
    EXPECT_NE(exact.find(name), std::string::npos) << name << "\n" << exact;
  EXPECT_EQ(exact.find("__sinf"), std::string::npos);
  CudaOptions o;
  o.fast_math = true;
  std::string fast = build_cuda(f, o).source();
  for (const char* name : {"__sinf(", "__cosf(", "__log2f(", "__expf(", "rsqrtf("})
    EXPECT_NE(fast.find(name), std::string::npos) << name << "\n" << fast;
}

}  // namespace
