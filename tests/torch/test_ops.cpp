// The operators tests/torch/test_torch_ops.py loads (te_add_torch_extension): float64
// variants for gradcheck (grid_sample and bev_pool_v2 among them, their backward derived
// with te's default schedules), integer inputs, several outputs, and an op without a
// gradient.
#include "te/ops/activation.h"
#include "te/ops/bev_pool.h"
#include "te/ops/grid_sample.h"
#include "te/ops/matmul.h"
#include "te/te.h"
#include "te/torch.h"

using te::Expr;
using te::Tensor;
using te::Var;

TE_TORCH_LIBRARY(te_pytest, m) {
  Var n("n"), k("k"), cols("m");
  for (te::DataType t : {te::Float(32), te::Float(64)}) {
    const std::string suffix = t.bits() == 32 ? "" : "64";
    Tensor x = te::placeholder({n, k}, t, "x"), b = te::placeholder({k}, t, "bias");
    m.def("bias_gelu" + suffix, {{x, b},
                                 {te::compute(
                                     {n, k}, [&](Expr i, Expr j) { return te::ops::gelu(x(i, j) + b(j)); }, "y")}});
    Tensor w = te::placeholder({k, cols}, t, "w");
    m.def("matmul" + suffix, {{x, w}, {te::ops::matmul(x, w)}});
  }
  {
    Tensor x = te::placeholder({n}, te::Float(64), "x"), y = te::placeholder({n}, te::Float(64), "y");
    Tensor p = te::compute(
        {n}, [&](Expr i) { return x(i) * y(i); }, "prod");
    Tensor s = te::compute(
        {n}, [&](Expr i) { return te::exp(x(i)) - y(i); }, "diff");
    m.def("two_outputs64", {{x, y}, {p, s}});
  }
  {
    // Softmax over rows: a reduction, an intermediate read twice, and a division.
    Tensor x = te::placeholder({n, k}, te::Float(64), "x");
    te::IterVar r = te::reduce_axis({0, k}, "r");
    Tensor e = te::compute(
        {n, k}, [&](Expr i, Expr j) { return te::exp(x(i, j)); }, "e");
    Tensor s = te::compute(
        {n}, [&](Expr i) { return te::sum(e(i, r.var()), {r}); }, "s");
    m.def("softmax64", {{x},
                        {te::compute(
                            {n, k}, [&](Expr i, Expr j) { return e(i, j) / s(i); }, "softmax")}});
  }
  {
    Var c("c"), h("h"), w("w"), ho("ho"), wo("wo");
    Tensor data = te::placeholder({n, c, h, w}, te::Float(64), "data");
    Tensor grid = te::placeholder({n, ho, wo, 2}, te::Float(64), "grid");
    m.def("grid_sample64", {{data, grid}, {te::ops::grid_sample(data, grid, {"bilinear", "border", true})}});
  }
  {
    Var b("b"), cams("cams"), d("d"), fh("fh"), fw("fw"), c("c"), points("points"), intervals("intervals");
    Tensor depth = te::placeholder({b, cams, d, fh, fw}, te::Float(64), "depth");
    Tensor feat = te::placeholder({b, cams, fh, fw, c}, te::Float(64), "feat");
    std::vector<Tensor> index;
    for (const char* name : {"ranks_depth", "ranks_feat", "ranks_bev"})
      index.push_back(te::placeholder({points}, te::Int(32), name));
    for (const char* name : {"interval_starts", "interval_lengths"})
      index.push_back(te::placeholder({intervals}, te::Int(32), name));
    Tensor out = te::ops::bev_pool_v2(depth, feat, index[0], index[1], index[2], index[3], index[4], {b, 1, 2, 3});
    m.def("bev_pool_v2_64", {{depth, feat, index[0], index[1], index[2], index[3], index[4]}, {out}});
  }
  {
    Tensor x = te::placeholder({n}, te::Float(32), "x");
    te::torch::OpDef def{{x},
                         {te::compute(
                             {n}, [&](Expr i) { return x(i) * 2; }, "out")}};
    def.differentiable = false;
    m.def("no_grad", def);
  }
}
