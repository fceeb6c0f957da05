// Bound inference (TVM's InferBound): consumers before producers, each stage's root
// ranges cover what its consumers read inside its attach point; split/fuse results follow.
//
// For a producer P and a consumer C, C's loops inside P's attach point range over their
// bounds ("relaxed"), the loops around it stay fixed (symbolic), and thread loops are
// relaxed when P's buffer is shared by those threads (global: blockIdx and threadIdx;
// shared: threadIdx and vthread; local: none).
#include <fmt/format.h>

#include <climits>
#include <set>

#include "lower/int_set.h"
#include "lower/loop_bounds.h"
#include "lower/passes.h"
#include "lower/stage_graph.h"
#include "schedule/graph_queries.h"

namespace te {

const Range& BoundMap::at(const IterVar& iv) const {
  auto it = ranges_.find(iv.get());
  if (it == ranges_.end())
    throw Error(
        fmt::format("bound inference found no range for axis '{}' (an axis of an inlined or "
                    "unscheduled stage?)",
                    iv.defined() ? iv.name() : "(undefined)"));
  return it->second.second;
}

BoundMap infer_bound(const Schedule& s) {
  return lowering::infer_bound_inlined(lowering::assign_storage_scopes(lowering::inline_stages(s)));
}

namespace lowering {

namespace {

bool is_vthread(const StageNode& owner, const IterVar& iv) {
  auto it = owner.attrs.find(iv.get());
  return it != owner.attrs.end() && it->second.kind == ForKind::ThreadBinding &&
         it->second.thread->thread_tag.rfind("vthread", 0) == 0;
}

bool need_relax(const StageNode& owner, const IterVar& iv, bool found_attach, MemoryScope scope) {
  // The vthreads of a thread share its shared memory, as threadIdx's do, but each gets
  // its own copy of a local buffer (inject_virtual_thread).
  if (is_vthread(owner, iv)) return !found_attach || scope_rank(scope) <= scope_rank(MemoryScope::Shared);
  std::string tag = thread_tag(owner, iv);
  if (tag.empty()) return !found_attach;
  return scope_rank(scope) <= thread_rank(tag);
}

Expr ceil_div(const Expr& e, const Expr& f, const VarBounds& known) {
  if (can_prove(e % f == 0, known)) return simplify(e / f, known);
  return simplify((e + f - 1) / f, known);
}

// Ranges of the split/fuse results from the ranges of the roots.
void pass_down(const StageNode& st, BoundMap& b, const VarBounds& known) {
  for (const Relation& rel : st.relations) {
    if (const auto* sp = std::get_if<SplitRelation>(&rel)) {
      Expr ext = b.at(sp->parent).extent;
      DataType t = sp->parent.var().dtype();
      Expr outer, inner;
      if (sp->factor.defined()) {
        const bool whole = sp->tail == TailStrategy::GuardWholeTiles;
        inner = !whole && can_prove(ext < sp->factor, known) ? ext : sp->factor;
        outer = ceil_div(ext, sp->factor, known);
      } else {
        outer = can_prove(ext < sp->nparts, known) ? ext : sp->nparts;
        inner = ceil_div(ext, sp->nparts, known);
      }
      b.set(sp->outer, Range::from_min_extent(make_zero(t), outer));
      b.set(sp->inner, Range::from_min_extent(make_zero(t), inner));
    } else if (const auto* f = std::get_if<FuseRelation>(&rel)) {
      const Expr& eo = b.at(f->outer).extent;
      const Expr& ei = b.at(f->inner).extent;
      const int64_t* co = as_const_int(eo);
      const int64_t* ci = as_const_int(ei);
      DataType ft = f->fused.var().dtype();
      if (co && ci && ft.bits() <= 32 && static_cast<__int128>(*co) * *ci > INT32_MAX)
        throw Error(
            fmt::format("fuse: axis '{}' would have {} x {} iterations, beyond int32; give the axes' "
                        "extents as int64 or fuse fewer axes",
                        f->fused.name(), *co, *ci));
      Expr ext = simplify(eo * ei, known);
      b.set(f->fused, Range::from_min_extent(make_zero(f->fused.var().dtype()), ext));
    } else if (const auto* one = std::get_if<SingletonRelation>(&rel)) {
      b.set(one->iv, Range::from_min_extent(0, 1));
    }
  }
}

class ReadIndexCollector : public IRVisitor {
 public:
  explicit ReadIndexCollector(const OperationNode* op) : op_(op) {}
  std::vector<std::vector<Expr>> reads;

 protected:
  void visit_tensor_read(const TensorReadNode* n) override {
    if (n->op.get() == op_) reads.push_back(n->indices);
    IRVisitor::visit_tensor_read(n);
  }

 private:
  const OperationNode* op_;
};

RelaxMap axes_of(const StageNode& st) {
  RelaxMap axes;
  for (const IterVar& iv : st.op->axis) axes[iv.var().get()] = iv.dom();
  return axes;
}

// A loop's extent as regions see it. A reduction's extent may use its stage's data axes
// (a causal mask's keys per query): over a region, it runs to its largest value over
// their domains (lowering keeps each point to its own; see build_loop_nests).
Expr region_extent(const StageNode& st, const IterVar& leaf, const Range& r, const VarBounds& known) {
  if (leaf.type() != IterVarType::Reduce || st.op->axis.empty()) return r.extent;
  const RelaxMap axes = axes_of(st);
  if (!uses_any(r.extent, axes)) return r.extent;
  const IntSet ends = eval_set(r.extent, axes, known);
  return ends.max.defined() && !uses_any(ends.max, axes) ? simplify(ends.max, known) : r.extent;
}

// The region of `producer` that `consumer` reads, one set per dimension (undefined ends:
// not bounded by the analysis).
std::vector<IntSet> region_read(const ScheduleNode& s, const StageNode& producer, const StageNode& consumer,
                                const BoundMap& b, const VarBounds& known_shapes) {
  std::set<const IterVarNode*> attach;
  for (const AttachLevel& lv : attach_path(s, producer)) attach.insert(lv.iv.get());

  RelaxMap relax;
  std::map<const IterVarNode*, Expr> leaf_val;
  bool found = false;
  VarBounds known = known_shapes;
  for (const AttachLevel& lv : attach_path(s, consumer))
    add_range_bounds(known, lv.iv.var(), 0, region_extent(*lv.stage, lv.iv, b.at(lv.iv), known_shapes));
  for (const IterVar& leaf : consumer.leaf_iter_vars)
    add_range_bounds(known, leaf.var(), 0, region_extent(consumer, leaf, b.at(leaf), known_shapes));
  const auto& leaves = consumer.leaf_iter_vars;
  for (auto it = leaves.rbegin(); it != leaves.rend(); ++it) {
    const IterVar& leaf = *it;
    if (attach.count(leaf.get())) found = true;
    const Range& r = b.at(leaf);
    if (is_one(r.extent)) {
      leaf_val[leaf.get()] = r.min;
    } else if (need_relax(consumer, leaf, found, producer.scope)) {
      // (A lower bound in the stage's axes is rewritten in their values below: `known`
      // holds their loop variables' ranges, not their values'.)
      leaf_val[leaf.get()] = is_zero(r.min)                       ? Expr(leaf.var())
                             : uses_any(r.min, axes_of(consumer)) ? r.min + leaf.var()
                                                                  : simplify(r.min + leaf.var(), known);
      relax[leaf.var().get()] = Range::from_min_extent(0, region_extent(consumer, leaf, r, known_shapes));
    } else {
      leaf_val[leaf.get()] = leaf_value(s, consumer, leaf, b);
    }
  }
  for (const AttachLevel& lv : attach_path(s, consumer)) {
    if (attach.count(lv.iv.get())) found = true;
    if (need_relax(*lv.stage, lv.iv, found, producer.scope))
      relax[lv.iv.var().get()] = Range::from_min_extent(0, region_extent(*lv.stage, lv.iv, b.at(lv.iv), known_shapes));
  }
  if (!attach.empty() && !found)
    throw Error(fmt::format(
        "lower: stage '{}' is computed at axis '{}' of stage '{}', but its reader '{}' "
        "does not run inside that loop",
        producer.op->name, producer.attach_ivar.name(), attach_parent(s, producer)->op->name, consumer.op->name));

  auto values = pass_up_values(consumer, leaf_val, b, known);
  std::vector<std::pair<Var, Expr>> roots;
  for (const IterVar& iv : consumer.op->axis) roots.emplace_back(iv.var(), values.at(iv.get()));
  // A reduction axis's value starts at its lower bound, which may use the stage's axes
  // (a window narrowed to the taps inside a padding): those are rewritten in the loops'
  // values too, as build_loop_nests does.
  for (const IterVar& iv : consumer.op->reduce_axis)
    roots.emplace_back(iv.var(), substitute(values.at(iv.get()), roots));

  ReadIndexCollector reads(producer.op.get());
  reads.visit(consumer.op->body);
  // Data-dependent reduction bounds and scatter positions read tensors too.
  for (const IterVar& iv : consumer.op->reduce_axis) {
    reads.visit(iv.dom().min);
    reads.visit(iv.dom().extent);
  }
  for (const Expr& e : consumer.op->scatter_index) reads.visit(e);
  std::vector<IntSet> region(producer.op->axis.size());
  bool first = true;
  for (const auto& idx : reads.reads) {
    for (size_t d = 0; d < idx.size(); ++d) {
      IntSet set = eval_set(substitute(idx[d], roots), relax, known);
      region[d] = first ? set : union_set(region[d], set, known);
    }
    first = false;
  }
  return region;
}

Range declared(const IterVar& iv, const VarBounds& known) {
  return Range::from_min_extent(simplify(iv.dom().min, known), simplify(iv.dom().extent, known));
}

void infer_root(const ScheduleNode& s, const StageNode& st, BoundMap& b, const VarBounds& known) {
  const Operation& op = st.op;
  for (const IterVar& iv : op->reduce_axis) b.set(iv, declared(iv, known));
  std::vector<const StageNode*> consumers = consumers_of(s, st);
  // A scatter writes anywhere in its output, so it runs over all of its domain.
  if (st.is_output || consumers.empty() || op->is_scatter()) {
    for (const IterVar& iv : op->axis) b.set(iv, declared(iv, known));
    return;
  }
  std::vector<IntSet> region;
  for (const StageNode* c : consumers) {
    std::vector<IntSet> r = region_read(s, st, *c, b, known);
    if (region.empty()) {
      region = r;
    } else {
      for (size_t d = 0; d < r.size(); ++d) region[d] = union_set(region[d], r[d], known);
    }
  }
  for (size_t d = 0; d < op->axis.size(); ++d) {
    const Range& dom = op->axis[d].dom();
    Expr dmax = simplify(dom.min + dom.extent - 1, known);
    Expr lo = region[d].min, hi = region[d].max;
    // Reads the analysis cannot bound, or provably outside the tensor, stop at its edges.
    // So do reads whose ends depend on tensor values (data-dependent reduction bounds).
    if (!lo.defined() || !sched::reads_of(lo).empty() || can_prove(lo < dom.min, known)) lo = dom.min;
    if (!hi.defined() || !sched::reads_of(hi).empty() || can_prove(hi > dmax, known)) hi = dmax;
    // (No point reads it at all where every window read is empty: a window wholly in a
    // padding that skip_padding narrowed to nothing.)
    Expr extent = simplify(hi - lo + 1, known);
    if (const int64_t* e = as_const_int(extent); e && *e < 0) extent = make_zero(extent.dtype());
    b.set(op->axis[d], Range::from_min_extent(simplify(lo, known), extent));
  }
}

// A stage's region may only depend on the loops around it: a loop of a consumer that
// does not enclose the stage (a thread loop the region was not relaxed over, say) has no
// value where the stage runs.
void check_region_in_scope(const ScheduleNode& s, const StageNode& st, const BoundMap& b) {
  RelaxMap other_loops;
  std::map<const VarNode*, const StageNode*> owner;
  for (const auto& o : s.stages)
    for (const IterVar& leaf : o->leaf_iter_vars) {
      other_loops[leaf.var().get()] = Range();
      owner[leaf.var().get()] = o.get();
    }
  for (const AttachLevel& lv : attach_path(s, st)) other_loops.erase(lv.iv.var().get());
  for (const IterVar& iv : st.op->axis) {
    const Range& r = b.at(iv);
    for (const Expr& e : {r.min, r.extent}) {
      for (const auto& [var, stage] : owner) {
        if (!other_loops.count(var) || !uses_any(e, RelaxMap{{var, Range()}})) continue;
        throw Error(fmt::format(
            "lower: the region of stage '{}' computed {} depends on loop '{}' of stage '{}', "
            "which does not run around it; compute '{}' inside that loop, or give it a "
            "memory scope that the threads of that loop share",
            st.op->name, st.attach_type == AttachType::Scope ? "at '" + st.attach_ivar.name() + "'" : "at the root",
            var->name, stage->op->name, st.op->name));
      }
    }
  }
}

}  // namespace

BoundMap infer_bound_inlined(const Schedule& schedule) {
  const ScheduleNode& s = *schedule.get();
  VarBounds known = shape_var_bounds(s);
  BoundMap b;
  for (auto it = s.stages.rbegin(); it != s.stages.rend(); ++it) {
    const StageNode& st = **it;
    if (st.op->kind != OpKind::Compute || st.attach_type == AttachType::Inline) continue;
    infer_root(s, st, b, known);
    check_region_in_scope(s, st, b);
    pass_down(st, b, known);
  }
  return b;
}

}  // namespace lowering
}  // namespace te
