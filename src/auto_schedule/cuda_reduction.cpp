// CUDA: a long reduction without reuse to tile (a row sum, a whole tensor's norm). One
// block per output point, its innermost reduction axis split over the block's threads
// and combined by a cross-thread reduction (warp shuffles, then shared memory). Where the
// points are too few to give the GPU's multiprocessors a block each and every point sums
// many elements, the outermost reduction axis is first cut into parts (rfactor): one
// kernel of points x parts blocks, each summing its part that way, then one block per
// point combines its parts. (NRM, 4M squares into one point, ran as one block: 0.11x PyTorch
// on an H200.)
#include <fmt/format.h>

#include <algorithm>

#include "auto_schedule/rules.h"

namespace te::auto_sched {

namespace {

// Blocks a grid should have at least: about 4 per multiprocessor of an H100 or H200 (132).
constexpr int64_t kBlocksWanted = 512;
// A part's steps per thread at the least: shorter parts cost more in partial results
// and the second kernel than they gain in blocks.
constexpr int64_t kStepsPerThread = 16;

// The block's threads split `axis` (a reduction axis: a cross-thread reduction), `threads` at a time.
void threads_split(Stage st, const IterVar& axis, int threads) {
  auto [serial, across] = st.split(axis, threads);
  (void)serial;
  st.bind(across, thread_axis("threadIdx.x"));
}

// Parts to cut op's reduction into (the search may change it), or 0 when one block per
// point keeps the GPU busy or the sum is too short to share.
int64_t parts_for(Context& cx, const OperationNode* op) {
  const int64_t points = const_points(op->axis), length = const_points(op->reduce_axis);
  if (points <= 0 || length < 0 || points * 4 > kBlocksWanted) return 0;  // (0: an empty output)
  const int64_t most =
      std::min(const_extent(op->reduce_axis.front()), length / (kStepsPerThread * cx.opts.cuda_threads_per_block));
  const int64_t rule = std::min(most, (kBlocksWanted + points - 1) / points);
  if (rule < 2) return 0;
  return cx.choose(op, "grid_parts", rule,
                   {std::max<int64_t>(2, rule / 4), std::max<int64_t>(2, rule / 2), std::min(most, 2 * rule)});
}

}  // namespace

void schedule_long_reduction_cuda(Context& cx, const OperationNode* op) {
  const int tpb = cx.opts.cuda_threads_per_block;
  Stage st = cx.stage(op);
  const int64_t parts = parts_for(cx, op);
  if (parts == 0) {
    if (!op->axis.empty()) st.bind(fuse_range(st, op->axis), thread_axis("blockIdx.x"));  // 0-d: one block
    threads_split(st, op->reduce_axis.back(), tpb);
    cx.note(fmt::format("'{}' (cuda): one block per point, cross-thread reduction over '{}'", op->name,
                        op->reduce_axis.back().name()));
    return;
  }
  Tensor t(cx.g.at(op).op);
  auto [part, rows] = st.split_nparts(op->reduce_axis.front(), static_cast<int>(parts));
  (void)rows;
  Tensor partial = cx.s.rfactor(t, part, 0);
  // The first kernel: a block per (part, point). rfactor lists the cut axis's remainder
  // (the part's rows) last among the reduction axes; it goes back outermost, and the
  // original innermost reduction axis (contiguous in memory where the input is read
  // along it) is the threads'.
  Stage p = cx.s[partial];
  const auto& red = partial.op()->reduce_axis;
  std::vector<IterVar> order(partial.op()->axis.begin(), partial.op()->axis.end());
  order.push_back(red.back());
  order.insert(order.end(), red.begin(), red.end() - 1);
  p.reorder(order);
  p.bind(fuse_range(p, partial.op()->axis), thread_axis("blockIdx.x"));
  threads_split(p, order.back(), tpb);
  // The second: a block per point combines its parts, a warp's multiple of threads.
  Stage total = cx.s[t];
  if (!total.op()->axis.empty()) total.bind(fuse_range(total, total.op()->axis), thread_axis("blockIdx.x"));
  threads_split(total, total.op()->reduce_axis.front(),
                static_cast<int>(std::min<int64_t>(tpb, (parts + 31) / 32 * 32)));
  cx.note(
      fmt::format("'{}' (cuda): {} point(s), {} steps each: '{}' cut into {} parts ('{}', a block per part and "
                  "point), then a block per point combines them",
                  op->name, const_points(op->axis), const_points(op->reduce_axis), op->reduce_axis.front().name(),
                  parts, partial.name()));
}

}  // namespace te::auto_sched
