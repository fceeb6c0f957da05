/// \file
/// The CPU schedule of te::ops::grid_sample (te/ops/grid_sample.h), header-only.
///
///   te::ops::GridSampleStages g = te::ops::grid_sample_stages(data, grid, opts);
///   Schedule s = create_schedule({g.out});
///   te::ops::schedule_grid_sample_cpu(s, g);   // or (s, out) for grid_sample()'s output
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "te/ops/grid_sample.h"
#include "te/schedule.h"
#include "te/tensor.h"

namespace te::ops {

namespace gs_detail {

// Bytes of one image of grid_sample's input data (all channels); symbolic sizes count
// as large.
inline int64_t image_bytes(const Tensor& data) {
  int64_t bytes = data.dtype().bytes();
  for (int d = 1; d < data.ndim(); ++d) {
    const int64_t* v = as_const_int(data.shape()[d]);
    if (!v) return std::numeric_limits<int64_t>::max();
    bytes *= *v;
  }
  return bytes;
}

// Splits the innermost axis of a per-pixel stage into vectors and unrolls its small
// k / a axis (so that the select over it folds away).
inline void vectorize_pixel_stage(Schedule& s, const Tensor& t, int lanes) {
  Stage st = s[t];
  auto [wo, wi] = st.split(t.axis(t.ndim() - 1), lanes, TailStrategy::ShiftInwards);
  (void)wo;
  st.vectorize(wi);
  st.unroll(t.axis(1));
}

}  // namespace gs_detail

/// CPU schedule: vectorized along the output width (NCHW) or the contiguous channels
/// (NHWC), the per-pixel stages (coordinates; bilinear's taps and weights) computed once
/// per pixel and reused by every channel, so that per channel only the loads and
/// multiply-adds remain. Uneven vector splits shift their last vector inwards
/// (TailStrategy::ShiftInwards): a width of 200 in vectors of 16 runs 13 whole vectors
/// rather than 12 and a scalar tail (which cost 20-25 % at 1x256x200x200).
///
/// NCHW loops over a block of channels inside each vector of pixels (the vector's lane
/// offsets are extracted once per block) and picks the loop order by the size of one
/// image's data (all channels):
/// - up to 512 KB (it stays in L2): blocks of `row_block` output rows (0: 16) are the
///   parallel work items; their per-pixel stages are computed first, then each block of
///   `channel_block` channels (0: 4) runs over the rows, so a random grid's taps hit the
///   few planes in L1 instead of all of them (1.3x faster than a row at a time over all
///   32 channels at 4x32x64x64, bench/README.md);
/// - larger: the channels are split into blocks of `channel_block` (0: 64) outside the
///   rows, each (block, row) a work item with its own per-pixel stages: a block's planes
///   stay cached across the image (2.5-3x faster than sweeping all 256 channels per
///   vector at 1x256x200x200 on a random grid; within 10-20 % of it on a smooth one).
///
/// The stages come as handles (grid_sample_stages()); the overload below taking the
/// output finds them through the graph (grid_sample_stages_of()).
inline void schedule_grid_sample_cpu(Schedule& s, const GridSampleStages& stages, int vector_bytes = 64,
                                     int channel_block = 0, int row_block = 0) {
  gs_detail::check_stages(stages, "schedule_grid_sample_cpu");
  const Tensor& out = stages.out;
  const Tensor& coords = stages.coords;
  const Tensor& taps = stages.taps;
  const Tensor& weights = stages.weights;
  gs_detail::OutputAxes ax = gs_detail::output_axes(stages);
  Stage st = s[out];
  const auto shift = TailStrategy::ShiftInwards;
  const bool nhwc = stages.channels_last;
  int lanes = std::max(1, vector_bytes / out.dtype().bytes());
  IterVar work;  // the parallel loop; the per-pixel stages are computed inside it
  if (nhwc) {
    // Channels are contiguous: the taps of one pixel are vector loads.
    std::vector<IterVar> rows{ax.n};
    rows.insert(rows.end(), ax.spatial.begin(), ax.spatial.end() - 1);
    work = st.fuse(rows);
    auto [co, ci] = st.split(ax.c, lanes, shift);
    (void)co;
    st.vectorize(ci);
  } else {
    // A vector of pixels loops over a block of channels: its taps and weights do not
    // depend on the channel, so they are loaded once per vector and block.
    const IterVar& w = ax.spatial.back();
    const IterVar& h = ax.spatial[ax.spatial.size() - 2];
    auto [wo, wi] = st.split(w, lanes, shift);
    std::vector<IterVar> outer{ax.n};
    outer.insert(outer.end(), ax.spatial.begin(), ax.spatial.end() - 2);  // 5-D: depth
    if (gs_detail::image_bytes(stages.data) <= (512 << 10)) {
      auto [ho, hi] = st.split(h, row_block > 0 ? row_block : 16);
      auto [co, ci] = st.split(ax.c, channel_block > 0 ? channel_block : 4, shift);
      outer.push_back(ho);
      std::vector<IterVar> order = outer;
      order.insert(order.end(), {co, hi, wo, ci, wi});
      st.reorder(order);
      // One loop over the block's pixel vectors: a loop level less for LLVM's loop
      // strength reduction to rewrite the lane addresses at (-20 % compile time).
      st.fuse(hi, wo);
    } else {
      auto [co, ci] = st.split(ax.c, channel_block > 0 ? channel_block : 64, shift);
      outer.insert(outer.begin() + 1, co);
      outer.push_back(h);
      std::vector<IterVar> order = outer;
      order.insert(order.end(), {wo, ci, wi});
      st.reorder(order);
    }
    work = st.fuse(outer);
    st.vectorize(wi);
  }
  st.parallel(work);
  s[coords].compute_at(st, work);
  if (!taps.defined()) return;
  for (const Tensor& t : {coords, taps, weights}) {
    s[t].compute_at(st, work);
    gs_detail::vectorize_pixel_stage(s, t, std::max(1, vector_bytes / 4));
  }
}

/// schedule_grid_sample_cpu for grid_sample()'s output out (its stages found through the
/// graph, whatever their names); te::Error when out is not a grid_sample output.
inline void schedule_grid_sample_cpu(Schedule& s, const Tensor& out, int vector_bytes = 64, int channel_block = 0,
                                     int row_block = 0) {
  schedule_grid_sample_cpu(s, grid_sample_stages_of(out), vector_bytes, channel_block, row_block);
}

}  // namespace te::ops
