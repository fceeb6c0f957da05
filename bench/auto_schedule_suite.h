// The auto-scheduling suite's kernels as te computes (bench/bench_auto_schedule.cpp):
// each is the math alone, as a user who writes no schedule has it.
#pragma once
#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cpu.h>
#include <te/ops/normalization.h>
#include <te/te.h>

#include <functional>
#include <string>
#include <vector>

namespace te_bench {

struct SuiteKernel {
  std::string name;              // the group is "auto/<name>"
  std::vector<te::Tensor> args;  // inputs, then the output
  te::Tensor output;
  double work = 0;             // GFLOP or GB per call
  std::string unit;            // "GFLOP/s" or "GB/s"
  int default_iterations = 3;  // the default schedule is slow: few calls
  // te's hand-written schedule of the same kernel (its own tensors, the same argument
  // order); empty when te has none.
  std::function<te::LoweredFunc()> hand;
  // Per input: fills with values in [lo, hi).
  std::vector<std::pair<float, float>> ranges;
  // Inputs set once and reused (a model's weights): auto_schedule's constant_inputs, so
  // the rules may take them pretransformed, laid out once before the timing.
  std::vector<te::Tensor> constants;
};

inline SuiteKernel suite_sgemm(int n) {
  using namespace te;
  SuiteKernel k;
  k.name = "sgemm_" + std::to_string(n);
  Tensor A = placeholder({n, n}, Float(32), "A"), B = placeholder({n, n}, Float(32), "B");
  IterVar r = reduce_axis({0, n}, "k");
  Tensor C = compute(
      {n, n}, [&](Expr i, Expr j) { return sum(A(i, r) * B(r, j), {r}); }, "C");
  k.args = {A, B, C};
  k.output = C;
  k.work = 2.0 * n * n * n * 1e-9;
  k.unit = "GFLOP/s";
  k.default_iterations = 1;
  k.ranges = {{-1, 1}, {-1, 1}};
  return k;
}

inline SuiteKernel suite_bmm(int b, int m, int n, int kk) {
  using namespace te;
  SuiteKernel k;
  k.name = "bmm_" + std::to_string(b) + "x" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(kk);
  Tensor A = placeholder({b, m, kk}, Float(32), "A"), B = placeholder({b, kk, n}, Float(32), "B");
  IterVar r = reduce_axis({0, kk}, "k");
  Tensor C = compute(
      {b, m, n}, [&](Expr q, Expr i, Expr j) { return sum(A(q, i, r) * B(q, r, j), {r}); }, "C");
  k.args = {A, B, C};
  k.output = C;
  k.work = 2.0 * b * m * n * kk * 1e-9;
  k.unit = "GFLOP/s";
  k.default_iterations = 1;
  k.ranges = {{-1, 1}, {-1, 1}};
  return k;
}

// NCHW, 3x3, stride 1, zero padding 1 (the padding a stage of its own, as users write it).
inline SuiteKernel suite_conv2d(int c, int hw, int f) {
  using namespace te;
  SuiteKernel k;
  k.name = "conv2d_1x" + std::to_string(c) + "x" + std::to_string(hw) + "x" + std::to_string(hw) + "_3x3_" +
           std::to_string(f);
  Tensor data = placeholder({1, c, hw, hw}, Float(32), "data");
  Tensor weight = placeholder({f, c, 3, 3}, Float(32), "weight");
  Tensor pad = compute(
      {1, c, hw + 2, hw + 2},
      [&](Expr n, Expr ch, Expr y, Expr x) {
        return if_then_else(y >= 1 && y < hw + 1 && x >= 1 && x < hw + 1, data(n, ch, y - 1, x - 1), 0.0f);
      },
      "pad");
  IterVar rc = reduce_axis({0, c}, "rc"), ry = reduce_axis({0, 3}, "ry"), rx = reduce_axis({0, 3}, "rx");
  Tensor out = compute(
      {1, f, hw, hw},
      [&](Expr n, Expr o, Expr y, Expr x) {
        return sum(pad(n, rc, y + ry, x + rx) * weight(o, rc, ry, rx), {rc, ry, rx});
      },
      "conv");
  k.args = {data, weight, out};
  k.output = out;
  k.work = 2.0 * f * c * 9 * hw * hw * 1e-9;
  k.unit = "GFLOP/s";
  k.ranges = {{-1, 1}, {-1, 1}};
  return k;
}

inline SuiteKernel suite_depthwise(int c, int hw) {
  using namespace te;
  SuiteKernel k;
  k.name = "depthwise_1x" + std::to_string(c) + "x" + std::to_string(hw) + "x" + std::to_string(hw) + "_3x3";
  Tensor data = placeholder({1, c, hw, hw}, Float(32), "data");
  Tensor weight = placeholder({c, 3, 3}, Float(32), "weight");
  Tensor pad = compute(
      {1, c, hw + 2, hw + 2},
      [&](Expr n, Expr ch, Expr y, Expr x) {
        return if_then_else(y >= 1 && y < hw + 1 && x >= 1 && x < hw + 1, data(n, ch, y - 1, x - 1), 0.0f);
      },
      "pad");
  IterVar ry = reduce_axis({0, 3}, "ry"), rx = reduce_axis({0, 3}, "rx");
  Tensor out = compute(
      {1, c, hw, hw},
      [&](Expr n, Expr ch, Expr y, Expr x) {
        return sum(pad(n, ch, y + ry, x + rx) * weight(ch, ry, rx), {ry, rx});
      },
      "dw");
  k.args = {data, weight, out};
  k.output = out;
  k.work = 2.0 * c * 9 * hw * hw * 1e-9;
  k.unit = "GFLOP/s";
  k.ranges = {{-1, 1}, {-1, 1}};
  return k;
}

inline SuiteKernel suite_softmax(int rows, int cols) {
  using namespace te;
  SuiteKernel k;
  k.name = "softmax_" + std::to_string(rows) + "x" + std::to_string(cols);
  Tensor x = placeholder({rows, cols}, Float(32), "x");
  Tensor y = ops::softmax(x);
  k.args = {x, y};
  k.output = y;
  k.work = 2.0 * rows * cols * 4 * 1e-9;  // one read, one write
  k.unit = "GB/s";
  k.ranges = {{-4, 4}};
  return k;
}

inline SuiteKernel suite_layer_norm(int rows, int cols) {
  using namespace te;
  SuiteKernel k;
  k.name = "layer_norm_" + std::to_string(rows) + "x" + std::to_string(cols);
  Tensor x = placeholder({rows, cols}, Float(32), "x");
  Tensor gamma = placeholder({cols}, Float(32), "gamma"), beta = placeholder({cols}, Float(32), "beta");
  Tensor y = ops::layer_norm(x, gamma, beta);
  k.args = {x, gamma, beta, y};
  k.output = y;
  k.work = 2.0 * rows * cols * 4 * 1e-9;
  k.unit = "GB/s";
  k.ranges = {{-3, 3}, {-1, 1}, {-1, 1}};
  return k;
}

// Bilinear, zeros, align_corners = false; a random grid over the image.
inline SuiteKernel suite_grid_sample(int c, int hw) {
  using namespace te;
  SuiteKernel k;
  k.name = "grid_sample_1x" + std::to_string(c) + "x" + std::to_string(hw) + "x" + std::to_string(hw);
  auto make = [c, hw](Tensor* data, Tensor* grid) {
    *data = placeholder({1, c, hw, hw}, Float(32), "data");
    *grid = placeholder({1, hw, hw, 2}, Float(32), "grid");
    return ops::grid_sample(*data, *grid, ops::GridSampleOptions{});
  };
  Tensor data, grid;
  Tensor out = make(&data, &grid);
  k.args = {data, grid, out};
  k.output = out;
  k.work = 2.0 * c * hw * hw * 4 * 1e-9;  // the output written, the taps read (about as much)
  k.unit = "GB/s";
  k.ranges = {{-1, 1}, {-1, 1}};
  k.hand = [make] {
    Tensor d, g;
    Tensor o = make(&d, &g);
    Schedule s = create_schedule({o});
    ops::schedule_grid_sample_cpu(s, o);
    return lower(s, {d, g, o}, "grid_sample_hand");
  };
  return k;
}

// out = relu(transpose(A) + B): three element-wise stages a user writes one by one.
inline SuiteKernel suite_transpose_add_relu(int n) {
  using namespace te;
  SuiteKernel k;
  k.name = "transpose_add_relu_" + std::to_string(n);
  Tensor A = placeholder({n, n}, Float(32), "A"), B = placeholder({n, n}, Float(32), "B");
  Tensor T = compute(
      {n, n}, [&](Expr i, Expr j) { return A(j, i); }, "T");
  Tensor S = compute(
      {n, n}, [&](Expr i, Expr j) { return T(i, j) + B(i, j); }, "S");
  Tensor out = compute(
      {n, n}, [&](Expr i, Expr j) { return max(S(i, j), 0.0f); }, "out");
  k.args = {A, B, out};
  k.output = out;
  k.work = 3.0 * n * n * 4 * 1e-9;
  k.unit = "GB/s";
  k.ranges = {{-1, 1}, {-1, 1}};
  return k;
}

}  // namespace te_bench
