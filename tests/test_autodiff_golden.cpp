// te::gradient against PyTorch autograd (tests/data/torch_golden, made by
// scripts/gen_torch_golden.py in float64): grid_sample 2-D (every mode, padding and
// align_corners) and 3-D (bilinear, nearest), bev_pool_v2, softmax, layer_norm, matmul and
// a strided, padded, dilated conv2d. Each adjoint runs through interpret() of the default schedule
// and through the JIT with auto_schedule's schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "te/autodiff.h"
#include "te/auto_schedule.h"
#include "te/ops/bev_pool.h"
#include "te/ops/grid_sample.h"
#include "te/ops/matmul.h"
#include "te/ops/normalization.h"
#include "te/te.h"

using namespace te;

namespace {

const std::string kDir = std::string(TE_TEST_DATA_DIR) + "/torch_golden/";

NDArray golden(const std::string& path) { return NDArray::load_npy(kDir + path + ".npy"); }

Tensor placeholder_like(const NDArray& a, const std::string& name) {
  std::vector<Expr> shape;
  for (int64_t d : a.shape()) shape.push_back(Expr(static_cast<int>(d)));
  return placeholder(shape, a.dtype(), name);
}

void expect_close(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], w[i], 1e-10 * (1 + std::fabs(w[i]))) << what << " element " << i;
}

// The gradients of `output` for `inputs` (given head), run both ways, against `want`.
// `fixed` are inputs not differentiated (index arrays), with their values.
void check_gradients(const Tensor& output, const std::vector<Tensor>& inputs, const std::vector<NDArray>& values,
                     const Tensor& head, const NDArray& head_value, const std::vector<NDArray>& want,
                     const std::vector<std::string>& names, const std::vector<Tensor>& fixed = {},
                     const std::vector<NDArray>& fixed_values = {}) {
  const std::vector<Tensor> grads = gradient(output, inputs, head);
  std::vector<Tensor> args = inputs;
  args.insert(args.end(), fixed.begin(), fixed.end());
  args.push_back(head);
  args.insert(args.end(), grads.begin(), grads.end());
  std::vector<Argument> call(values.begin(), values.end());
  call.insert(call.end(), fixed_values.begin(), fixed_values.end());
  call.emplace_back(head_value);
  std::vector<NDArray> interpreted, jitted;
  for (const Tensor& g : grads) {
    std::vector<int64_t> shape;
    for (const Expr& e : g.shape()) shape.push_back(*as_const_int(e));
    interpreted.push_back(NDArray::empty(shape, g.dtype()));
    jitted.push_back(NDArray::empty(shape, g.dtype()));
  }
  std::vector<Argument> a = call, b = call;
  for (size_t k = 0; k < grads.size(); ++k) {
    a.emplace_back(interpreted[k]);
    b.emplace_back(jitted[k]);
  }
  interpret(lower(create_schedule(grads), args, "grads"), a);
  build(lower(auto_schedule(grads), args, "grads"))("grads").call(b);
  for (size_t k = 0; k < grads.size(); ++k) {
    expect_close(interpreted[k], want[k], "interpret(): gradient of " + names[k]);
    expect_close(jitted[k], want[k], "auto_schedule + JIT: gradient of " + names[k]);
  }
}

TEST(AutodiffGolden, GridSampleEveryModePaddingAndAlignCorners) {
  for (const char* dims : {"2d", "3d"}) {
    const std::string folder = std::string("grid_sample_backward/") + dims;
    const NDArray data = golden(folder + "/data"), grid = golden(folder + "/grid"), head = golden(folder + "/head");
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
      for (const char* padding : {"zeros", "border", "reflection"})
        for (bool align : {false, true}) {
          if (std::string(dims) == "3d" && std::string(mode) == "bicubic") continue;
          const std::string c = folder + "/" + mode + "_" + padding + (align ? "_align" : "");
          SCOPED_TRACE(c);
          Tensor d = placeholder_like(data, "data"), g = placeholder_like(grid, "grid");
          ops::GridSampleOptions o;
          o.mode = mode;
          o.padding_mode = padding;
          o.align_corners = align;
          Tensor out = ops::grid_sample(d, g, o);
          check_gradients(out, {d, g}, {data, grid}, placeholder_like(head, "head"), head,
                          {golden(c + "/grad_data"), golden(c + "/grad_grid")}, {"data", "grid"});
        }
  }
}

TEST(AutodiffGolden, SoftmaxLayerNormMatmul) {
  {
    SCOPED_TRACE("softmax");
    const NDArray x = golden("softmax_backward/x"), head = golden("softmax_backward/head");
    Tensor X = placeholder_like(x, "x");
    check_gradients(ops::softmax(X), {X}, {x}, placeholder_like(head, "head"), head,
                    {golden("softmax_backward/grad_x")}, {"x"});
  }
  {
    SCOPED_TRACE("layer_norm");
    const std::string f = "layer_norm_backward/";
    const NDArray x = golden(f + "x"), w = golden(f + "weight"), b = golden(f + "bias"), head = golden(f + "head");
    Tensor X = placeholder_like(x, "x"), W = placeholder_like(w, "weight"), B = placeholder_like(b, "bias");
    check_gradients(ops::layer_norm(X, W, B, 1e-5), {X, W, B}, {x, w, b}, placeholder_like(head, "head"), head,
                    {golden(f + "grad_x"), golden(f + "grad_weight"), golden(f + "grad_bias")},
                    {"x", "weight", "bias"});
  }
  {
    SCOPED_TRACE("matmul");
    const NDArray a = golden("matmul_backward/a"), b = golden("matmul_backward/b"),
                  head = golden("matmul_backward/head");
    Tensor A = placeholder_like(a, "a"), B = placeholder_like(b, "b");
    check_gradients(ops::matmul(A, B), {A, B}, {a, b}, placeholder_like(head, "head"), head,
                    {golden("matmul_backward/grad_a"), golden("matmul_backward/grad_b")}, {"a", "b"});
  }
}

// conv2d(x, w, stride (2, 1), padding (1, 2), dilation (1, 2)) written as TE: a padded
// copy, then the window sum.
TEST(AutodiffGolden, Conv2dStridedPaddedDilated) {
  const std::string f = "conv2d_backward/";
  const NDArray x = golden(f + "x"), w = golden(f + "weight"), head = golden(f + "head");
  Tensor X = placeholder_like(x, "x"), W = placeholder_like(w, "weight");
  const int H = 9, Wd = 8, KH = 3, KW = 2;
  Tensor P = compute(
      {2, 3, H + 2, Wd + 4},
      [&](Expr n, Expr c, Expr y, Expr z) {
        Expr inside = y >= 1 && y < H + 1 && z >= 2 && z < Wd + 2;
        return if_then_else(inside, X(n, c, y - 1, z - 2), make_zero(Float(64)));
      },
      "padded");
  IterVar c = reduce_axis({0, 3}, "c"), ky = reduce_axis({0, KH}, "ky"), kx = reduce_axis({0, KW}, "kx");
  Tensor Y = compute(
      {2, 4, 5, 10},
      [&](Expr n, Expr o, Expr y, Expr z) {
        return sum(P(n, c, y * 2 + ky, z + kx * 2) * W(o, c, ky, kx), {c, ky, kx});
      },
      "conv");
  check_gradients(Y, {X, W}, {x, w}, placeholder_like(head, "head"), head,
                  {golden(f + "grad_x"), golden(f + "grad_weight")}, {"x", "weight"});
}

// bev_pool_v2 on tests/data/bev_pool/small's points (sums over intervals read from memory,
// scattered to cells read from memory) against autograd of BEVDet's reference.
TEST(AutodiffGolden, BevPoolV2) {
  const std::string f = "bev_pool_backward/", small = std::string(TE_TEST_DATA_DIR) + "/bev_pool/small/";
  auto input = [&](const std::string& name) { return NDArray::load_npy(small + name + ".npy"); };
  const NDArray depth = golden(f + "depth"), feat = golden(f + "feat"), head = golden(f + "head");
  const std::vector<int32_t> bev = input("bev_shape").to_vector<int32_t>();
  Tensor D = placeholder_like(depth, "depth"), F = placeholder_like(feat, "feat");
  std::vector<Tensor> ranks;
  std::vector<NDArray> values;
  for (const char* name : {"ranks_depth", "ranks_feat", "ranks_bev", "interval_starts", "interval_lengths"}) {
    values.push_back(input(name));
    ranks.push_back(placeholder_like(values.back(), name));
  }
  Tensor out =
      ops::bev_pool_v2(D, F, ranks[0], ranks[1], ranks[2], ranks[3], ranks[4], {bev[0], bev[1], bev[2], bev[3]});
  check_gradients(out, {D, F}, {depth, feat}, placeholder_like(head, "head"), head,
                  {golden(f + "grad_depth"), golden(f + "grad_feat")}, {"depth", "feat"}, ranks, values);
}

}  // namespace
