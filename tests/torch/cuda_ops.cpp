// The operators of te_torch_cuda_test_ops: te_add_torch_extension(... CUDA CUDA_EMULATION)
// compiles their CUDA kernels with the host compiler against te's CUDA emulation, and
// test_torch_cuda.cpp runs them (te::torch::detail::run_cuda_kernel_on_host) against the
// same operators' CPU kernels and PyTorch. Schedules: the user's (scale, grid_sample,
// bev_pool_v2) and auto_schedule's for CUDA (vadd, softmax, the backward kernels).
#include "te/ops/bev_pool.h"
#include "te/ops/bev_pool_cuda.h"
#include "te/ops/grid_sample.h"
#include "te/ops/grid_sample_cuda.h"
#include "te/te.h"
#include "te/torch.h"

using te::Expr;
using te::Tensor;
using te::Var;

TE_TORCH_LIBRARY(te_cuda_test, m) {
  Var n("n"), k("k");
  {
    Tensor x = te::placeholder({n}, te::Float(32), "x"), y = te::placeholder({n}, te::Float(32), "y");
    te::torch::OpDef def{{x, y},
                         {te::compute(
                             {n}, [&](Expr i) { return x(i) * y(i) + x(i); }, "out")}};
    def.cuda = true;  // auto_schedule for CUDA, forward and backward
    m.def("vmuladd", def);
  }
  {
    // A user's schedule: 64 threads per block, and a shape expression (n + 1).
    Tensor x = te::placeholder({n}, te::Float(32), "x");
    Tensor out = te::compute(
        {n + 1}, [&](Expr i) { return te::if_then_else(i < n, x(te::min(i, n - 1)) * 3.0f, 0.0f); }, "padded");
    te::torch::OpDef def{{x}, {out}};
    def.schedule_cuda = [out](te::Schedule& s) {
      auto [bx, tx] = s[out].split(out.axis(0), 64);
      s[out].bind(bx, te::thread_axis("blockIdx.x"));
      s[out].bind(tx, te::thread_axis("threadIdx.x"));
    };
    def.differentiable = false;
    m.def("scale_pad", def);
  }
  {
    Tensor x = te::placeholder({n, k}, te::Float(32), "x");
    te::IterVar r = te::reduce_axis({0, k}, "r"), r2 = te::reduce_axis({0, k}, "r2");
    Tensor mx = te::compute(
        {n}, [&](Expr i) { return te::max(x(i, r.var()), {r}); }, "row_max");
    Tensor e = te::compute(
        {n, k}, [&](Expr i, Expr j) { return te::exp(x(i, j) - mx(i)); }, "e");
    Tensor s = te::compute(
        {n}, [&](Expr i) { return te::sum(e(i, r2.var()), {r2}); }, "row_sum");
    Tensor out = te::compute(
        {n, k}, [&](Expr i, Expr j) { return e(i, j) / s(i); }, "softmax");
    te::torch::OpDef def{{x}, {out}};
    def.cuda = true;
    m.def("softmax", def);
  }
  {
    Var c("c"), h("h"), w("w"), ho("ho"), wo("wo");
    Tensor data = te::placeholder({n, c, h, w}, te::Float(32), "data");
    Tensor grid = te::placeholder({n, ho, wo, 2}, te::Float(32), "grid");
    Tensor out = te::ops::grid_sample(data, grid, {"bilinear", "zeros", false});
    te::torch::OpDef def{{data, grid}, {out}};
    def.schedule_cuda = [out](te::Schedule& s) { te::ops::schedule_grid_sample_cuda(s, out, 64); };
    m.def("grid_sample", def);
  }
  {
    Var b("b"), cams("cams"), d("d"), fh("fh"), fw("fw"), c("c"), points("points"), intervals("intervals");
    Tensor depth = te::placeholder({b, cams, d, fh, fw}, te::Float(32), "depth");
    Tensor feat = te::placeholder({b, cams, fh, fw, c}, te::Float(32), "feat");
    std::vector<Tensor> index;
    for (const char* name : {"ranks_depth", "ranks_feat", "ranks_bev"})
      index.push_back(te::placeholder({points}, te::Int(32), name));
    for (const char* name : {"interval_starts", "interval_lengths"})
      index.push_back(te::placeholder({intervals}, te::Int(32), name));
    Tensor out = te::ops::bev_pool_v2(depth, feat, index[0], index[1], index[2], index[3], index[4], {b, 1, 2, 3});
    te::torch::OpDef def{{depth, feat, index[0], index[1], index[2], index[3], index[4]}, {out}};
    def.schedule_cuda = [out](te::Schedule& s) { te::ops::schedule_bev_pool_cuda(s, out, 64); };
    m.def("bev_pool_v2", def);
  }
  {
    // No CUDA kernel: CUDA tensors are refused naming the reason.
    Tensor x = te::placeholder({n}, te::Float(32), "x");
    m.def("cpu_only", {{x},
                       {te::compute(
                           {n}, [&](Expr i) { return x(i) + 1.0f; }, "out")}});
  }
}
