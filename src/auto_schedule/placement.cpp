// Where each kept stage is computed. Consumers are placed first; a producer goes inside
// the loop nest (the "anchor") that all its consumers are in, at the loop that fixes the
// anchor axes its reads depend on:
//  - a reduction that an element-wise output reads at the same point (a matmul and its
//    bias + relu) becomes the output's register tile (Placement::tile);
//  - row statistics (softmax's max and sum, layer norm's mean and variance) go inside the
//    consumer's row loop, so each row is read while it is in cache;
//  - a costly per-pixel stage that the consumer reuses across an axis it does not depend
//    on (grid_sample's coordinates across channels) goes outside that axis.
// Otherwise the stage is computed at the root, and so is any other reduction with reuse
// (its tiling needs its own loops) or with too few points for the threads (its parallel
// parts need their own loops).
#include <fmt/format.h>

#include <algorithm>

#include "auto_schedule/rules.h"
#include "expr/analysis.h"

namespace te::auto_sched {

namespace {

bool is_subset(const std::vector<int>& a, const std::vector<int>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

// Whether r reads at exactly the point (axis 0, ..., axis n-1) of `reader`.
bool reads_same_point(const Read& r, const OperationNode& reader) {
  if (r.indices.size() != reader.axis.size()) return false;
  for (size_t d = 0; d < r.indices.size(); ++d) {
    const auto* v = r.indices[d].as<VarNode>();
    if (!v || v != reader.axis[d].var().get()) return false;
  }
  return true;
}

// The anchor axes that the reads of `producer` in anchor use.
std::vector<int> axes_used(const Graph& g, const OperationNode* anchor, const OperationNode* producer) {
  std::vector<int> out;
  std::vector<Read> reads = g.effective_reads(anchor);
  for (size_t d = 0; d < anchor->axis.size(); ++d)
    for (const Read& r : reads) {
      if (r.op != producer) continue;
      bool used = false;
      for (const Expr& i : r.indices) used = used || uses_var(i, anchor->axis[d].var());
      if (used) {
        out.push_back(static_cast<int>(d));
        break;
      }
    }
  return out;
}

// Whether schedule_root_cpu tiles op with tile_reduction_cpu (at the root, or as its
// element-wise consumer's register tile), the rule that computes work-item stages.
bool tiled_by_rule(const Context& cx, const OperationNode* op) {
  const Node& n = cx.g.at(op);
  const Placement& p = cx.place.at(op);
  return n.is_compute() && n.is_reduction() && !op->is_row_reduction() && !op->is_scatter() && op->num_outputs() == 1 &&
         !cx.whole.count(op) && has_tiling_reuse(cx.g, op) && !has_short_rows(cx, op) &&
         (p.kind == Placement::Kind::Root || p.tile);
}

// Whether a padding reads its input at its own point moved by constants (a convolution's
// zero padding), not at a point it divides (a transposed convolution's input with zeros
// inserted between its pixels, whose reader visits only the nonzeros).
bool translates_its_input(const OperationNode& pad) {
  for (const Read& rd : reads_in(pad.body))
    for (const Expr& i : rd.indices)
      for (const IterVar& a : pad.axis)
        if (uses_var(i, a.var().get())) {
          const std::optional<LinearIn> form = linear_in(i, a.var());
          if (!form || form->coef != 1) return false;
        }
  return true;
}

// The rules' value of "<pad>.work_items" for a padding that `conv` (tiled) reads: per
// work item where it reads the padding through short windows only (3x3): a pass of its
// own is one more parallel loop, whose fork and join cost as much as a small
// convolution's arithmetic on two threads (Zen 5, side by side: GRP 88 -> 70 us, C1D
// 17.0 -> 14.5 us, CAP 205 -> 174 us, DEP NCHW 118 -> 105 us; one thread the same or
// 1-3% faster). Through long windows (C2D, DIL: 7 taps) on one thread only, and where
// the windows are narrow next to the padded extent: 4 items pad a few rows more than a
// quarter each, read while in cache (C2D 1070 -> 1020 us, DIL 980 -> 950 us; C3D, whose
// 7-plane windows overlap most of its 22 padded planes, 51 -> 52-53 ms), where two
// threads' 16 items of 7 rows overlap by 6 or 12 rows each (DIL 544 -> 617 us). Never for
// inserted zeros (T2D, one thread: 376 -> 453 us).
int64_t pad_per_work_item(const Context& cx, const OperationNode* pad, const OperationNode* conv) {
  if (!translates_its_input(*pad)) return 0;
  const std::vector<Read> reads = cx.g.effective_reads(conv);
  if (!long_window_over_padding(cx, conv, reads)) return 1;
  return cx.cpu.threads == 1 && windows_narrow_next_to_padding(cx, pad, conv, reads) ? 1 : 0;
}

// Whether op copies one read whose last index is not op's last axis.
bool transposing_copy(const OperationNode& op) {
  const auto* r = op.body.as<TensorReadNode>();
  return r && !op.axis.empty() && !r->indices.empty() && r->indices.back().as<VarNode>() != op.axis.back().var().get();
}

}  // namespace

bool has_tiling_reuse(const Graph& g, const OperationNode* op) {
  if (op->reduce_axis.empty() || op->axis.empty() || op->num_outputs() > 1) return false;
  const IterVar& last = op->axis.back();
  if (const_extent(last) == 1) return false;
  bool contiguous = false, reuse = false;
  for (const Read& r : g.effective_reads(op)) {
    if (!r.indices.empty() && uses_var(r.indices.back(), last.var())) contiguous = true;
    for (const IterVar& iv : op->axis) {
      if (const_extent(iv) == 1) continue;
      bool used = false;
      for (const Expr& i : r.indices) used = used || uses_var(i, iv.var());
      reuse = reuse || !used;
    }
  }
  return contiguous && reuse;
}

void choose_placements(Context& cx) {
  Graph& g = cx.g;
  std::map<const OperationNode*, std::vector<std::vector<int>>> committed;  // per anchor: outer sets
  std::set<const OperationNode*> tiled;                                     // anchors holding a register tile
  const auto& topo = g.topo();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const Node& n = **it;
    const OperationNode* op = n.op.get();
    if (!n.is_compute() || g.inlined.count(op)) continue;
    Placement& p = cx.place[op];
    // A stage scheduled whole by a pattern rule stays at the root.
    if (n.output || n.is_scatter_part() || cx.whole.count(op)) continue;
    std::vector<const OperationNode*> consumers = g.effective_consumers(op);
    // So do a kept stage that transposes as it copies (Winograd's NCHW input taken
    // channels last) and one that such a copy reads (Winograd's outputs channels
    // innermost, copied to NCHW): at the root the copy's rule transposes by blocks in
    // registers, where inside a loop it would go element by element.
    if (cx.kept.count(op) && (transposing_copy(*op) || (consumers.size() == 1 && transposing_copy(*consumers[0]))))
      continue;
    if (consumers.empty()) continue;
    // One anchor for all consumers.
    const OperationNode* anchor = nullptr;
    bool same = true;
    for (const OperationNode* c : consumers) {
      const Placement& cp = cx.place.at(c);
      const OperationNode* a = cp.kind == Placement::Kind::At ? cp.anchor : c;
      if (anchor && a != anchor) same = false;
      anchor = a;
    }
    // A padding that one tiled convolution reads (the reduction itself, or the register
    // tile of its element-wise consumer): padded in a pass of its own, or per parallel
    // work item of the tiling, the rows that item reads (decision "<pad>.work_items").
    if (same && consumers.size() == 1 && pads_itself(n.op) && tiled_by_rule(cx, consumers[0]) &&
        cx.choose(op, "work_items", pad_per_work_item(cx, op, consumers[0]), {0, 1}) == 1) {
      p.kind = Placement::Kind::At;
      p.anchor = anchor;
      cx.note(fmt::format("compute '{}' per work item of '{}'", op->name, consumers[0]->name));
      continue;
    }
    // Not inside a scatter: its rule keeps its loop order, in which the stage's point
    // would be recomputed.
    // Nor inside a stage a pattern rule schedules whole (its rule knows nothing of it).
    if (!same || tiled.count(anchor) || !g.at(anchor).is_compute() || g.at(anchor).is_reduction() ||
        anchor->num_outputs() > 1 || anchor->is_scatter() || cx.whole.count(anchor))
      continue;
    // A matmul-like reduction read point for point by its one element-wise consumer.
    if (consumers.size() == 1 && consumers[0] == anchor && n.is_reduction() && has_tiling_reuse(g, op) &&
        !committed.count(anchor) && anchor->axis.size() == op->axis.size()) {
      bool point = true;
      for (const Read& r : g.effective_reads(anchor))
        if (r.op == op) point = point && reads_same_point(r, *anchor);
      if (point) {
        p.kind = Placement::Kind::At;
        p.anchor = anchor;
        p.tile = true;
        tiled.insert(anchor);
        cx.note(fmt::format("'{}' is the register tile of '{}'", op->name, anchor->name));
        continue;
      }
    }
    // Any other reduction with reuse stays at the root, where its tiling reuses its
    // reads: at a consumer's loop it would run a point at a time (a transposed
    // convolution's phases, read back in place by their copy).
    if (n.is_reduction() && has_tiling_reuse(g, op)) continue;
    // So does a long reduction with too few points for the threads (a norm, read by its
    // square root): at the root its rule splits it into parallel parts, where inside its
    // consumer's loop it would run on one thread.
    if (n.is_reduction() && needs_parallel_parts(cx, op)) continue;
    // The loop: fixing the axes the direct reads use, and no more than the loops the
    // consumers inside the anchor are computed at.
    std::vector<int> outer;
    bool first = true;
    for (const OperationNode* c : consumers) {
      std::vector<int> need = c == anchor ? axes_used(g, anchor, op) : cx.place.at(c).outer;
      if (first) {
        outer = need;
      } else {
        std::vector<int> both;
        std::set_intersection(outer.begin(), outer.end(), need.begin(), need.end(), std::back_inserter(both));
        outer = both;
      }
      first = false;
    }
    if (outer.empty()) continue;
    // The anchor's loops put each committed set outermost: they must nest.
    bool nests = true;
    for (const auto& o : committed[anchor]) nests = nests && (is_subset(o, outer) || is_subset(outer, o));
    if (!nests) continue;
    committed[anchor].push_back(outer);
    p.kind = Placement::Kind::At;
    p.anchor = anchor;
    p.outer = outer;
    std::vector<IterVar> fixed;
    for (int d : outer) fixed.push_back(anchor->axis[static_cast<size_t>(d)]);
    cx.note(fmt::format("compute '{}' inside '{}' at its loop over {}", op->name, anchor->name, axis_names(fixed)));
  }
}

}  // namespace te::auto_sched
