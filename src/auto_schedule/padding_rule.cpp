// Rule (CPU, after the tiling): a sum over a zero-padded producer (a convolution's
// padding, a stage of its own as TVM writes it) narrows each reduction loop that runs
// outside every loop of the axes its new bounds use (Stage::skip_padding): the loop skips
// the padding's taps at the cost of a min and a max per entry, and no point needs a guard.
// C3D's depth window over 16 padded planes (7 taps, stride 2) does 50 of its 56 taps.
// Loops inside the register tile keep their constant extents (they are unrolled), and so
// do windows of 4 taps or fewer (see long_window).
#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "auto_schedule/rules.h"
#include "expr/analysis.h"
#include "lower/stage_graph.h"
#include "schedule/skip_zeros.h"
#include "schedule/stage_lookup.h"
#include "te/lower.h"

namespace te::auto_sched {

namespace {

// Whether every loop at or inside r's is free of the axes `bounds` uses (a loop of one
// iteration, as a tile's cache has for the axes of its consumer's loops, is none).
bool runs_outside_its_bounds(const StageNode& st, const IterVar& r, const Range& bounds, const BoundMap& extents) {
  const std::vector<IterVar>& leaves = st.leaf_iter_vars;
  for (size_t p = static_cast<size_t>(sched::index_of(leaves, r)); p < leaves.size(); ++p) {
    if (extents.contains(leaves[p]) && is_one(extents.at(leaves[p]).extent)) continue;
    for (const IterVar& root : lowering::root_axes_of(st, leaves[p]))
      if (uses_var(bounds.min, root.var()) || uses_var(bounds.extent, root.var())) return false;
  }
  return true;
}

}  // namespace

// A window of more than 4 taps. Shorter ones cost more narrowed than they skip: LLVM
// unrolls a constant loop of 3 whole and no loop of varying count (GRP and CAP, 3 taps of
// which 1 in 84 and 1 in 24 are padding: 1.13x and 1.09x slower narrowed), while
// narrowed windows of 7 ran 1.06-1.12x faster (C2D, DIL, C3D; one thread, side by side).
bool long_window(const IterVar& r) {
  const int64_t* extent = as_const_int(r.dom().extent);
  return extent != nullptr && *extent > 4;
}

bool pads_itself(const Operation& op) {
  if (op->kind != OpKind::Compute || op->num_outputs() != 1) return false;
  if (const auto* c = op->body.as<CallNode>()) return c->op == Intrinsic::IfThenElse;
  return op->body.as<SelectNode>() != nullptr;
}

bool pads_along(const Operation& op, size_t dim) {
  if (!pads_itself(op) || dim >= op->axis.size()) return false;
  const auto* c = op->body.as<CallNode>();
  const Expr& cond = c ? c->args[0] : op->body.as<SelectNode>()->cond;
  return uses_var(cond, op->axis[dim].var().get());
}

namespace {

// A read of a zero padding along a dimension it pads: the padding, the dimension, the index.
struct PaddedIndex {
  const OperationNode* pad;
  size_t dim;
  Expr index;
};

std::vector<PaddedIndex> padded_indices(const Context& cx, const std::vector<Read>& reads) {
  std::vector<PaddedIndex> out;
  for (const Read& rd : reads)
    for (size_t d = 0; d < rd.indices.size(); ++d)  // (a grouped convolution's 16 channels are no window)
      if (pads_along(cx.g.at(rd.op).op, d)) out.push_back({rd.op, d, rd.indices[d]});
  return out;
}

}  // namespace

bool long_window_over_padding(const Context& cx, const OperationNode* red, const std::vector<Read>& reads) {
  for (const PaddedIndex& p : padded_indices(cx, reads))
    for (const IterVar& k : red->reduce_axis)
      if (long_window(k) && uses_var(p.index, k.var().get()))
        for (const IterVar& a : red->axis)
          if (uses_var(p.index, a.var().get())) return true;
  return false;
}

bool windows_narrow_next_to_padding(const Context& cx, const OperationNode* pad, const OperationNode* red,
                                    const std::vector<Read>& reads) {
  for (const PaddedIndex& p : padded_indices(cx, reads)) {
    if (p.pad != pad) continue;
    int64_t span = 1;
    for (const IterVar& k : red->reduce_axis) {
      if (!uses_var(p.index, k.var().get())) continue;
      const std::optional<LinearIn> form = linear_in(p.index, k.var());
      const int64_t taps = const_extent(k);
      if (!form || taps < 0) return false;
      span += (taps - 1) * std::abs(form->coef);
    }
    const int64_t extent = const_value(pad->shape[p.dim]);
    if (extent < 0 || span * 16 > extent) return false;
  }
  return true;
}

void skip_padding_taps(Context& cx) {
  if (!cx.opts.skip_zeros) return;
  const std::vector<Stage> stages = cx.s.stages();
  std::optional<BoundMap> extents;  // bound inference only for a sum over a padding
  for (const Stage& stage : stages) {
    const StageNode& st = *stage.get();
    const Operation op = st.op;
    if (op->kind != OpKind::Compute || op->reduce_axis.empty()) continue;
    for (const Operation& in : op->inputs) {
      // Only the padding itself, not a copy of it (NCHW inputs read by phase): narrowed
      // through that copy, C2D NCHW ran 1.08x faster on one thread but 1.4x slower on
      // two (side by side), so the rule leaves copies alone.
      if (!pads_itself(in)) continue;
      const Tensor producer(in, 0);
      std::vector<IterVar> axes;
      for (const IterVar& r : op->reduce_axis) {
        const sched::PaddingPlan plan = sched::plan_skip_padding(*cx.s.get(), st, producer, r);
        if (!plan.refusal.empty() || !long_window(r)) continue;
        if (!extents) extents = infer_bound(cx.s);
        if (runs_outside_its_bounds(st, r, plan.taps.dom(), *extents)) axes.push_back(r);
      }
      if (axes.empty() || cx.choose(op.get(), "skip_padding", 1, {0, 1}) == 0) continue;
      Stage(stage).skip_padding(producer, axes);
      cx.note(fmt::format("'{}': skips the padding of '{}' (reduction {})", op->name, in->name, axis_names(axes)));
      break;  // the stage's operation is a new one now
    }
  }
}

}  // namespace te::auto_sched
