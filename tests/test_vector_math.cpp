// BuildOptions::fast_vector_math: vector exp as te's own polynomial. Checked against
// libm's expf over a dense sweep of float32 (within 2 ulp, subnormal results within 2 of
// their units; AVX-512's code and AVX2's bit for bit the same), exact at the special values, the same in float16 as
// libm rounded to half, never a libm call in the vector code; off, it is libm lane by lane, bit-identical to
// interpret().
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "te/te.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;

namespace {

// y = exp(x), vectors of 16 lanes (with a scalar tail), in dtype t.
LoweredFunc vector_exp(DataType t, int64_t n) {
  Tensor X = placeholder({n}, t, "X");
  Tensor Y = compute(
      {n}, [&](Expr i) { return exp(X(i)); }, "Y");
  Schedule s = create_schedule({Y});
  auto [o, i] = s[Y].split(Y.axis(0), 16);
  s[Y].vectorize(i);
  (void)o;
  return lower(s, {X, Y}, "vexp");
}

int64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = std::numeric_limits<int32_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<int32_t>::min() - ib;
  return std::llabs(int64_t(ia) - int64_t(ib));
}

#if defined(__x86_64__)
// x86's generic exp (AVX2: the exponent built in two halves), where the host may take
// the AVX-512 one (vscalefps).
BuildOptions avx2_options() {
  BuildOptions o;
  o.target = Target("llvm -mcpu=x86-64-v3");
  return o;
}
#endif

}  // namespace

TEST(VectorMath, ExpIsWithinTwoUlpOfLibm) {
  std::vector<float> xs;
  for (float x = -110.0f; x <= 90.0f; x += 0.00731f) xs.push_back(x);
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.72283f, 88.72284f, -87.33654f, -103.97208f, -103.97209f,
                  -149.0f * 0.6931472f, 0.5f * 0.6931472f, -0.5f * 0.6931472f})
    xs.push_back(x);
  while (xs.size() % 16 != 3) xs.push_back(1.0f);  // a scalar tail too
  const int64_t n = int64_t(xs.size());
  auto run = [&](const BuildOptions& options) {
    Function f = build(vector_exp(Float(32), n), options)("vexp");
    NDArray out = NDArray::empty({n}, Float(32));
    f(NDArray::from_vector(xs, {n}), out);
    return out.to_vector<float>();
  };
  // The host's code (vscalefps scales by 2^n on AVX-512) and AVX2's (the exponent built
  // in two halves) give the same floats.
  std::vector<float> y = run({});
#if defined(__x86_64__)
  const std::vector<float> y_avx2 = run(avx2_options());
  for (size_t k = 0; k < xs.size(); ++k)
    ASSERT_EQ(std::memcmp(&y[k], &y_avx2[k], sizeof(float)), 0)
        << "exp(" << xs[k] << "): " << y[k] << " on the host, " << y_avx2[k] << " with AVX2";
#endif
  int64_t worst = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    const float want = std::exp(xs[k]);
    if (std::fpclassify(want) == FP_SUBNORMAL || want == 0) {
      ASSERT_LE(std::fabs(y[k] - want), 2 * std::numeric_limits<float>::denorm_min()) << "exp(" << xs[k] << ")";
      continue;
    }
    int64_t d = ulp_distance(y[k], want);
    worst = std::max(worst, d);
    ASSERT_LE(d, 2) << "exp(" << xs[k] << ") = " << y[k] << ", libm " << want;
  }
  RecordProperty("worst_ulp", int(worst));
}

TEST(VectorMath, ExpSpecialValuesAreExact) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xs = {0.0f,    -0.0f, inf,   -inf, nan,   200.0f, -200.0f, 89.0f,
                           -105.0f, 1.0f,  -1.0f, 2.0f, 10.0f, -10.0f, 50.0f,   -50.0f};
  // The host's code (vscalefps on AVX-512) and the generic one (AVX2 on x86).
  std::vector<std::pair<std::string, BuildOptions>> builds = {{"host", BuildOptions{}}};
#if defined(__x86_64__)
  builds.emplace_back("x86-64-v3", avx2_options());
#endif
  for (const auto& [name, options] : builds) {
    SCOPED_TRACE(name);
    Function f = build(vector_exp(Float(32), 16), options)("vexp");
    NDArray out = NDArray::empty({16}, Float(32));
    f(NDArray::from_vector(xs, {16}), out);
    std::vector<float> y = out.to_vector<float>();
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[1], 1.0f);
    EXPECT_EQ(y[2], inf);
    EXPECT_EQ(y[3], 0.0f);
    EXPECT_TRUE(std::isnan(y[4]));
    EXPECT_EQ(y[5], inf);
    EXPECT_EQ(y[6], 0.0f);
    EXPECT_EQ(y[7], inf);
    EXPECT_EQ(y[8], 0.0f);
  }
}

TEST(VectorMath, HalfExpMatchesLibmRoundedToHalf) {
  std::vector<float> xs;
  for (float x = -17.0f; x < 11.0f; x += 0.01f) xs.push_back(float(half(x)));
  while (xs.size() % 16) xs.push_back(0.0f);
  const int64_t n = int64_t(xs.size());
  std::vector<half> hx;
  for (float x : xs) hx.push_back(half(x));
  NDArray in = NDArray::empty({n}, Float(16)), out = NDArray::empty({n}, Float(16));
  std::memcpy(in.data(), hx.data(), hx.size() * sizeof(half));
  build(vector_exp(Float(16), n))("vexp")(in, out);
  const half* y = static_cast<const half*>(out.data());
  for (int64_t k = 0; k < n; ++k) {
    const float want = float(half(std::exp(xs[size_t(k)])));
    const float got = float(y[k]);
    // Rounding to half can differ by one half-ulp step where expf's value sits on a tie.
    ASSERT_LE(std::fabs(got - want), std::fabs(want) * 1e-3f + 1e-7f) << "exp(" << xs[size_t(k)] << ")";
  }
}

TEST(VectorMath, SigmoidUsesTheVectorExp) {
  std::vector<float> xs;
  for (float x = -30.0f; x < 30.0f; x += 0.013f) xs.push_back(x);
  while (xs.size() % 16) xs.push_back(0.0f);
  const int64_t n = int64_t(xs.size());
  Tensor X = placeholder({n}, Float(32), "X");
  Tensor Y = compute(
      {n}, [&](Expr i) { return sigmoid(X(i)); }, "Y");
  Schedule s = create_schedule({Y});
  auto [o, i] = s[Y].split(Y.axis(0), 16);
  s[Y].vectorize(i);
  (void)o;
  LoweredFunc f = lower(s, {X, Y}, "vsig");
  EXPECT_EQ(llvm_ir(f).find("@expf"), std::string::npos);
  NDArray out = NDArray::empty({n}, Float(32));
  build(f)("vsig")(NDArray::from_vector(xs, {n}), out);
  std::vector<float> y = out.to_vector<float>();
  for (size_t k = 0; k < xs.size(); ++k) {
    const float want = 1.0f / (1.0f + std::exp(-xs[k]));
    // exp's 2 ulp, then 1 + e and the division round (the reference's too).
    ASSERT_LE(ulp_distance(y[k], want), 5) << "sigmoid(" << xs[k] << ") = " << y[k] << ", libm " << want;
  }
}

TEST(VectorMath, NoLibmCallUnlessTurnedOff) {
  LoweredFunc f = vector_exp(Float(32), 64);
  BuildOptions fast;
  BuildOptions libm;
  libm.fast_vector_math = false;
  EXPECT_EQ(llvm_ir(f, true, fast).find("@expf"), std::string::npos) << llvm_ir(f, true, fast);
  EXPECT_NE(llvm_ir(f, true, libm).find("@expf"), std::string::npos);
  // Off, it is bit-identical to interpret().
  NDArray x = random_array<float>({64}, 3, -20, 20);
  expect_matches_interpreter(f, {x, NDArray::empty({64}, Float(32))}, 0, libm);
}
