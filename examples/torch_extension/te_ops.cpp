// te operators for PyTorch, as an mmcv / BEVDet-style extension would ship them, but with
// no hand-written kernel: each op is a te compute, scheduled for the CPU and, where the
// extension is built with CUDA (TE_TORCH_CUDA), for CUDA too; its backward is derived by
// te::gradient. Built with te_add_torch_extension (CMakeLists.txt), loaded by train.py
// with torch.ops.load_library. docs/pytorch.md walks through it.
#include "te/ops/activation.h"
#include "te/ops/bev_pool.h"
#include "te/ops/bev_pool_cpu.h"
#include "te/ops/bev_pool_cuda.h"
#include "te/ops/grid_sample.h"
#include "te/ops/grid_sample_cpu.h"
#include "te/ops/grid_sample_cuda.h"
#include "te/ops/matmul.h"
#include "te/te.h"
#include "te/torch.h"

using te::Expr;
using te::Tensor;
using te::Var;

TE_TORCH_LIBRARY(te_example, m) {
  // grid_sample (bilinear, zeros padding, align_corners=False): data (N, C, H, W), grid
  // (N, Ho, Wo, 2) -> (N, C, Ho, Wo), every size symbolic.
  {
    Var n("n"), c("c"), h("h"), w("w"), ho("ho"), wo("wo");
    Tensor data = te::placeholder({n, c, h, w}, te::Float(32), "data");
    Tensor grid = te::placeholder({n, ho, wo, 2}, te::Float(32), "grid");
    Tensor out = te::ops::grid_sample(data, grid);
    te::torch::OpDef def{{data, grid}, {out}};
    def.schedule_cpu = [out](te::Schedule& s) { te::ops::schedule_grid_sample_cpu(s, out); };
#ifdef TE_TORCH_CUDA
    // nvcc compiles te's CUDA C of it into the extension; its backward: auto_schedule's.
    def.schedule_cuda = [out](te::Schedule& s) { te::ops::schedule_grid_sample_cuda(s, out); };
#endif
    def.differentiable = true;  // te::gradient derives the data and grid gradients
    m.def("grid_sample", def);
  }
  // BEVDet's bev_pool_v2 onto a (B, 1, 8, 8) BEV grid: depth (B, N, D, fH, fW), feat
  // (B, N, fH, fW, C), int32 ranks and intervals -> (B, 1, 8, 8, C).
  {
    Var b("b"), cams("cams"), d("d"), fh("fh"), fw("fw"), c("c"), points("points"), intervals("intervals");
    Tensor depth = te::placeholder({b, cams, d, fh, fw}, te::Float(32), "depth");
    Tensor feat = te::placeholder({b, cams, fh, fw, c}, te::Float(32), "feat");
    Tensor ranks_depth = te::placeholder({points}, te::Int(32), "ranks_depth");
    Tensor ranks_feat = te::placeholder({points}, te::Int(32), "ranks_feat");
    Tensor ranks_bev = te::placeholder({points}, te::Int(32), "ranks_bev");
    Tensor starts = te::placeholder({intervals}, te::Int(32), "interval_starts");
    Tensor lengths = te::placeholder({intervals}, te::Int(32), "interval_lengths");
    Tensor out = te::ops::bev_pool_v2(depth, feat, ranks_depth, ranks_feat, ranks_bev, starts, lengths, {b, 1, 8, 8});
    te::torch::OpDef def{{depth, feat, ranks_depth, ranks_feat, ranks_bev, starts, lengths}, {out}};
    def.schedule_cpu = [out](te::Schedule& s) { te::ops::schedule_bev_pool_cpu(s, out); };
#ifdef TE_TORCH_CUDA
    def.schedule_cuda = [out](te::Schedule& s) { te::ops::schedule_bev_pool_cuda(s, out); };
#endif
    def.differentiable = true;  // te::gradient derives the depth and feat gradients
    m.def("bev_pool_v2", def);
  }
  // A fused linear layer with GELU: gelu(x @ w + bias), differentiable today (te::gradient
  // of a sum reduction and element-wise math); te's auto_schedule schedules both kernels.
  {
    Var n("n"), k("k"), j("j");
    Tensor x = te::placeholder({n, k}, te::Float(32), "x");
    Tensor w = te::placeholder({k, j}, te::Float(32), "w");
    Tensor bias = te::placeholder({j}, te::Float(32), "bias");
    Tensor xw = te::ops::matmul(x, w, "xw");
    Tensor y = te::compute(
        {n, j}, [&](Expr r, Expr col) { return te::ops::gelu(xw(r, col) + bias(col)); }, "y");
    te::torch::OpDef def{{x, w, bias}, {y}};
#ifdef TE_TORCH_CUDA
    def.cuda = true;  // auto_schedule for CUDA, forward and backward
#endif
    m.def("linear_gelu", def);
  }
}
