// te::gradient of te's operators, against central differences in float64: grid_sample
// (2-D and 3-D, every mode, padding and align_corners PyTorch differentiates; input and
// grid gradients) and bev_pool_v2 (a scatter over intervals whose sums run over ranges read
// from memory: depth and feat gradients as scatter-adds over those ranges).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autodiff_check.h"
#include "te/autodiff.h"
#include "te/ops/bev_pool.h"
#include "te/ops/grid_sample.h"
#include "te/te.h"

using namespace te;
using autodiff_check::expect_gradient_matches;
using autodiff_check::random_array;

namespace {

struct GridSampleCase {
  std::string mode, padding;
  bool align_corners;
  bool volumetric;
};

std::vector<GridSampleCase> grid_sample_cases() {
  std::vector<GridSampleCase> cases;
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        cases.push_back({mode, padding, align, false});
        if (std::string(mode) != "bicubic") cases.push_back({mode, padding, align, true});
      }
  return cases;
}

TEST(AutodiffOps, GridSampleInputAndGridGradients) {
  for (const GridSampleCase& c : grid_sample_cases()) {
    SCOPED_TRACE(c.mode + " " + c.padding + (c.align_corners ? " align_corners" : "") + (c.volumetric ? " 3-D" : ""));
    const std::vector<int64_t> data_shape =
        c.volumetric ? std::vector<int64_t>{2, 2, 3, 4, 3} : std::vector<int64_t>{2, 2, 4, 5};
    const std::vector<int64_t> grid_shape =
        c.volumetric ? std::vector<int64_t>{2, 2, 2, 2, 3} : std::vector<int64_t>{2, 3, 2, 2};
    std::vector<Expr> ds(data_shape.begin(), data_shape.end()), gs(grid_shape.begin(), grid_shape.end());
    Tensor data = placeholder(ds, Float(64), "data"), grid = placeholder(gs, Float(64), "grid");
    ops::GridSampleOptions o;
    o.mode = c.mode;
    o.padding_mode = c.padding;
    o.align_corners = c.align_corners;
    Tensor out = ops::grid_sample(data, grid, o);
    std::vector<int64_t> out_shape{data_shape[0], data_shape[1]};
    out_shape.insert(out_shape.end(), grid_shape.begin() + 1, grid_shape.end() - 1);
    std::vector<Expr> os(out_shape.begin(), out_shape.end());
    Tensor head = placeholder(os, Float(64), "head");
    // Grid values past the edges too (padding matters there).
    expect_gradient_matches(out, {data, grid}, {random_array(data_shape, 21), random_array(grid_shape, 22, -1.3, 1.3)},
                            head, random_array(out_shape, 23));
  }
}

TEST(AutodiffOps, BevPoolV2DepthAndFeatGradients) {
  // B 1, N 2, D 3, fH 2, fW 2, C 3; a BEV grid (1, 1, 2, 3) of 6 cells, 4 occupied.
  Tensor depth = placeholder({1, 2, 3, 2, 2}, Float(64), "depth"),
         feat = placeholder({1, 2, 2, 2, 3}, Float(64), "feat");
  Tensor rd = placeholder({9}, Int(32), "ranks_depth"), rf = placeholder({9}, Int(32), "ranks_feat"),
         rb = placeholder({9}, Int(32), "ranks_bev"), st = placeholder({4}, Int(32), "interval_starts"),
         ln = placeholder({4}, Int(32), "interval_lengths");
  Tensor out = ops::bev_pool_v2(depth, feat, rd, rf, rb, st, ln, {1, 1, 2, 3});
  const std::vector<Tensor> grads = gradient(out, {depth, feat});
  EXPECT_TRUE(grads[0].op()->is_scatter());
  EXPECT_TRUE(grads[1].op()->is_scatter());
  // Repeated depth and feat ranks (their gradients add up), cells 0, 2, 3 and 5.
  auto ints = [](std::vector<int32_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return NDArray::from_vector(v, {n});
  };
  expect_gradient_matches(out, {depth, feat}, {random_array({1, 2, 3, 2, 2}, 41), random_array({1, 2, 2, 2, 3}, 42)},
                          Tensor(), NDArray(), {rd, rf, rb, st, ln},
                          {ints({0, 5, 23, 7, 7, 11, 2, 19, 5}), ints({0, 1, 7, 3, 3, 2, 6, 5, 1}),
                           ints({0, 0, 2, 3, 3, 3, 5, 5, 5}), ints({0, 2, 3, 6}), ints({2, 1, 3, 3})});
}

}  // namespace
