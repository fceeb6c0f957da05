/// \file
/// The CUDA schedule of te::ops::grid_sample_backward (te/ops/grid_sample_backward.h),
/// header-only.
///
///   GridSampleBackwardStages b = grid_sample_backward_stages(data, grid, grad_out, opts);
///   Schedule s = create_schedule({b.grad_data, b.grad_grid});
///   schedule_grid_sample_backward_cuda(s, b);
///
/// Hand-written path, one kernel per stage: the forward's per-pixel stages and the zero
/// fill a thread per element; the scatter-add a thread per (batch, channel, pixel) adding
/// its corners with atomicAdd, as PyTorch's CUDA backward does (sums in an order that varies
/// between runs), or with `deterministic` a thread per (batch, channel) plane walking its
/// pixels in order (no atomics, the same bits every run, far fewer threads); the coordinate
/// derivative a thread per pixel summing the channels. The derived path (other modes and
/// layouts) is auto_schedule's for CUDA.
#pragma once
#include <vector>

#include "te/auto_schedule.h"
#include "te/ops/grid_sample_backward.h"
#include "te/schedule.h"

namespace te::ops {

namespace gs_detail {

// A thread per point of `loops` (fused), threads_per_block a block.
inline void thread_per_point(Stage st, const std::vector<IterVar>& loops, int threads_per_block) {
  IterVar all = loops[0];
  for (size_t k = 1; k < loops.size(); ++k) all = st.fuse(all, loops[k]);
  auto [bx, tx] = st.split(all, threads_per_block);
  st.bind(bx, thread_axis("blockIdx.x"));
  st.bind(tx, thread_axis("threadIdx.x"));
}

}  // namespace gs_detail

/// Schedules the stages of grid_sample_backward_stages() in s for CUDA (see above); s may
/// hold both gradients or one. te::Error when the stages are not what
/// grid_sample_backward_stages() returned.
inline void schedule_grid_sample_backward_cuda(Schedule& s, const GridSampleBackwardStages& b,
                                               bool deterministic = false, int threads_per_block = 256) {
  if (!b.grad_data.defined() || !b.grad_grid.defined())
    throw Error(
        "schedule_grid_sample_backward_cuda: the GridSampleBackwardStages are incomplete; pass what "
        "te::ops::grid_sample_backward_stages() returns");
  if (b.derived) {
    AutoScheduleOptions o;
    o.target = Target("cuda");
    o.cuda_threads_per_block = threads_per_block;
    s = auto_schedule(s.outputs(), o);
    return;
  }
  auto in_schedule = [&](const Tensor& t) { return gs_detail::in_schedule(s, t); };
  const GridSampleStages& f = b.forward;
  for (const Tensor& t : {f.coords, f.taps, f.weights, b.grad_zeros, b.grad_coords, b.grad_grid})
    if (in_schedule(t)) gs_detail::thread_per_point(s[t], t.op()->axis, threads_per_block);
  if (b.grad_data.op() != b.grad_scatter.op() && in_schedule(b.grad_data))
    gs_detail::thread_per_point(s[b.grad_data], b.grad_data.op()->axis, threads_per_block);
  if (in_schedule(b.grad_scatter)) {
    Stage sc = s[b.grad_scatter];
    const std::vector<IterVar>& ax = b.grad_scatter.op()->axis;  // (n, c, spatial..., corner)
    sc.unroll(ax.back());
    if (deterministic)
      gs_detail::thread_per_point(sc, {ax[0], ax[1]}, threads_per_block);
    else
      gs_detail::thread_per_point(sc, std::vector<IterVar>(ax.begin(), ax.end() - 1), threads_per_block);
  }
}

}  // namespace te::ops
