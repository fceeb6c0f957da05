// Shared by the bfloat16 tests: PyTorch's golden data (tests/data/bfloat16), an
// independent reference for rounding to bfloat16, bit comparisons where any NaN equals any
// NaN, and the kernels every backend runs (as TE computes, scheduled by each test).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "te/te.h"

namespace te::bf16_test {

inline std::string golden(const std::string& name) { return std::string(TE_TEST_DATA_DIR) + "/bfloat16/" + name; }

// A golden bfloat16 array (its bits stored as uint16).
inline NDArray load_golden(const std::string& name) { return NDArray::load_npy(golden(name), BFloat(16)); }

inline bool is_nan_bits(uint16_t b) { return (b & 0x7fffu) > 0x7f80u; }
// The same bits, or NaNs both (NaN bits differ between PyTorch's paths and CUDA's).
inline bool same_bits(uint16_t a, uint16_t b) { return a == b || (is_nan_bits(a) && is_nan_bits(b)); }

// The bfloat16 nearest to d (ties to even; beyond the largest finite value's midpoint,
// infinity), found from the definition: the two neighbours of d and the distance to each.
inline uint16_t nearest_bfloat16_bits(double d) {
  if (std::isnan(d)) return 0x7fc0;
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double m = std::fabs(d);
  // Neighbours below and above among the non-negative bfloat16 values (bits 0..0x7f80).
  uint16_t lo = 0;
  for (uint16_t step = 0x4000; step > 0; step >>= 1)
    if (lo + step <= 0x7f80 && static_cast<double>(bfloat16::bfloat16_bits_to_float(lo + step)) <= m) lo += step;
  const double lo_v = bfloat16::bfloat16_bits_to_float(lo);
  if (lo_v == m || lo == 0x7f80) return sign | lo;
  // Above the largest finite value (0x7f7f) the next value counts as 2^128 for rounding.
  const double hi_v = lo == 0x7f7f ? std::ldexp(1.0, 128) : bfloat16::bfloat16_bits_to_float(lo + 1);
  const double below = m - lo_v, above = hi_v - m;  // exact: both are multiples of d's ulp
  const bool up = above < below || (above == below && (lo & 1));
  return sign | static_cast<uint16_t>(up ? lo + 1 : lo);
}

inline std::vector<uint16_t> bits_of(const NDArray& a) {
  std::vector<uint16_t> v(static_cast<size_t>(a.size()));
  if (!v.empty()) std::memcpy(v.data(), a.data(), v.size() * 2);
  return v;
}

// Expects two bfloat16 arrays to hold the same bits (NaN matching any NaN).
inline void expect_same_bits(const NDArray& expected, const NDArray& got, const std::string& what) {
  ASSERT_EQ(expected.dtype(), BFloat(16)) << what;
  ASSERT_EQ(got.dtype(), BFloat(16)) << what;
  ASSERT_EQ(expected.shape(), got.shape()) << what;
  std::vector<uint16_t> e = bits_of(expected), g = bits_of(got);
  int failures = 0;
  for (size_t k = 0; k < e.size() && failures < 8; ++k)
    if (!same_bits(e[k], g[k])) {
      ++failures;
      ADD_FAILURE() << what << ": element " << k << " is 0x" << std::hex << g[k] << " ("
                    << bfloat16::bfloat16_bits_to_float(g[k]) << "), expected 0x" << e[k] << " ("
                    << bfloat16::bfloat16_bits_to_float(e[k]) << ")" << std::dec;
    }
}

// The golden elementwise kernel: add, sub, mul, div of two (4, 64) bfloat16 tensors.
struct GoldenOps {
  Tensor a, b, add, sub, mul, div;
  std::vector<Tensor> args() const { return {a, b, add, sub, mul, div}; }
  std::vector<Tensor> outputs() const { return {add, sub, mul, div}; }
};
inline GoldenOps golden_ops() {
  GoldenOps g;
  g.a = placeholder({4, 64}, BFloat(16), "a");
  g.b = placeholder({4, 64}, BFloat(16), "b");
  auto op = [&](const char* name, Expr (*f)(Expr, Expr)) {
    return compute(
        {4, 64}, [&](Expr i, Expr j) { return f(g.a(i, j), g.b(i, j)); }, name);
  };
  g.add = op("add", [](Expr x, Expr y) { return x + y; });
  g.sub = op("sub", [](Expr x, Expr y) { return x - y; });
  g.mul = op("mul", [](Expr x, Expr y) { return x * y; });
  g.div = op("div", [](Expr x, Expr y) { return x / y; });
  return g;
}
// Its arguments: PyTorch's inputs and empty outputs.
inline std::vector<Argument> golden_ops_args() {
  std::vector<Argument> args = {load_golden("a.npy"), load_golden("b.npy")};
  for (int k = 0; k < 4; ++k) args.push_back(NDArray::empty({4, 64}, BFloat(16)));
  return args;
}
inline const char* const kGoldenOutputs[] = {"add.npy", "sub.npy", "mul.npy", "div.npy"};

// Conversions into bfloat16 from every type, out of it into every type, and bfloat16
// arithmetic and intrinsics, over n elements (one stage per result).
struct ConversionOps {
  Tensor f32, i32, i64, u8, f64, f16;  // inputs
  std::vector<Tensor> outputs;         // from_* (bfloat16), then to_* and math
  std::vector<Tensor> args() const {
    std::vector<Tensor> a = {f32, i32, i64, u8, f64, f16};
    a.insert(a.end(), outputs.begin(), outputs.end());
    return a;
  }
};
inline ConversionOps conversion_ops(int64_t n) {
  ConversionOps c;
  c.f32 = placeholder({n}, Float(32), "f32");
  c.i32 = placeholder({n}, Int(32), "i32");
  c.i64 = placeholder({n}, Int(64), "i64");
  c.u8 = placeholder({n}, UInt(8), "u8");
  c.f64 = placeholder({n}, Float(64), "f64");
  c.f16 = placeholder({n}, Float(16), "f16");
  auto out = [&](const std::string& name, std::function<Expr(Expr)> f) {
    c.outputs.push_back(compute(
        {n}, [&](Expr i) { return f(i); }, name));
  };
  const DataType bf = BFloat(16);
  out("from_f32", [&](Expr i) { return cast(bf, c.f32(i)); });
  out("from_i32", [&](Expr i) { return cast(bf, c.i32(i)); });
  out("from_i64", [&](Expr i) { return cast(bf, c.i64(i)); });
  out("from_u8", [&](Expr i) { return cast(bf, c.u8(i)); });
  out("from_f64", [&](Expr i) { return cast(bf, c.f64(i)); });
  out("from_f16", [&](Expr i) { return cast(bf, c.f16(i)); });
  auto y = [&](Expr i) { return cast(bf, c.f32(i)); };
  out("to_i8", [&](Expr i) { return cast(Int(8), y(i)); });
  out("to_u16", [&](Expr i) { return cast(UInt(16), y(i)); });
  out("to_i32", [&](Expr i) { return cast(Int(32), y(i)); });
  out("to_f16", [&](Expr i) { return cast(Float(16), y(i)); });
  out("to_f32", [&](Expr i) { return cast(Float(32), y(i)); });
  out("to_f64", [&](Expr i) { return cast(Float(64), y(i)); });
  out("to_bool", [&](Expr i) { return cast(Bool(), y(i)); });
  out("math", [&](Expr i) {
    Expr v = y(i), w = cast(bf, c.f16(i));
    return sqrt(abs(v)) + floor(v * make_const(bf, 0.3)) - max(v, w) * min(v, w) / make_const(bf, 7.0) +
           select(v > w, fma(v, w, v), v - w);
  });
  out("transcendental", [&](Expr i) { return exp(y(i) / make_const(bf, 64.0)) + tanh(y(i)); });
  out("mixed", [&](Expr i) { return y(i) * 3 + cast(bf, c.f16(i)) + c.f16(i); });  // f16 + bf16 is float32
  return c;
}

// Inputs over every path of every conversion (n = 32): ties and near-ties of float ->
// bfloat16, integers that round twice through float, overflow, NaN, subnormals.
inline std::vector<Argument> conversion_args(const ConversionOps& c) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto f = [](uint32_t bits) {
    float x;
    std::memcpy(&x, &bits, 4);
    return x;
  };
  std::vector<float> f32 = {
      0.0f,          -0.0f,      1.0f,    -2.5f,     f(0x3f808000), f(0x3f818000), f(0x3f808001), f(0x7f7fffff),
      f(0x00018000), 300.7f,     -129.5f, 70000.0f,  -1e9f,         inf,           -inf,          nan,
      65519.0f,      1e-40f,     0.3f,    255.9f,    -0.75f,        1e20f,         3.140625f,     42.0f,
      -7.0f,         0.0078125f, 128.5f,  -33000.0f, 2.0f,          9.5f,          -100.25f,      5e-39f};
  std::vector<int32_t> i32 = {0,       1,        -1,        16842753,   -16842753, 16908289, INT32_MAX, INT32_MIN,
                              257,     255,      65535,     65537,      100000,    -99999,   16777217,  33619969,
                              7,       8,        9,         0x7fff8000, 511,       513,      -257,      -513,
                              1 << 30, 12345678, -12345678, 3,          4,         5,        6,         10};
  std::vector<int64_t> i64 = {0,
                              1,
                              -1,
                              INT64_MIN,
                              INT64_MAX,
                              (int64_t{1} << 40) + (int64_t{1} << 32),
                              16842753,
                              (int64_t{1} << 52) + (int64_t{1} << 44) + 1,
                              -((int64_t{1} << 52) + (int64_t{1} << 44)),
                              257,
                              513,
                              1025,
                              65537,
                              99,
                              -99,
                              1000000007,
                              3,
                              4,
                              5,
                              6,
                              7,
                              8,
                              9,
                              10,
                              11,
                              12,
                              13,
                              14,
                              15,
                              16,
                              17,
                              18};
  std::vector<uint8_t> u8(32);
  for (size_t k = 0; k < u8.size(); ++k) u8[k] = static_cast<uint8_t>(k * 37 + 1);
  std::vector<double> f64 = {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30),  // rounds up once, down through float
                             1.0 + std::ldexp(1.0, -8),
                             -(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)),
                             1e300,
                             -1e300,
                             1e-300,
                             std::nan(""),
                             std::numeric_limits<double>::infinity(),
                             0.1,
                             -0.2,
                             3.3,
                             4e38,
                             3.3895313892515355e38,
                             3.3895313892515354e38,
                             1e-45,
                             7.0,
                             -0.0,
                             2.5,
                             1e10,
                             123.456,
                             0.5,
                             0.25,
                             -8.0,
                             1e-10,
                             1e5,
                             6.0,
                             7.5,
                             255.5,
                             1023.0,
                             2e9,
                             -3e9,
                             1.5};
  std::vector<half> f16(32);
  for (size_t k = 0; k < f16.size(); ++k) f16[k] = half(static_cast<float>(k) * 13.37f - 150.0f);
  f16[0] = half::from_bits(0x3c01);  // 1 + 2^-10: between two bfloat16 values
  f16[1] = half::from_bits(0x0001);  // the smallest float16 subnormal
  f16[2] = half::from_bits(0x7bff);  // 65504
  f16[3] = half::from_bits(0xfc00);  // -inf
  const int64_t n = 32;
  std::vector<Argument> args = {NDArray::from_vector(f32, {n}), NDArray::from_vector(i32, {n}),
                                NDArray::from_vector(i64, {n}), NDArray::from_vector(u8, {n}),
                                NDArray::from_vector(f64, {n}), NDArray::from_vector(f16, {n})};
  for (const Tensor& t : c.outputs) args.push_back(NDArray::empty({n}, t.dtype()));
  return args;
}

// A float rounded to bfloat16 and back (each bfloat16 operation's last step).
inline float r16(float x) { return static_cast<float>(bfloat16(x)); }

// Saturating float -> integer (NaN -> 0), te's cast.
template <typename T>
T saturate(float v) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(static_cast<double>(v));
  if (t <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (t >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(t);
}

// Checks the results of conversion_ops (args after the call) against plain C++.
inline void expect_conversions_match_reference(const std::vector<Argument>& args, const std::string& what) {
  const std::vector<float> f32 = args[0].array().to_vector<float>();
  const std::vector<int32_t> i32 = args[1].array().to_vector<int32_t>();
  const std::vector<int64_t> i64 = args[2].array().to_vector<int64_t>();
  const std::vector<uint8_t> u8 = args[3].array().to_vector<uint8_t>();
  const std::vector<double> f64 = args[4].array().to_vector<double>();
  const std::vector<half> f16 = args[5].array().to_vector<half>();
  auto out = [&](size_t k) { return args[6 + k].array(); };
  auto bf = [&](size_t k) { return bits_of(out(k)); };
  const std::vector<uint16_t> from_f32 = bf(0), from_i32 = bf(1), from_i64 = bf(2), from_u8 = bf(3), from_f64 = bf(4),
                              from_f16 = bf(5);
  const std::vector<int8_t> to_i8 = out(6).to_vector<int8_t>();
  const std::vector<uint16_t> to_u16 = out(7).to_vector<uint16_t>();
  const std::vector<int32_t> to_i32 = out(8).to_vector<int32_t>();
  const std::vector<half> to_f16 = out(9).to_vector<half>();
  const std::vector<float> to_f32 = out(10).to_vector<float>();
  const std::vector<double> to_f64 = out(11).to_vector<double>();
  const std::vector<bool> to_bool = out(12).to_vector<bool>();
  const std::vector<uint16_t> math = bf(13), transcendental = bf(14);
  const std::vector<float> mixed = out(15).to_vector<float>();
  auto same_float = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (size_t k = 0; k < f32.size(); ++k) {
    SCOPED_TRACE(what + ", element " + std::to_string(k));
    EXPECT_TRUE(same_bits(from_f32[k], nearest_bfloat16_bits(f32[k]))) << f32[k];
    EXPECT_EQ(from_i32[k], nearest_bfloat16_bits(i32[k])) << i32[k];
    EXPECT_EQ(from_i64[k], nearest_bfloat16_bits(static_cast<double>(i64[k]))) << i64[k];
    EXPECT_EQ(from_u8[k], nearest_bfloat16_bits(u8[k]));
    EXPECT_TRUE(same_bits(from_f64[k], nearest_bfloat16_bits(f64[k]))) << f64[k];
    const float h = static_cast<float>(f16[k]);
    EXPECT_EQ(from_f16[k], nearest_bfloat16_bits(h)) << h;
    const float v = bfloat16::bfloat16_bits_to_float(nearest_bfloat16_bits(f32[k]));
    const float w = bfloat16::bfloat16_bits_to_float(nearest_bfloat16_bits(h));
    EXPECT_EQ(to_i8[k], saturate<int8_t>(v)) << v;
    EXPECT_EQ(to_u16[k], saturate<uint16_t>(v)) << v;
    EXPECT_EQ(to_i32[k], saturate<int32_t>(v)) << v;
    EXPECT_TRUE(same_float(static_cast<float>(to_f16[k]), static_cast<float>(half(v)))) << v;
    EXPECT_TRUE(same_float(to_f32[k], v));
    EXPECT_TRUE(same_float(to_f64[k], v));
    EXPECT_EQ(to_bool[k], v != 0.0f);  // NaN is true
    // Every bfloat16 operation rounds its float result once; max/min are `a > b ? a : b`.
    const float first = r16(r16(std::sqrt(std::fabs(v))) + r16(std::floor(r16(v * r16(0.3f)))));
    const float mx = v > w ? v : w, mn = v < w ? v : w;
    const float second = r16(r16(mx * mn) / 7.0f);
    const float chosen = v > w ? r16(std::fma(v, w, v)) : r16(v - w);
    EXPECT_TRUE(same_bits(math[k], bfloat16(r16(r16(first - second) + chosen)).bits)) << v << ", " << w;
    const float t = r16(r16(std::exp(r16(v / 64.0f))) + r16(std::tanh(v)));
    EXPECT_TRUE(same_bits(transcendental[k], bfloat16(t).bits)) << v;
    const float sum16 = r16(r16(v * 3.0f) + w);
    EXPECT_TRUE(same_float(mixed[k], sum16 + h)) << v << ", " << h;  // bfloat16 + float16: float32
  }
}

}  // namespace te::bf16_test
