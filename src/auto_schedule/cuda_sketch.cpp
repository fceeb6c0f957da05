// CUDA rules: every kept stage is its own kernel.
//  - Element-wise: all axes fused, split into blocks of threads_per_block threads.
//  - A reduction with reuse (matmul, conv): a register tile per thread (cache_write
//    "local", my x mx points), threads 16 x (threads_per_block / 16) over the row and
//    column axes, blocks over the rest; the inputs that the tile reuses (those that do not
//    depend on every output axis) are staged through shared memory, one tile of the
//    reduction (8 steps) at a time, fetched by all the block's threads together.
//  - A long reduction (>= 256 steps or symbolic): cross-thread reductions, one block per
//    output point, or per part and point where the points are few (cuda_reduction.cpp).
//  - A short reduction: one thread per output point.
//  - A row reduction (compute_rows): one thread per row.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "auto_schedule/rules.h"
#include "schedule/scatter_rules.h"

namespace te::auto_sched {

namespace {

void thread_per_point(Context& cx, Stage st) {
  if (st.op()->axis.empty()) {
    IterVar one = st.fuse(std::vector<IterVar>{});
    st.bind(one, thread_axis("blockIdx.x"));
    return;
  }
  IterVar all = fuse_range(st, st.op()->axis);
  auto [bx, tx] = st.split(all, cx.opts.cuda_threads_per_block);
  st.bind(bx, thread_axis("blockIdx.x"));
  st.bind(tx, thread_axis("threadIdx.x"));
}

// Shared-memory copy computed at `loop` of `reader`, fetched by all threads: its points
// fused, split over threadIdx.y x threadIdx.x.
void cooperative_fetch(Stage st, int ty, int tx) {
  IterVar all = fuse_range(st, st.op()->axis);
  auto [rest, inner] = st.split(all, ty * tx);
  (void)rest;
  auto [y, x] = st.split(inner, tx);
  st.bind(y, thread_axis("threadIdx.y"));
  st.bind(x, thread_axis("threadIdx.x"));
}

void tile_reduction_cuda(Context& cx, const OperationNode* op) {
  const size_t n = op->axis.size(), v = n - 1;
  // The row axis: most reads do not depend on it (innermost on ties).
  std::vector<Read> reads = cx.g.effective_reads(op);
  int r = -1, best = 0;
  for (size_t d = 0; d < v; ++d) {
    if (const_extent(op->axis[d]) == 1) continue;
    int missing = 0;
    for (const Read& rd : reads) {
      bool used = false;
      for (const Expr& i : rd.indices) used = used || uses_var(i, op->axis[d].var().get());
      missing += used ? 0 : 1;
    }
    if (missing > 0 && missing >= best) r = static_cast<int>(d), best = missing;
  }
  const int tpb = cx.opts.cuda_threads_per_block;
  // The thread tile (points per thread along the columns and rows): the search may change it.
  const int mx = static_cast<int>(cx.choose(op, "thread_tile_cols", 2, {1, 4, 8}));
  const int my = r >= 0 ? static_cast<int>(cx.choose(op, "thread_tile_rows", 2, {1, 4, 8})) : 1;
  // Threads along an axis: no more than its points (a constant extent) need.
  auto threads_for = [](int want, int per_thread, int64_t extent) {
    if (extent < 0) return want;
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(want, (extent + per_thread - 1) / per_thread)));
  };
  const int tx = threads_for(r >= 0 ? 16 : tpb, mx, const_extent(op->axis[v]));
  const int ty = r >= 0 ? threads_for(tpb / 16, my, const_extent(op->axis[static_cast<size_t>(r)])) : 1;

  Tensor t(cx.g.at(op).op);
  // Inputs read directly (not through an inlined stage) that miss an output axis, and
  // whose tile has a size known at compile time (__shared__ arrays need one): no read of
  // them gathers (an index read from memory spans the whole tensor), and none spans a
  // symbolic reduction axis that the tile does not split.
  auto tile_is_constant = [&](const Read& rd) {
    for (const Expr& i : rd.indices) {
      if (!tensor_reads(i).empty()) return false;
      for (size_t k = 1; k < op->reduce_axis.size(); ++k)
        if (const_extent(op->reduce_axis[k]) < 0 && uses_var(i, op->reduce_axis[k].var().get())) return false;
    }
    return true;
  };
  // And whose tile fits a share of the 48 KiB of static shared memory: each index spans
  // the tile's points of the variables it reads (a reduction step, the unsplit reduction
  // axes, the thread tile's rows and columns; one point of a block's other axes).
  const int64_t step = cx.choose(op, "reduction_step", 8, {4, 16, 32});
  auto points_of = [&](const VarNode* x) -> int64_t {
    if (!op->reduce_axis.empty() && x == op->reduce_axis.front().var().get()) return step;
    for (size_t k = 1; k < op->reduce_axis.size(); ++k)
      if (x == op->reduce_axis[k].var().get()) return std::max<int64_t>(1, const_extent(op->reduce_axis[k]));
    if (x == op->axis[v].var().get()) return int64_t{tx} * mx;
    if (r >= 0 && x == op->axis[static_cast<size_t>(r)].var().get()) return int64_t{ty} * my;
    return 1;
  };
  auto tile_bytes = [&](const Read& rd) {
    int64_t points = 1;
    for (const Expr& i : rd.indices) {
      int64_t span = 1;
      for (const Var& x : free_vars(i)) span += points_of(x.get()) - 1;
      points *= span;
    }
    return points * rd.op->output_dtype(0).bytes();
  };
  constexpr int64_t kSharedShare = 16 * 1024;  // of 48 KiB: room for two tiles and the rest
  std::vector<Tensor> reused;
  std::set<const OperationNode*> seen, unstageable;
  for (const Read& rd : cx.g.at(op).reads)
    if (!tile_is_constant(rd) || tile_bytes(rd) > kSharedShare) unstageable.insert(rd.op);
  for (const Read& rd : cx.g.at(op).reads) {
    if (!seen.insert(rd.op).second || cx.g.inlined.count(rd.op) || unstageable.count(rd.op)) continue;
    bool misses = false;
    for (const IterVar& iv : op->axis) {
      if (const_extent(iv) == 1) continue;
      bool used = false;
      for (const Expr& i : rd.indices) used = used || uses_var(i, iv.var().get());
      misses = misses || !used;
    }
    if (misses) reused.push_back(Tensor(cx.g.at(rd.op).op));
  }
  Tensor local = cx.s.cache_write(t, "local");
  std::vector<Tensor> shared;
  for (const Tensor& in : reused) shared.push_back(cx.s.cache_read(in, "shared", {local}));

  Stage c = cx.s[t];
  const auto& ax = c.op()->axis;
  auto [vo, vi] = c.split(ax[v], mx);
  auto [vb, vt] = c.split(vo, tx);
  IterVar rb, rt, ri;
  if (r >= 0) {
    auto [ro, rin] = c.split(ax[static_cast<size_t>(r)], my);
    auto [b, th] = c.split(ro, ty);
    rb = b, rt = th, ri = rin;
  }
  std::vector<IterVar> outer;
  for (size_t d = 0; d < v; ++d)
    if (static_cast<int>(d) != r) outer.push_back(ax[d]);
  if (rb.defined()) outer.push_back(rb);
  std::vector<IterVar> order = outer;
  order.push_back(vb);
  if (rt.defined()) order.push_back(rt);
  order.push_back(vt);
  if (ri.defined()) order.push_back(ri);
  order.push_back(vi);
  c.reorder(order);
  if (!outer.empty()) c.bind(fuse_range(c, outer), thread_axis("blockIdx.y"));
  c.bind(vb, thread_axis("blockIdx.x"));
  if (rt.defined()) c.bind(rt, thread_axis("threadIdx.y"));
  c.bind(vt, thread_axis("threadIdx.x"));
  if (ri.defined()) c.unroll(ri);
  c.unroll(vi);

  Stage l = cx.s[local];
  l.compute_at(c, vt);
  const auto& lax = l.op()->axis;
  const auto& kax = l.op()->reduce_axis;
  auto [ko, ki] = l.split(kax.front(), static_cast<int>(step));
  std::vector<IterVar> lorder{ko};
  lorder.insert(lorder.end(), kax.begin() + 1, kax.end());
  lorder.push_back(ki);
  for (size_t d = 0; d < v; ++d)
    if (static_cast<int>(d) != r) lorder.push_back(lax[d]);
  if (r >= 0) lorder.push_back(lax[static_cast<size_t>(r)]);
  lorder.push_back(lax[v]);
  l.reorder(lorder);
  if (r >= 0) l.unroll(lax[static_cast<size_t>(r)]);
  l.unroll(lax[v]);
  for (const Tensor& sh : shared) {
    cx.s[sh].compute_at(l, ko);
    cooperative_fetch(cx.s[sh], ty, tx);
  }
  cx.note(fmt::format("'{}' (cuda): thread tile {} x {}, threads {} x {}, {} input(s) in shared memory", op->name, my,
                      mx, ty, tx, shared.size()));
}

}  // namespace

void schedule_root_cuda(Context& cx, const OperationNode* op) {
  const Node& n = cx.g.at(op);
  Stage st = cx.stage(op);
  if (op->is_scatter()) {
    // A thread per point of its data axes (a scatter-add's sum runs inside, each term
    // adding atomically); a deterministic one only over its leading axes that index the
    // output directly (no atomics), the others serial in each thread.
    std::vector<IterVar> threads;
    for (const IterVar& iv : op->axis) {
      if (op->scatter_deterministic && !sched::indexes_output_directly(*op, iv)) break;
      threads.push_back(iv);
    }
    if (threads.empty()) {
      auto [one, all] = st.split_nparts(fuse_range(st, op->axis), 1);
      (void)all;
      st.bind(one, thread_axis("blockIdx.x"));
      cx.note(fmt::format("scatter '{}' (cuda): one thread (deterministic, no axis indexes its output)", op->name));
      return;
    }
    auto [bx, tx] = st.split(fuse_range(st, threads), cx.opts.cuda_threads_per_block);
    st.bind(bx, thread_axis("blockIdx.x"));
    st.bind(tx, thread_axis("threadIdx.x"));
    cx.note(fmt::format("scatter '{}' (cuda): a thread per point of {}", op->name, axis_names(threads)));
    return;
  }
  if (!n.is_reduction()) {
    thread_per_point(cx, st);
    cx.note(fmt::format("'{}' (cuda): one thread per point", op->name));
    return;
  }
  if (op->is_row_reduction()) {
    // A thread per row: its reduction and element loops serial in the thread.
    std::vector<IterVar> rows(op->axis.begin(), op->axis.begin() + static_cast<std::ptrdiff_t>(op->row_shape.size()));
    IterVar all = rows.empty() ? st.fuse(std::vector<IterVar>{}) : fuse_range(st, rows);
    auto [bx, tx] = st.split(all, cx.opts.cuda_threads_per_block);
    st.bind(bx, thread_axis("blockIdx.x"));
    st.bind(tx, thread_axis("threadIdx.x"));
    cx.note(fmt::format("'{}' (cuda): one thread per row of its row reduction", op->name));
    return;
  }
  if (has_tiling_reuse(cx.g, op) && op->axis.size() >= 1) {
    tile_reduction_cuda(cx, op);
    return;
  }
  const int64_t length = const_points(op->reduce_axis);
  if (length < 0 || length >= 256 || op->axis.empty()) {
    schedule_long_reduction_cuda(cx, op);
    return;
  }
  thread_per_point(cx, st);
  cx.note(fmt::format("'{}' (cuda): one thread per point (short reduction)", op->name));
}

}  // namespace te::auto_sched
