// CPU: a reduction at the root without data reuse to tile for (row sums, a full sum, a
// matrix-vector product). Its innermost reduction axis becomes vector accumulators
// (rfactor) when it is contiguous in memory; otherwise the innermost data axis is
// vectorized when it is, with the reduction loops moved inside it. A long reduction keeps
// four vector accumulators (independent add chains). The data axes run in
// parallel; when there are too few of them to keep the threads busy and the reduction
// is long, a second rfactor splits it into one part per work item (parallel), and the
// parts are added after. A row reduction (compute_rows) runs in parallel over its rows,
// its element loops (the innermost vectorized) inside its reduction loops.
#include <fmt/format.h>

#include "auto_schedule/rules.h"

namespace te::auto_sched {

bool long_reduction(const OperationNode* op) {
  const int64_t length = const_points(op->reduce_axis);
  return length < 0 || length >= 4096;
}

bool needs_parallel_parts(const Context& cx, const OperationNode* op) {
  const int64_t points = const_points(op->axis);
  return cx.cpu.threads > 1 && points >= 0 && points < int64_t{cx.cpu.threads} * 4 && long_reduction(op);
}

void schedule_reduction_cpu(Context& cx, const OperationNode* op) {
  const int threads = cx.cpu.threads;
  const int64_t points = const_points(op->axis);
  const bool few = needs_parallel_parts(cx, op);
  // A long reduction per point keeps 4 vector accumulators: one is a chain of dependent
  // adds, latency-bound at a quarter of the adds a core can issue (NRM's 4M squares).
  Tensor rf = vectorize_reduction(cx, op, !few, long_reduction(op) ? 4 : 1);
  if (rf.defined()) {
    Stage w = cx.s[rf];
    if (few) {
      // One part of the reduction per work item.
      const int parts = threads * static_cast<int>(cx.choose(op, "parts_per_thread", 4, {1, 2, 8, 16}));
      auto [kp, krest] = w.split_nparts(rf.op()->reduce_axis.front(), parts);
      (void)krest;
      Tensor rf2 = cx.s.rfactor(rf, kp, 0);
      Stage w2 = cx.s[rf2];
      const auto& ax = rf2.op()->axis;
      // rfactor lists the split axis's remainder (the rows of a part) last among the
      // reduction loops; it goes back outermost, where the axis was, so that the inner
      // loops walk memory contiguously (NRM, two threads, one vector of partial sums: 580 -> 308 us).
      std::vector<IterVar> order(ax.begin(), ax.end() - 1);
      const auto& red = rf2.op()->reduce_axis;
      order.push_back(red.back());
      order.insert(order.end(), red.begin(), red.end() - 1);
      order.push_back(ax.back());
      w2.reorder(order);
      w2.vectorize(ax.back());
      IterVar work = fuse_range(w2, std::vector<IterVar>(ax.begin(), ax.end() - 1));
      w2.parallel(work);
      cx.note(fmt::format("'{}': few outputs ({}), long reduction: rfactor into {} parallel parts ('{}')", op->name,
                          points, parts, rf2.name()));
      return;
    }
    Stage st = cx.stage(op);
    if (st.op()->axis.empty()) return;
    IterVar work = fuse_range(st, st.op()->axis);
    if (threads > 1) st.parallel(work);
    w.compute_at(st, work);
    cx.note(fmt::format("'{}': parallel over {}, vector partial results computed per point", op->name,
                        axis_names(op->axis)));
    return;
  }
  Stage st = cx.stage(op);
  if (op->axis.empty()) return;
  const IterVar& last = op->axis.back();
  const int lanes = cx.cpu.lanes(op->dtype);
  bool contiguous = false;
  for (const Read& r : cx.g.effective_reads(op))
    contiguous = contiguous || (!r.indices.empty() && uses_var(r.indices.back(), last.var().get()));
  int64_t ext = const_extent(last);
  std::vector<IterVar> outer(op->axis.begin(), op->axis.end() - 1);
  if (contiguous && lanes > 1 && (ext < 0 || ext >= lanes)) {
    auto [vo, vi] = st.split(last, lanes);
    std::vector<IterVar> order = outer;
    order.push_back(vo);
    order.insert(order.end(), op->reduce_axis.begin(), op->reduce_axis.end());
    order.push_back(vi);
    st.reorder(order);
    st.vectorize(vi);
    outer.push_back(vo);
  } else {
    outer.push_back(last);
  }
  IterVar work = fuse_range(st, outer);
  if (threads > 1) st.parallel(work);
  cx.note(fmt::format("'{}': parallel over {}{}", op->name, axis_names(outer),
                      contiguous ? fmt::format(", vectors of {} along '{}'", lanes, last.name()) : ""));
}

void schedule_row_reduction_cpu(Context& cx, const OperationNode* op) {
  Stage st = cx.stage(op);
  const auto rows_end = op->axis.begin() + static_cast<std::ptrdiff_t>(op->row_shape.size());
  const std::vector<IterVar> rows(op->axis.begin(), rows_end);
  const IterVar& last = op->axis.back();  // an element axis (a row reduction has one)
  const int lanes = cx.cpu.lanes(op->dtype);
  const int64_t ext = const_extent(last);
  // Each element is updated once per reduction step: a guarded tail, not a shifted one.
  if (lanes > 1 && (ext < 0 || ext >= lanes)) vectorize_split(st, last, lanes, false);
  if (!rows.empty() && cx.cpu.threads > 1) st.parallel(fuse_range(st, rows));
  cx.note(fmt::format("'{}' (row reduction): parallel over {}, vectors of {} along element axis '{}'", op->name,
                      axis_names(rows), lanes, last.name()));
}

}  // namespace te::auto_sched
