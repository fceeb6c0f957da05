// te::ops::gelu, rotary_embedding, int4_at / unpack_int4 / dequantize_int4: their errors,
// and the options and dtypes that the PyTorch golden test (test_torch_golden.cpp) does not
// reach, through interpret() against C++ references written here.
#include <gtest/gtest.h>

#include <te/ops/activation.h>
#include <te/ops/int4.h>
#include <te/ops/rotary.h>
#include <te/te.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "test_util.h"

namespace te {
namespace {

// ---- Errors ----

TEST(LlmOpsErrors, GeluNamesTheTypeAndTheApproximation) {
  Tensor i = placeholder({4}, Int(32), "I"), f = placeholder({4}, Float(32), "F");
  expect_error([&] { ops::gelu(i); }, {"gelu: the input must be float16, bfloat16, float32 or float64, got int32"});
  expect_error([&] { ops::gelu(f, "erf"); }, {"gelu: approximate must be \"none\" or \"tanh\", got \"erf\""});
  expect_error([&] { ops::gelu(Expr(Var("n"))); }, {"gelu: expects a floating-point argument, got int32"});
  expect_error([&] { ops::gelu(Tensor()); }, {"gelu: the input tensor is undefined"});
}

TEST(LlmOpsErrors, RotaryChecksAxesExtentOffsetAndBase) {
  Tensor x = placeholder({8, 2, 6}, Float(32), "x");
  expect_error([&] { ops::rotary_embedding(placeholder({8}, Float(32), "v")); },
               {"rotary_embedding: the input needs a position axis and a last (rotary) axis, got 1 axis"});
  expect_error(
      [&] {
        ops::rotary_embedding(placeholder({8, 4}, Int(8), "v"));
      },
      {"must be float16, bfloat16, float32 or float64, got int8"});
  ops::RotaryOptions o;
  o.position_axis = 2;
  expect_error([&] { ops::rotary_embedding(x, o); }, {"position_axis 2 must be in [0, 2)", "not the last axis"});
  o.position_axis = -1;
  expect_error([&] { ops::rotary_embedding(x, o); }, {"position_axis -1 must be in [0, 2)"});
  expect_error(
      [&] {
        ops::rotary_embedding(placeholder({8, 5}, Float(32), "odd"));
      },
      {"the last axis must have an even extent, got 5"});
  ops::RotaryOptions f;
  f.position_offset = Var("off", Float(32));
  expect_error([&] { ops::rotary_embedding(x, f); }, {"position_offset must be an integer, got float32"});
  ops::RotaryOptions b;
  b.base = 0;
  expect_error([&] { ops::rotary_embedding(x, b); }, {"base must be > 0, got 0"});
}

TEST(LlmOpsErrors, Int4ChecksTypesGroupsAndShapes) {
  Tensor p = placeholder({4, 16}, UInt(8), "P"), s = placeholder({4, 1}, Float(32), "S");
  Tensor z = placeholder({4, 1}, Int(8), "Z");
  expect_error([&] { ops::unpack_int4(placeholder({4}, Int(16), "H")); },
               {"unpack_int4: packed int4 must be uint8 or int8 (two per byte) or int32 (eight per word), got int16"});
  expect_error([&] { ops::dequantize_int4(p, s, z, 0); }, {"group_size must be > 0, got 0"});
  expect_error([&] { ops::dequantize_int4(p, z, z, 32); }, {"scales must be a float tensor, got int8"});
  expect_error([&] { ops::dequantize_int4(p, s, s, 32); }, {"zeros must be integers (or undefined), got float32"});
  expect_error([&] { ops::dequantize_int4(p, placeholder({4}, Float(32), "S1"), Tensor(), 32); },
               {"S1 has 1 axes, packed has 2"});
  expect_error([&] { ops::dequantize_int4(p, s, z, 16); },
               {"dequantize_int4: S has extent 1 on axis 1, expected 2 (group_size 16)"});
  expect_error(
      [&] {
        ops::dequantize_int4(p, s, placeholder({3, 1}, Int(8), "Z3"), 32);
      },
      {"Z3 has extent 3 on axis 0, expected 4"});
  expect_error(
      [&] {
        ops::dequantize_int4(p, placeholder({4, 2}, Float(32), "S2"), Tensor(), 24);
      },
      {"32 values per row are not a whole number of groups of 24"});
  expect_error([&] { ops::int4_at(p, {Expr(0)}); }, {"int4_at: 1 indices for a tensor of 2 axes"});
  expect_error([&] { ops::int4_at(placeholder({}, Int(32), "W0"), {}); },
               {"int4_at: the packed tensor needs at least one axis"});
}

// ---- Values ----

// gelu in float64 and float16 (computed in float32, rounded once) against C++.
TEST(LlmOps, GeluInFloat64AndFloat16) {
  std::vector<double> xs;
  for (int i = 0; i < 50; ++i) xs.push_back(-6.0 + 0.25 * i);
  for (const char* form : {"none", "tanh"}) {
    const bool tanh_form = std::string(form) == "tanh";
    auto ref = [&](double x) {
      return tanh_form ? 0.5 * x * (1 + std::tanh(0.79788456080286535588 * (x + 0.044715 * (x * x * x))))
                       : x * 0.5 * (1 + std::erf(x * 0.70710678118654752440));
    };
    Tensor d = placeholder({50}, Float(64), "D");
    NDArray out = NDArray::empty({50}, Float(64));
    Tensor gd = ops::gelu(d, form);
    interpret(lower(create_schedule({gd}), {d, gd}, "g64"), {NDArray::from_vector(xs, {50}), out});
    std::vector<double> got = out.to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_NEAR(got[i], ref(xs[i]), 1e-15 * (1 + std::fabs(xs[i]))) << form << xs[i];

    Tensor h = placeholder({50}, Float(16), "H");
    Tensor gh = ops::gelu(h, form);
    EXPECT_EQ(gh.dtype(), Float(16));
    std::vector<half> hs;
    for (double x : xs) hs.push_back(half(static_cast<float>(x)));
    NDArray hout = NDArray::empty({50}, Float(16));
    interpret(lower(create_schedule({gh}), {h, gh}, "g16"), {NDArray::from_vector(hs, {50}), hout});
    std::vector<half> hg = hout.to_vector<half>();
    for (size_t i = 0; i < xs.size(); ++i)  // within one float16 rounding of the float64 value
      EXPECT_NEAR(static_cast<float>(hg[i]), ref(xs[i]), std::fabs(ref(xs[i])) / 1024 + 1e-6) << form << xs[i];
  }
}

// Fused into another compute: gelu(x + b) in one stage.
TEST(LlmOps, GeluExpressionFusesIntoACompute) {
  Tensor x = placeholder({6}, Float(32), "x"), b = placeholder({6}, Float(32), "b");
  Tensor y = compute(
      {6}, [&](Expr i) { return ops::gelu(x(i) + b(i), "tanh"); }, "y");
  std::vector<float> xs = {-3, -1, 0, 0.5f, 2, 7}, bs = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  NDArray out = NDArray::empty({6}, Float(32));
  interpret(lower(create_schedule({y}), {x, b, y}, "f"),
            {NDArray::from_vector(xs, {6}), NDArray::from_vector(bs, {6}), out});
  std::vector<float> got = out.to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i] + 0.5;
    EXPECT_NEAR(got[i], 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))), 1e-6);
  }
}

// LLaMA's (batch, heads, seq, dim) layout: positions on axis 2, a scalar offset, float64.
TEST(LlmOps, RotaryOnAnInnerPositionAxisWithAnOffset) {
  const int B = 2, H = 3, S = 5, D = 8, offset = 100;
  Tensor x = placeholder({B, H, S, D}, Float(64), "x");
  Var off("off");
  ops::RotaryOptions o;
  o.position_axis = 2;
  o.position_offset = off;
  o.base = 500;
  Tensor y = ops::rotary_embedding(x, o);
  std::vector<double> xs;
  for (int i = 0; i < B * H * S * D; ++i) xs.push_back(std::cos(1.7 * i));
  NDArray out = NDArray::empty({B, H, S, D}, Float(64));
  LoweredFunc f = lower(create_schedule({y}), {x, y}, "rope");
  ASSERT_EQ(f.params.size(), 3u);  // x, y, then the offset
  interpret(f, {NDArray::from_vector(xs, {B, H, S, D}), out, offset});
  std::vector<double> got = out.to_vector<double>();
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < S; ++s)
        for (int d = 0; d < D; ++d) {
          const size_t row = ((static_cast<size_t>(b) * H + h) * S + s) * D;
          const double angle = (s + offset) / std::pow(500.0, 2.0 * (d % (D / 2)) / D);
          const double partner = xs[row + (d + D / 2) % D];
          const double want = xs[row + d] * std::cos(angle) + (d < D / 2 ? -partner : partner) * std::sin(angle);
          EXPECT_NEAR(got[row + d], want, 1e-12) << b << " " << h << " " << s << " " << d;
        }
}

// Every nibble value in every position: 0x76543210 and 0xFEDCBA98 as int32 words and as
// bytes of uint8 and int8, signed and unsigned. The extents are int64, so the indices are:
// the shifts must still be 32-bit (an int64 amount once widened them, and << 28 kept the
// bits that it should push out).
TEST(LlmOps, Int4EveryNibbleInEveryPositionAndPacking) {
  const std::vector<int32_t> words = {0x76543210, static_cast<int32_t>(0xFEDCBA98u)};
  std::vector<uint8_t> ubytes;
  for (uint32_t w : {0x76543210u, 0xFEDCBA98u})
    for (int b = 0; b < 4; ++b) ubytes.push_back(static_cast<uint8_t>(w >> (8 * b)));
  std::vector<int8_t> sbytes(ubytes.begin(), ubytes.end());
  const std::vector<NDArray> packed = {NDArray::from_vector(words, {2}), NDArray::from_vector(ubytes, {8}),
                                       NDArray::from_vector(sbytes, {8})};
  for (const NDArray& a : packed) {
    for (bool is_signed : {true, false}) {
      SCOPED_TRACE(a.dtype().to_string() + (is_signed ? " signed" : " unsigned"));
      Tensor p = placeholder({a.shape()[0]}, a.dtype(), "P");
      ops::Int4Options o;
      o.signed_values = is_signed;
      Tensor q = ops::unpack_int4(p, o);
      ASSERT_TRUE(is_const_int(simplify(q.shape()[0]), 16));
      NDArray out = NDArray::empty({16}, Int(8));
      interpret(lower(create_schedule({q}), {p, q}, "unpack"), {a, out});
      std::vector<int8_t> want;
      for (int v = 0; v < 16; ++v) want.push_back(static_cast<int8_t>(is_signed && v >= 8 ? v - 16 : v));
      EXPECT_EQ(out.to_vector<int8_t>(), want);
    }
  }
}

// No zero points, float16 scales (the product rounded once to float16), groups of 4.
TEST(LlmOps, Int4DequantizationWithoutZeroPointsInFloat16) {
  Tensor p = placeholder({2, 1}, Int(32), "P"), s = placeholder({2, 2}, Float(16), "S");
  Tensor w = ops::dequantize_int4(p, s, Tensor(), 4);
  EXPECT_EQ(w.dtype(), Float(16));
  const std::vector<int32_t> words = {0x76543210, static_cast<int32_t>(0xFEDCBA98u)};
  const std::vector<half> scales = {half(0.5f), half(0.1f), half(3.0f), half(-0.25f)};
  NDArray out = NDArray::empty({2, 8}, Float(16));
  interpret(lower(create_schedule({w}), {p, s, w}, "dq"),
            {NDArray::from_vector(words, {2, 1}), NDArray::from_vector(scales, {2, 2}), out});
  std::vector<half> got = out.to_vector<half>();
  for (int r = 0; r < 2; ++r)
    for (int e = 0; e < 8; ++e) {
      const int nibble = (r * 8 + e) % 16, q = nibble >= 8 ? nibble - 16 : nibble;
      const half want(static_cast<float>(q) * static_cast<float>(scales[static_cast<size_t>(r * 2 + e / 4)]));
      EXPECT_EQ(got[static_cast<size_t>(r * 8 + e)].bits, want.bits) << r << " " << e;
    }
}

}  // namespace
}  // namespace te
