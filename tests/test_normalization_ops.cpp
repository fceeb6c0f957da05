// te::ops::reduce_rows, softmax and layer_norm (include/te/ops/normalization.h): their
// CUDA schedules through interpret() (the emulation and nvcc run them in
// test_cuda_emulation / test_cuda_nvcc), the default schedule through interpret() and the
// JIT, all against plain C++; and the errors.
#include <gtest/gtest.h>

#include <te/ops/normalization.h>
#include <te/ops/normalization_cuda.h>

#include <cmath>

#include "test_lower_util.h"
#include "test_util.h"

namespace te {
namespace {

using lower_test::expect_close;

std::vector<float> softmax_reference(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> y;
  for (int64_t i = 0; i < rows; ++i) {
    const float* r = x.data() + i * cols;
    float m = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, r[j]);
    double e = 0;
    for (int64_t j = 0; j < cols; ++j) e += std::exp(static_cast<double>(r[j] - m));
    for (int64_t j = 0; j < cols; ++j) y.push_back(static_cast<float>(std::exp(static_cast<double>(r[j] - m)) / e));
  }
  return y;
}

std::vector<float> layer_norm_reference(const std::vector<float>& x, const std::vector<float>& g,
                                        const std::vector<float>& b, int64_t rows, int64_t cols, double eps) {
  std::vector<float> y;
  for (int64_t i = 0; i < rows; ++i) {
    const float* r = x.data() + i * cols;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < cols; ++j) mean += r[j];
    mean /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j) var += (r[j] - mean) * (r[j] - mean);
    var /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j)
      y.push_back(static_cast<float>((r[j] - mean) / std::sqrt(var + eps) * g[static_cast<size_t>(j)] +
                                     b[static_cast<size_t>(j)]));
  }
  return y;
}

TEST(NormalizationOps, SoftmaxCudaScheduleAndDefaultSchedule) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{3, 768}, {2, 4096}, {2, 100}, {1, 1}}) {
    Tensor x = placeholder({rows, cols}, Float(32), "x");
    Tensor y = ops::softmax(x);
    std::vector<float> xv = lower_test::values(rows * cols, 2);
    for (float& v : xv) v *= 8.0f;  // large enough that skipping the max would overflow nothing but lose digits
    std::vector<float> want = softmax_reference(xv, rows, cols);
    for (int threads : {128, 256}) {
      Schedule s = create_schedule({y});
      ops::schedule_softmax_cuda(s, y, threads);
      NDArray xa = NDArray::from_vector(xv, {rows, cols}), ya = lower_test::output({rows, cols});
      interpret(lower(s, {x, y}, "softmax"), {xa, ya});
      expect_close(ya.to_vector<float>(), want, 2e-6f, "softmax cuda " + std::to_string(cols));
    }
    Schedule d = create_schedule({y});
    NDArray xa = NDArray::from_vector(xv, {rows, cols}), ya = lower_test::output({rows, cols});
    lower_test::run_backends(lower(d, {x, y}, "softmax_cpu"), {xa, ya});
    expect_close(ya.to_vector<float>(), want, 2e-6f, "softmax default " + std::to_string(cols));
  }
}

TEST(NormalizationOps, SoftmaxOverTheLastAxisOfThreeAxesWithSymbolicShape) {
  Var n("n"), c("c");
  Tensor x = placeholder({2, n, c}, Float(32), "x");
  Tensor y = ops::softmax(x);
  Schedule s = create_schedule({y});
  ops::schedule_softmax_cuda(s, y, 64);  // symbolic columns: no shared row cache
  LoweredFunc f = lower(s, {x, y}, "softmax3");
  std::vector<float> xv = lower_test::values(2 * 3 * 70, 5);
  NDArray xa = NDArray::from_vector(xv, {2, 3, 70}), ya = lower_test::output({2, 3, 70});
  interpret(f, {xa, ya});
  expect_close(ya.to_vector<float>(), softmax_reference(xv, 6, 70), 2e-6f, "softmax 3-D");
}

TEST(NormalizationOps, LayerNormCudaScheduleAndDefaultSchedule) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{3, 768}, {2, 4096}, {2, 37}}) {
    Tensor x = placeholder({rows, cols}, Float(32), "x");
    Tensor g = placeholder({cols}, Float(32), "gamma"), b = placeholder({cols}, Float(32), "beta");
    Tensor y = ops::layer_norm(x, g, b, 1e-5);
    std::vector<float> xv = lower_test::values(rows * cols, 1), gv = lower_test::values(cols, 2),
                       bv = lower_test::values(cols, 3);
    for (float& v : xv) v = v * 3.0f + 10.0f;  // a mean far from 0: a one-pass variance would cancel
    std::vector<float> want = layer_norm_reference(xv, gv, bv, rows, cols, 1e-5);
    for (int threads : {256, 1024}) {
      Schedule s = create_schedule({y});
      ops::schedule_layer_norm_cuda(s, y, threads);
      NDArray xa = NDArray::from_vector(xv, {rows, cols}), ya = lower_test::output({rows, cols});
      interpret(lower(s, {x, g, b, y}, "layer_norm"),
                {xa, NDArray::from_vector(gv, {cols}), NDArray::from_vector(bv, {cols}), ya});
      expect_close(ya.to_vector<float>(), want, 2e-4f, "layer_norm cuda " + std::to_string(cols));
    }
    Schedule d = create_schedule({y});
    NDArray xa = NDArray::from_vector(xv, {rows, cols}), ya = lower_test::output({rows, cols});
    lower_test::run_backends(lower(d, {x, g, b, y}, "layer_norm_cpu"),
                             {xa, NDArray::from_vector(gv, {cols}), NDArray::from_vector(bv, {cols}), ya});
    expect_close(ya.to_vector<float>(), want, 2e-4f, "layer_norm default " + std::to_string(cols));
  }
}

TEST(NormalizationOps, ReduceRowsEveryReducer) {
  for (Reducer r : {Reducer::Sum, Reducer::Max, Reducer::Min}) {
    Tensor x = placeholder({5, 1000}, Float(32), "x");
    Tensor y = ops::reduce_rows(x, r);
    Schedule s = create_schedule({y});
    ops::schedule_reduce_rows_cuda(s, y, 512);
    std::vector<float> xv = lower_test::values(5 * 1000, 9);
    NDArray xa = NDArray::from_vector(xv, {5, 1000}), ya = lower_test::output({5});
    interpret(lower(s, {x, y}, "rows"), {xa, ya});
    std::vector<float> want;
    for (int i = 0; i < 5; ++i) {
      float acc = r == Reducer::Sum ? 0.0f : xv[static_cast<size_t>(i * 1000)];
      for (int j = 0; j < 1000; ++j) {
        float v = xv[static_cast<size_t>(i * 1000 + j)];
        acc = r == Reducer::Sum ? acc + v : r == Reducer::Max ? std::max(acc, v) : std::min(acc, v);
      }
      want.push_back(acc);
    }
    expect_close(ya.to_vector<float>(), want, 1e-5f, reducer_name(r));
  }
}

TEST(NormalizationOps, Errors) {
  Tensor x = placeholder({4, 64}, Float(32), "x");
  Tensor i = placeholder({4, 64}, Int(32), "i");
  expect_error([&] { ops::softmax(i); }, {"softmax", "float16, bfloat16, float32 or float64", "int32"});
  Tensor g = placeholder({64}, Float(64), "g");
  expect_error([&] { ops::layer_norm(x, g); }, {"layer_norm", "gamma and beta", "float32", "float64"});
  Tensor y = ops::softmax(x);
  Schedule s = create_schedule({y});
  expect_error([&] { ops::schedule_softmax_cuda(s, y, 48); }, {"schedule_softmax_cuda", "multiple of 32", "48"});
  Tensor z = compute(
      {4, 64}, [&](Expr a, Expr b) { return x(a, b) * 2.0f; }, "z");
  Schedule t = create_schedule({z});
  expect_error([&] { ops::schedule_layer_norm_cuda(t, z); },
               {"schedule_layer_norm_cuda", "'z' is not an output of te::ops::layer_norm", "te::ops function"});
  expect_error([&] { ops::layer_norm_welford_stages_of(z); }, {"'z' is not an output of te::ops::layer_norm_welford"});
}

// The schedules find the statistics through the graph (handles), not by name: an input
// named like a stage ("softmax.max") or an output named anything changes nothing.
TEST(NormalizationOps, SchedulesFindStagesWhateverTheNames) {
  const int64_t rows = 3, cols = 96;
  std::vector<float> xv = lower_test::values(rows * cols, 5);
  Tensor x = placeholder({rows, cols}, Float(32), "softmax.max");  // the name of softmax's stage
  ops::SoftmaxStages sm = ops::softmax_stages(x);
  ops::SoftmaxStages found = ops::softmax_stages_of(sm.out);
  EXPECT_TRUE(found.max.same_as(sm.max) && found.expsum.same_as(sm.expsum) && found.x.same_as(x));
  Tensor p = ops::softmax(x, "probs");
  EXPECT_TRUE(ops::softmax_stages_of(p).x.same_as(x));
  for (const Tensor& y : {sm.out, p}) {
    for (bool handles : {false, true}) {
      Schedule s = create_schedule({y});
      if (handles)
        ops::schedule_softmax_cuda(s, ops::softmax_stages_of(y), 64);
      else
        ops::schedule_softmax_cuda(s, y, 64);
      NDArray xa = NDArray::from_vector(xv, {rows, cols}), ya = lower_test::output({rows, cols});
      interpret(lower(s, {x, y}, "softmax"), {xa, ya});
      expect_close(ya.to_vector<float>(), softmax_reference(xv, rows, cols), 1e-5f, y.name());
    }
  }
  // layer_norm named by the user, its input named like its statistics.
  Tensor xm = placeholder({rows, cols}, Float(32), "ln.mean");
  ops::LayerNormStages ln = ops::layer_norm_stages(xm, Tensor(), Tensor(), 1e-5, "ln");
  ops::LayerNormStages ln_found = ops::layer_norm_stages_of(ln.out);
  EXPECT_TRUE(ln_found.mean.same_as(ln.mean) && ln_found.var.same_as(ln.var) && ln_found.x.same_as(xm));
  Schedule s = create_schedule({ln.out});
  ops::schedule_layer_norm_cuda(s, ln, 64);
  NDArray xa = NDArray::from_vector(xv, {rows, cols}), ya = lower_test::output({rows, cols});
  interpret(lower(s, {xm, ln.out}, "ln"), {xa, ya});
  std::vector<float> ones(static_cast<size_t>(cols), 1.0f), zeros(static_cast<size_t>(cols), 0.0f);
  expect_close(ya.to_vector<float>(), layer_norm_reference(xv, ones, zeros, rows, cols, 1e-5), 1e-4f, "ln");
  ops::LayerNormWelfordStages w = ops::layer_norm_welford_stages(xm, Tensor(), Tensor(), 1e-5, "lnw");
  ops::LayerNormWelfordStages w_found = ops::layer_norm_welford_stages_of(w.out);
  EXPECT_TRUE(w_found.mean.same_as(w.mean) && w_found.m2.same_as(w.m2) && w_found.count.same_as(w.count));
}

}  // namespace
}  // namespace te
