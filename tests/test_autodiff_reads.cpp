// te::gradient of reads at other than the loop variables: shifted, strided, diagonal and
// constant indices and convolution windows (solved: the gather form, a plain compute), and
// reads at computed positions (an index read from memory, a division), whose adjoint is a
// scatter-add. Central differences in float64 decide.
#include <gtest/gtest.h>

#include <vector>

#include "autodiff_check.h"
#include "te/autodiff.h"
#include "te/auto_schedule.h"
#include "te/cuda.h"
#include "te/te.h"

using namespace te;
using autodiff_check::expect_gradient_matches;
using autodiff_check::random_array;

namespace {

TEST(AutodiffReads, ShiftedStridedDiagonalAndConstantIndices) {
  Tensor A = placeholder({9}, Float(64), "A"), M = placeholder({4, 4}, Float(64), "M");
  Tensor Y = compute(
      {4}, [&](Expr i) { return A(i + 1) * A(2 * i) + M(i, i) * M(i, 0) + A(8 - i) + M(3 - i, i) * A(i + 1); }, "Y");
  expect_gradient_matches(Y, {A, M}, {random_array({9}, 1), random_array({4, 4}, 2)});
  // Every adjoint is the gather form: no scatter.
  for (const Tensor& d : gradient(Y, {A, M})) EXPECT_FALSE(d.op()->is_scatter()) << d.name();
}

TEST(AutodiffReads, ConvolutionWindowsStridesAndDilations) {
  // NCHW conv2d, stride 2 along H and dilation 2 along W.
  Tensor X = placeholder({2, 3, 9, 8}, Float(64), "X"), W = placeholder({4, 3, 3, 2}, Float(64), "W");
  IterVar c = reduce_axis({0, 3}, "c"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 2}, "kx");
  Tensor Y = compute(
      {2, 4, 4, 6},
      [&](Expr n, Expr f, Expr y, Expr x) {
        return sum(X(n, c, y * 2 + ky, x + kx * 2) * W(f, c, ky, kx), {c, ky, kx});
      },
      "Y");
  Tensor H = placeholder({2, 4, 4, 6}, Float(64), "H");
  expect_gradient_matches(Y, {X, W}, {random_array({2, 3, 9, 8}, 3), random_array({4, 3, 3, 2}, 4)}, H,
                          random_array({2, 4, 4, 6}, 5));
  const std::vector<Tensor> d = gradient(Y, {X, W}, H);
  // dX sums over the filters and the window (f, ky, kx), not over the output's rows.
  ASSERT_FALSE(d[0].op()->is_scatter());
  EXPECT_EQ(d[0].op()->reduce_axis.size(), 3u);
  // A 1-D window summed over its taps.
  Tensor B = placeholder({7}, Float(64), "B"), K = placeholder({3}, Float(64), "K");
  IterVar k = reduce_axis({0, 3}, "k");
  Tensor Z = compute(
      {5}, [&](Expr i) { return sum(B(i + k) * K(k), {k}); }, "Z");
  expect_gradient_matches(Z, {B, K}, {random_array({7}, 6), random_array({3}, 7)});
}

TEST(AutodiffReads, ConvolutionWindowsReadAZeroPaddedGradient) {
  // Unstrided (dilated along W): dX is a convolution of the output gradient padded by
  // the window's reach, with no condition on its reduction; strided, the reach (every
  // second row) stays the reduction's condition.
  Tensor X = placeholder({2, 3, 7, 9}, Float(64), "X"), W = placeholder({4, 3, 3, 2}, Float(64), "W");
  IterVar c = reduce_axis({0, 3}, "c"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 2}, "kx");
  Tensor Y = compute(
      {2, 4, 5, 7},
      [&](Expr n, Expr f, Expr y, Expr x) {
        return sum(X(n, c, y + ky, x + kx * 2) * W(f, c, ky, kx), {c, ky, kx});
      },
      "Y");
  Tensor H = placeholder({2, 4, 5, 7}, Float(64), "H");
  expect_gradient_matches(Y, {X, W}, {random_array({2, 3, 7, 9}, 31), random_array({4, 3, 3, 2}, 32)}, H,
                          random_array({2, 4, 5, 7}, 33));
  const Tensor dx = gradient(Y, {X}, H)[0];
  const auto* red = dx.op()->body.as<ReduceNode>();
  ASSERT_NE(red, nullptr);
  EXPECT_FALSE(red->condition.defined());
  ASSERT_EQ(dx.op()->inputs.size(), 2u);
  const Operation& padded = dx.op()->inputs[0]->name == "H_padded" ? dx.op()->inputs[0] : dx.op()->inputs[1];
  ASSERT_EQ(padded->name, "H_padded");
  // Rows reach 2 beyond each edge (3 taps), columns 2 (2 taps, dilation 2).
  EXPECT_EQ(*as_const_int(padded->shape[2]), 5 + 2 + 2);
  EXPECT_EQ(*as_const_int(padded->shape[3]), 7 + 2 + 2);

  Tensor S = compute(
      {2, 4, 3, 7},
      [&](Expr n, Expr f, Expr y, Expr x) {
        return sum(X(n, c, y * 2 + ky, x + kx) * W(f, c, ky, kx), {c, ky, kx});
      },
      "S");
  const Tensor ds = gradient(S, {X})[0];
  ASSERT_NE(ds.op()->body.as<ReduceNode>(), nullptr);
  EXPECT_TRUE(ds.op()->body.as<ReduceNode>()->condition.defined());
}

TEST(AutodiffReads, GathersBecomeScatterAdds) {
  // Repeated indices: their contributions add up.
  Tensor A = placeholder({5}, Float(64), "A"), B = placeholder({6}, Float(64), "B");
  Tensor I = placeholder({6}, Int(32), "I");
  Tensor Y = compute(
      {6}, [&](Expr i) { return A(I(i)) * B(i) + A(I(i)) * A(I(i)); }, "Y");
  NDArray idx = NDArray::from_vector(std::vector<int32_t>{4, 1, 1, 0, 4, 4}, {6});
  expect_gradient_matches(Y, {A, B}, {random_array({5}, 8), random_array({6}, 9)}, Tensor(), NDArray(), {I}, {idx});
  const std::vector<Tensor> d = gradient(Y, {A, B});
  EXPECT_TRUE(d[0].op()->is_scatter() || !d[0].op()->inputs.empty());
  // Nearest upsampling (i / 2) and a gather inside a conditional sum.
  Tensor U = compute(
      {10}, [&](Expr i) { return A(i / 2) * 3.0; }, "U");
  expect_gradient_matches(U, {A}, {random_array({5}, 10)});
  IterVar k = reduce_axis({0, 6}, "k");
  Tensor S = compute(
      {2}, [&](Expr r) { return sum(A(I(k)) * B(k), {k}, k % 2 == r); }, "S");
  expect_gradient_matches(S, {A, B}, {random_array({5}, 11), random_array({6}, 12)}, Tensor(), NDArray(), {I}, {idx});
}

// float32 data gathered: the scatter-add accumulates in float32, the adjoint is float32.
TEST(AutodiffReads, ScatterAddsRunOnTheJitEqualToInterpret) {
  Tensor A = placeholder({64}, Float(32), "A"), I = placeholder({256, 8}, Int(32), "I");
  Tensor Y = compute(
      {256, 8}, [&](Expr r, Expr c) { return A(I(r, c)) * 2.0f; }, "Y");
  Tensor H = placeholder({256, 8}, Float(32), "H");
  Tensor dA = gradient(Y, {A}, H)[0];
  std::vector<int32_t> idx(256 * 8);
  std::vector<float> h(256 * 8);
  for (size_t i = 0; i < idx.size(); ++i) {
    idx[i] = static_cast<int32_t>((i * 37) % 64);
    h[i] = static_cast<float>(static_cast<int>(i % 7) - 3);  // small integers: exact in any order
  }
  NDArray a = NDArray::empty({64}, Float(32)), ia = NDArray::from_vector(idx, {256, 8}),
          ha = NDArray::from_vector(h, {256, 8});
  NDArray want = NDArray::empty({64}, Float(32));
  interpret(lower(create_schedule({dA}), {A, I, H, dA}, "dA"), {a, ia, ha, want});
  std::vector<float> expect(64, 0.0f);
  for (size_t i = 0; i < idx.size(); ++i) expect[static_cast<size_t>(idx[i])] += 2.0f * h[i];
  EXPECT_EQ(want.to_vector<float>(), expect);
  // The scatter's rows in parallel: atomic adds.
  Schedule s = create_schedule({dA});
  const Tensor scatter = dA.op()->is_scatter() ? dA : Tensor(dA.op()->inputs[0]);
  ASSERT_TRUE(scatter.op()->is_scatter());
  s[scatter].parallel(scatter.op()->axis[0]);
  LoweredFunc f = lower(s, {A, I, H, dA}, "dA");
  EXPECT_NE(to_string(f.body).find("// atomic"), std::string::npos) << to_string(f.body);
  NDArray got = NDArray::empty({64}, Float(32));
  build(f)("dA")(a, ia, ha, got);
  EXPECT_EQ(got.to_vector<float>(), expect);
}

// GradientOptions::deterministic: auto_schedule's CPU and CUDA schedules of a gather's
// adjoint add without atomics (parallel only over the axes that index it directly).
TEST(AutodiffReads, DeterministicScatterAddsNeedNoAtomics) {
  Tensor A = placeholder({4, 64}, Float(32), "A"), I = placeholder({4, 256}, Int(32), "I");
  Tensor Y = compute(
      {4, 256}, [&](Expr b, Expr r) { return A(b, I(b, r)) * 2.0f; }, "Y");
  GradientOptions det;
  det.deterministic = true;
  for (bool deterministic : {false, true}) {
    SCOPED_TRACE(deterministic ? "deterministic" : "default");
    Tensor dA = gradient(Y, {A}, Tensor(), deterministic ? det : GradientOptions{})[0];
    ASSERT_TRUE(dA.op()->is_scatter());
    EXPECT_EQ(dA.op()->scatter_deterministic, deterministic);
    AutoScheduleOptions cpu;
    cpu.threads = 2;
    const std::string ir = to_string(lower(auto_schedule({dA}, cpu), {A, I, dA}, "dA"));
    EXPECT_EQ(ir.find("// atomic"), std::string::npos) << ir;  // parallel over the batch: its own rows
    AutoScheduleOptions cuda;
    cuda.target = Target("cuda");
    const std::string cu = build_cuda(lower(auto_schedule({dA}, cuda), {A, I, dA}, "dA")).source();
    EXPECT_EQ(cu.find("atomicAdd") != std::string::npos, !deterministic) << cu;
  }
}

}  // namespace
