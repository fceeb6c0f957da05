/// \file
/// The CUDA schedule of te::ops::bev_pool_v2 (te/ops/bev_pool.h), header-only.
///
///   Tensor out = te::ops::bev_pool_v2(depth, feat, ranks_depth, ranks_feat, ranks_bev,
///                                     interval_starts, interval_lengths, {B, Dz, Dy, Dx});
///   Schedule s = create_schedule({out});
///   te::ops::schedule_bev_pool_cuda(s, out);
///
/// The zero fill is found as the scatter's base (out.op()->scatter_base), not by name.
#pragma once
#include <algorithm>

#include "te/ops/bev_pool.h"
#include "te/schedule.h"
#include "te/tensor.h"

namespace te::ops {

/// The CUDA schedule: one thread per (interval, channel), as BEVDet's kernel, in blocks
/// of `threads`, summing the interval's points in a register (a "local" cache of the
/// scatter computed at the thread) and storing once; the zero fill one thread per element.
inline void schedule_bev_pool_cuda(Schedule& s, const Tensor& out, int threads = 256) {
  Tensor zero = bev_detail::zero_of(out, "schedule_bev_pool_cuda");
  {
    Stage z = s[zero];
    IterVar all = z.fuse(zero.op()->axis);
    auto [bx, tx] = z.split(all, threads);
    z.bind(bx, thread_axis("blockIdx.x"));
    z.bind(tx, thread_axis("threadIdx.x"));
  }
  Tensor acc = s.cache_write(out, "local");
  Stage st = s[out];
  IterVar all = st.fuse(out.op()->axis[0], out.op()->axis[1]);
  auto [bx, tx] = st.split(all, threads);
  st.bind(bx, thread_axis("blockIdx.x"));
  st.bind(tx, thread_axis("threadIdx.x"));
  s[acc].compute_at(st, tx);
}

}  // namespace te::ops
