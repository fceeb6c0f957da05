/// \file
/// The CPU schedule of te::ops::grid_sample_backward (te/ops/grid_sample_backward.h),
/// header-only.
///
///   GridSampleBackwardStages b = grid_sample_backward_stages(data, grid, grad_out, opts);
///   Schedule s = create_schedule({b.grad_data, b.grad_grid});
///   schedule_grid_sample_backward_cpu(s, b);
///
/// Hand-written path: the forward's per-pixel stages (coords, taps, weights) once, in
/// vectors; the scatter-add in parallel over (batch, channel) planes, each plane its own
/// elements (no atomics: the same sums in the same order every run) with the corner loop
/// unrolled; the per-point coordinate derivative vectorized along the output's rows with
/// the channel sum inside and the coordinate axis unrolled within it. The derived path (other modes and layouts) is
/// auto_schedule's.
#pragma once
#include <algorithm>
#include <vector>

#include "te/auto_schedule.h"
#include "te/ops/grid_sample_backward.h"
#include "te/ops/grid_sample_cpu.h"
#include "te/schedule.h"

namespace te::ops {

/// Schedules the stages of grid_sample_backward_stages() in s: a schedule of both
/// gradients, or of one of them (the stages only the other needs are not in it).
/// vector_bytes: the SIMD width (64 for AVX-512, 32 for AVX2). te::Error when the stages
/// are not what grid_sample_backward_stages() returned.
inline void schedule_grid_sample_backward_cpu(Schedule& s, const GridSampleBackwardStages& b, int vector_bytes = 64) {
  if (!b.grad_data.defined() || !b.grad_grid.defined())
    throw Error(
        "schedule_grid_sample_backward_cpu: the GridSampleBackwardStages are incomplete; pass what "
        "te::ops::grid_sample_backward_stages() returns");
  if (b.derived) {
    s = auto_schedule(s.outputs());
    return;
  }
  auto in_schedule = [&](const Tensor& t) { return gs_detail::in_schedule(s, t); };
  const GridSampleStages& f = b.forward;
  const int lanes = std::max(1, vector_bytes / 4);
  for (const Tensor& t : {f.coords, f.taps, f.weights}) {
    if (!in_schedule(t)) continue;
    gs_detail::vectorize_pixel_stage(s, t, lanes);
    s[t].parallel(t.axis(0));
  }
  // The zero fill and the scatter: one plane per work item.
  if (in_schedule(b.grad_scatter)) {
    Stage z = s[b.grad_zeros];
    const Tensor& t = b.grad_zeros;
    auto [wo, wi] = z.split(t.axis(t.ndim() - 1), lanes, TailStrategy::ShiftInwards);
    (void)wo;
    z.vectorize(wi);
    z.parallel(z.fuse(t.axis(0), t.axis(1)));
  }
  if (in_schedule(b.grad_scatter)) {
    Stage sc = s[b.grad_scatter];
    const std::vector<IterVar>& ax = b.grad_scatter.op()->axis;
    sc.unroll(ax.back());
    sc.parallel(sc.fuse(ax[0], ax[1]));
  }
  // d out / d u: vectors along the innermost output axis, the channels summed inside, and
  // inside each channel the coordinate axis unrolled: its select on the axis folds away
  // and both derivatives share one channel's four tap loads (half the gathers of a loop
  // over the axis outside the channels; 1.4 -> 0.8 ms for 2x32x64x64 at one thread).
  if (in_schedule(b.grad_coords)) {
    const Tensor& g = b.grad_coords;
    Stage st = s[g];
    const std::vector<IterVar>& ax = g.op()->axis;
    auto [wo, wi] = st.split(ax.back(), lanes);
    std::vector<IterVar> order{ax[0]};
    order.insert(order.end(), ax.begin() + 2, ax.end() - 1);
    order.push_back(wo);
    order.push_back(g.op()->reduce_axis[0]);
    order.push_back(ax[1]);
    order.push_back(wi);
    st.reorder(order);
    st.vectorize(wi);
    st.unroll(ax[1]);
    IterVar outer = ax[0];
    for (size_t d = 2; d + 1 < ax.size(); ++d) outer = st.fuse(outer, ax[d]);
    st.parallel(outer);
  }
  if (b.grad_data.op() != b.grad_scatter.op() && in_schedule(b.grad_data)) {  // 16-bit data: the cast back
    Stage st = s[b.grad_data];
    st.parallel(st.fuse(b.grad_data.axis(0), b.grad_data.axis(1)));
  }
  if (in_schedule(b.grad_grid)) {
    Stage gg = s[b.grad_grid];
    gg.parallel(gg.fuse(b.grad_grid.axis(0), b.grad_grid.axis(1)));
  }
}

}  // namespace te::ops
