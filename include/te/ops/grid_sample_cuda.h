/// \file
/// The CUDA schedule of te::ops::grid_sample (te/ops/grid_sample.h), header-only.
///
///   te::ops::GridSampleStages g = te::ops::grid_sample_stages(data, grid, opts);
///   Schedule s = create_schedule({g.out});
///   te::ops::schedule_grid_sample_cuda(s, g);  // or (s, out) for grid_sample()'s output
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "te/ops/grid_sample.h"
#include "te/schedule.h"
#include "te/tensor.h"

namespace te::ops {

/// CUDA schedule: one thread per output pixel and group of `channels_per_thread` channels
/// (batch, channel groups and spatial dimensions fused, `threads_per_block` threads a
/// block), looping over the group's channels with the pixel's coordinates (and bilinear's
/// taps and weights) computed once into registers. PyTorch's and mmcv's kernels give a
/// thread every channel; for BEV shapes (1 x 256 x 200 x 200: 40000 pixels) that leaves
/// most of a large GPU idle, so by default (channels_per_thread = 0) a constant channel
/// count of 64 or more is split into groups of 32 (8x the threads for 256 channels, each
/// recomputing its pixel's few coordinates); fewer or symbolic channels stay in one thread.
///
/// The stages come as handles (grid_sample_stages()); the overload below taking the
/// output finds them through the graph (grid_sample_stages_of()).
inline void schedule_grid_sample_cuda(Schedule& s, const GridSampleStages& stages, int threads_per_block = 256,
                                      int channels_per_thread = 0) {
  if (threads_per_block < 1 || channels_per_thread < 0)
    throw Error("schedule_grid_sample_cuda: threads_per_block must be >= 1 and channels_per_thread >= 0, got " +
                std::to_string(threads_per_block) + " and " + std::to_string(channels_per_thread));
  gs_detail::check_stages(stages, "schedule_grid_sample_cuda");
  const Tensor& out = stages.out;
  const Tensor& coords = stages.coords;
  gs_detail::OutputAxes ax = gs_detail::output_axes(stages);
  Stage st = s[out];
  if (channels_per_thread == 0) {
    const int64_t* channels = as_const_int(ax.c.dom().extent);
    channels_per_thread = channels && *channels >= 64 ? 32 : 0;
  }
  IterVar c_outer, c_inner = ax.c;
  if (channels_per_thread > 0) std::tie(c_outer, c_inner) = st.split(ax.c, channels_per_thread);
  std::vector<IterVar> pixels{ax.n};
  if (c_outer.defined()) pixels.push_back(c_outer);
  pixels.insert(pixels.end(), ax.spatial.begin(), ax.spatial.end());
  std::vector<IterVar> order = pixels;
  order.push_back(c_inner);
  st.reorder(order);
  IterVar pixel = st.fuse(pixels);
  auto [bx, tx] = st.split(pixel, threads_per_block);
  st.bind(bx, thread_axis("blockIdx.x"));
  st.bind(tx, thread_axis("threadIdx.x"));
  s[coords].compute_at(st, tx);
  s[coords].set_scope("local");
  // Bilinear: the pixel's taps and weights in registers too (the corner loops unrolled).
  for (const Tensor& t : {stages.taps, stages.weights}) {
    if (!t.defined()) continue;
    s[t].compute_at(st, tx);
    s[t].set_scope("local");
    s[t].unroll(t.axis(1));
  }
}

/// schedule_grid_sample_cuda for grid_sample()'s output out (its stages found through
/// the graph, whatever their names); te::Error when out is not a grid_sample output.
inline void schedule_grid_sample_cuda(Schedule& s, const Tensor& out, int threads_per_block = 256,
                                      int channels_per_thread = 0) {
  if (threads_per_block < 1 || channels_per_thread < 0)
    throw Error("schedule_grid_sample_cuda: threads_per_block must be >= 1 and channels_per_thread >= 0, got " +
                std::to_string(threads_per_block) + " and " + std::to_string(channels_per_thread));
  schedule_grid_sample_cuda(s, grid_sample_stages_of(out), threads_per_block, channels_per_thread);
}

}  // namespace te::ops
