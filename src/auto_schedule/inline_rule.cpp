// The inline rule: an element-wise stage that is not an output disappears into its
// readers when that costs (almost) nothing: it is read without reuse (each of its points
// by one point of each reader), or it only moves data (a transpose, padding, a cast, one
// add or max, as relu and bias do). A costly stage that readers reuse (grid_sample's
// coordinates, read once per channel) keeps its buffer and is computed once, and so does
// a boundary (zero padding: a condition on its own indices) read by a reduction: inlined,
// every vector load of the convolution's inner loop would become a masked one (measured
// 10x slower than reading the padded copy, which costs one pass).
#include <fmt/format.h>

#include "auto_schedule/rules.h"

namespace te::auto_sched {

namespace {

// Whether some read of `producer` in `consumer` misses one of the consumer's loops,
// so that one value of the producer serves several iterations.
bool reused_by(const Node& consumer, const OperationNode* producer) {
  std::vector<IterVar> loops = consumer.op->axis;
  loops.insert(loops.end(), consumer.op->reduce_axis.begin(), consumer.op->reduce_axis.end());
  for (const Read& r : consumer.reads) {
    if (r.op != producer) continue;
    for (const IterVar& iv : loops) {
      if (const_extent(iv) == 1) continue;
      bool used = false;
      for (const Expr& i : r.indices) used = used || uses_var(i, iv.var());
      if (!used) return true;
    }
  }
  return false;
}

// Whether op's value depends on a condition over its own indices (padding, a border).
bool has_boundary_condition(const OperationNode* op) {
  struct Finder : IRVisitor {
    const OperationNode* op;
    bool found = false;
    void check(const Expr& cond) {
      for (const IterVar& iv : op->axis) found = found || uses_var(cond, iv.var());
    }
    void visit_select(const SelectNode* n) override {
      check(n->cond);
      IRVisitor::visit_select(n);
    }
    void visit_call(const CallNode* n) override {
      if (n->op == Intrinsic::IfThenElse && !n->args.empty()) check(n->args[0]);
      IRVisitor::visit_call(n);
    }
  } f;
  f.op = op;
  for (const Expr& b : op->bodies()) f.visit(b);
  return f.found;
}

}  // namespace

void choose_inlines(Context& cx) {
  Graph& g = cx.g;
  std::map<const OperationNode*, int> cost;  // with the inlined producers it reads
  for (const Node* n : g.topo()) {
    if (!n->is_compute()) continue;
    int c = n->cost;
    for (const Read& r : n->reads)
      if (g.inlined.count(r.op)) c += cost[r.op];
    cost[n->op.get()] = c;
    if (n->output || n->is_reduction() || n->op->num_outputs() > 1 || n->is_scatter_part() ||
        cx.whole.count(n->op.get()) || cx.kept.count(n->op.get()))
      continue;
    bool reused = false;
    for (const OperationNode* c_op : n->consumers) reused = reused || reused_by(g.at(c_op), n->op.get());
    if (reused && c > 1) {
      cx.note(fmt::format("keep '{}': {} float ops per point, reused by its readers", n->op->name, c));
      continue;
    }
    bool reduction_reader = false;
    for (const OperationNode* c_op : n->consumers) reduction_reader = reduction_reader || g.at(c_op).is_reduction();
    if (reduction_reader && has_boundary_condition(n->op.get())) {
      cx.note(
          fmt::format("keep '{}': a boundary read by a reduction (no masked loads in its inner loop)", n->op->name));
      continue;
    }
    g.inlined.insert(n->op.get());
    cx.s[n->op].compute_inline();
    cx.note(fmt::format("inline '{}'", n->op->name));
  }
}

}  // namespace te::auto_sched
