/// \file
/// The CPU schedule of te::ops::bev_pool_v2 (te/ops/bev_pool.h), header-only.
///
///   Tensor out = te::ops::bev_pool_v2(depth, feat, ranks_depth, ranks_feat, ranks_bev,
///                                     interval_starts, interval_lengths, {B, Dz, Dy, Dx});
///   Schedule s = create_schedule({out});
///   te::ops::schedule_bev_pool_cpu(s, out);
///
/// The zero fill is found as the scatter's base (out.op()->scatter_base), not by name.
#pragma once
#include <algorithm>

#include "te/ops/bev_pool.h"
#include "te/schedule.h"
#include "te/tensor.h"

namespace te::ops {

/// The CPU schedule: intervals in parallel (blocks of `interval_block`); each interval's
/// channels accumulate in registers (a "local" cache of the scatter, vectors of
/// `vector_bytes`, unrolled over the channels) with the interval's points outside the
/// channel vectors, so each point's depth and indices are read once; then one store of
/// the row at its BEV cell. The zero fill is vectorized and parallel.
inline void schedule_bev_pool_cpu(Schedule& s, const Tensor& out, int vector_bytes = 64, int interval_block = 16) {
  const auto shift = TailStrategy::ShiftInwards;
  Tensor zero = bev_detail::zero_of(out, "schedule_bev_pool_cpu");
  int lanes = std::max(1, vector_bytes / out.dtype().bytes());
  {
    Stage z = s[zero];
    std::vector<IterVar> axes = zero.op()->axis;
    IterVar c = axes.back();
    axes.pop_back();
    IterVar cells = z.fuse(axes);
    auto [co, ci] = z.split(c, lanes, shift);
    (void)co;
    z.vectorize(ci);
    z.parallel(cells);
  }
  Tensor acc = s.cache_write(out, "local");
  Stage st = s[out];
  auto [io, ii] = st.split(out.op()->axis[0], interval_block);
  auto [co, ci] = st.split(out.op()->axis[1], lanes, shift);
  st.vectorize(ci);
  st.parallel(io);
  Stage a = s[acc];
  a.compute_at(st, ii);
  IterVar ai = acc.op()->axis[0], ac = acc.op()->axis[1], p = acc.op()->reduce_axis[0];
  auto [aco, aci] = a.split(ac, lanes);  // guarded: a shifted tail would add points twice
  a.reorder({ai, p, aco, aci});
  a.vectorize(aci);
  // A row's vectors stay in registers across the points and into the row's store when
  // both are unrolled.
  if (const int64_t* channels = as_const_int(out.shape().back()); channels && *channels <= 16 * lanes) {
    a.unroll(aco);
    st.unroll(co);
  }
}

}  // namespace te::ops
