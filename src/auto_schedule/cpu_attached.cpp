// CPU: a stage computed inside another stage's loop. An element-wise one is vectorized
// along its innermost axis, its other small constant loops unrolled (a select over them
// then folds away). A reduction whose innermost reduction axis is contiguous in memory
// is vectorized through rfactor: the axis is split into vectors, and a factored stage
// keeps one partial result per lane (a vector accumulator) that the stage then adds up.
#include <fmt/format.h>

#include "auto_schedule/rules.h"

namespace te::auto_sched {

namespace {

// The innermost reduction axis, when some read walks it contiguously.
IterVar contiguous_reduce_axis(const Graph& g, const OperationNode* op) {
  if (op->reduce_axis.empty()) return IterVar();
  const IterVar& k = op->reduce_axis.back();
  for (const Read& r : g.effective_reads(op))
    if (!r.indices.empty() && uses_var(r.indices.back(), k.var().get())) return k;
  return IterVar();
}

bool builtin_reducer(const OperationNode* op) {
  const auto* red = op->body.as<ReduceNode>();
  return red && red->reducer != Reducer::Custom && op->num_outputs() == 1;
}

}  // namespace

// Splits op's innermost reduction into vectors through rfactor; returns the factored
// tensor (undefined when the rule does not apply). The factored stage's loops: its data
// axes, the reductions, then the lanes (vectorized).
Tensor vectorize_reduction(Context& cx, const OperationNode* op, bool annotate, int64_t rule_vectors) {
  IterVar k = contiguous_reduce_axis(cx.g, op);
  const int lanes = cx.cpu.lanes(op->dtype);
  if (!k.defined() || !builtin_reducer(op) || lanes < 2) return Tensor();
  int64_t ext = const_extent(k);
  if (ext >= 0 && ext < 2 * lanes) return Tensor();
  // Searchable: how many vectors of partial sums (independent adds in flight; each is
  // added up lane by lane at the end, so a short reduction keeps one).
  auto fits = [&](int64_t v) { return v == 1 || ext < 0 || ext >= 2 * lanes * v; };
  if (!fits(rule_vectors)) rule_vectors = 1;
  std::vector<int64_t> others;
  for (int64_t v : {1, 2, 4})
    if (v != rule_vectors && fits(v)) others.push_back(v);
  const int64_t vectors = cx.choose(op, "accumulator_vectors", rule_vectors, others);
  Stage st = cx.stage(op);
  auto [ko, ki] = st.split(k, lanes * vectors);
  (void)ko;
  Tensor t(cx.g.at(op).op);
  Tensor rf = cx.s.rfactor(t, ki, static_cast<int>(op->axis.size()));
  if (annotate) order_lanes_last(cx.s[rf], rf);
  // The final sum over the lanes: a short loop, unrolled.
  Stage fin = cx.stage(op);
  if (!fin.op()->reduce_axis.empty()) fin.unroll(fin.op()->reduce_axis.back());
  cx.note(fmt::format(
      "'{}': rfactor '{}' into {} ('{}')", op->name, k.name(),
      vectors == 1 ? fmt::format("vectors of {}", lanes) : fmt::format("{} vectors of {}", vectors, lanes), rf.name()));
  return rf;
}

void order_lanes_last(Stage rs, const Tensor& rf) {
  std::vector<IterVar> order(rf.op()->axis.begin(), rf.op()->axis.end() - 1);
  order.insert(order.end(), rf.op()->reduce_axis.begin(), rf.op()->reduce_axis.end());
  order.push_back(rf.op()->axis.back());
  rs.reorder(order);
  rs.vectorize(rf.op()->axis.back());
}

void schedule_attached_cpu(Context& cx, const OperationNode* op, const Stage& anchor, const IterVar& loop) {
  Stage st = cx.stage(op);
  if (op->reduce_axis.empty()) {
    st.compute_at(anchor, loop);
    const int lanes = cx.cpu.lanes(op->dtype);
    const IterVar& last = op->axis.back();
    int64_t ext = const_extent(last);
    for (size_t d = 0; d + 1 < op->axis.size(); ++d) {
      int64_t e = const_extent(op->axis[d]);
      if (e > 1 && e <= 8) st.unroll(op->axis[d]);
    }
    if (lanes > 1 && (ext < 0 || ext >= lanes)) vectorize_split(st, last, lanes, true);
    cx.note(fmt::format("'{}' computed at '{}' of '{}'", op->name, loop.name(), anchor.name()));
    return;
  }
  if (op->is_row_reduction()) {  // its innermost element axis in vectors, guarded
    st.compute_at(anchor, loop);
    const int lanes = cx.cpu.lanes(op->dtype);
    const int64_t ext = const_extent(op->axis.back());
    if (lanes > 1 && (ext < 0 || ext >= lanes)) vectorize_split(st, op->axis.back(), lanes, false);
    cx.note(fmt::format("'{}' (row reduction) computed at '{}' of '{}'", op->name, loop.name(), anchor.name()));
    return;
  }
  // (A long sum keeps 4 accumulators here too: NRM on one thread, its 4M squares summed
  // inside the square root's loop, 290 -> 170 us.)
  Tensor rf = vectorize_reduction(cx, op, true, long_reduction(op) ? 4 : 1);
  if (rf.defined()) cx.s[rf].compute_at(anchor, loop);
  cx.stage(op).compute_at(anchor, loop);
  cx.note(fmt::format("'{}' computed at '{}' of '{}'", op->name, loop.name(), anchor.name()));
}

}  // namespace te::auto_sched
