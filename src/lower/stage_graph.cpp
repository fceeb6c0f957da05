#include "lower/stage_graph.h"

#include <algorithm>
#include <climits>

#include "expr/analysis.h"
#include "schedule/graph_queries.h"
#include "schedule/stage_lookup.h"

namespace te::lowering {

const StageNode* stage_of_op(const ScheduleNode& s, const OperationNode* op) {
  for (const auto& st : s.stages)
    if (st->op.get() == op) return st.get();
  return nullptr;
}

const StageNode* attach_parent(const ScheduleNode& s, const StageNode& st) {
  auto p = sched::find_stage(s, st.attach_op.get());
  TE_ICHECK(p != nullptr, "attach stage missing");
  return p.get();
}

std::vector<AttachLevel> attach_path(const ScheduleNode& s, const StageNode& st) {
  std::vector<AttachLevel> path;
  for (const StageNode* cur = &st; cur->attach_type == AttachType::Scope;) {
    const StageNode* parent = attach_parent(s, *cur);
    int pos = sched::index_of(parent->leaf_iter_vars, cur->attach_ivar);
    TE_ICHECK(pos >= 0, "attach axis is not a leaf of its stage");
    for (int i = pos; i >= 0; --i) path.push_back({parent, parent->leaf_iter_vars[static_cast<size_t>(i)]});
    cur = parent;
  }
  return path;
}

std::vector<const StageNode*> consumers_of(const ScheduleNode& s, const StageNode& st) {
  std::vector<const StageNode*> out;
  for (const auto& c : s.stages)
    if (c->op->kind == OpKind::Compute && c->attach_type != AttachType::Inline && sched::reads(c->op, st.op.get()))
      out.push_back(c.get());
  return out;
}

std::string thread_tag(const StageNode& st, const IterVar& iv) {
  auto it = st.attrs.find(iv.get());
  if (it == st.attrs.end() || it->second.kind != ForKind::ThreadBinding) return "";
  const std::string& tag = it->second.thread->thread_tag;
  return tag.rfind("vthread", 0) == 0 ? "" : tag;
}

std::set<const VarNode*> vthread_loop_vars(const ScheduleNode& s) {
  std::set<const VarNode*> out;
  for (const auto& st : s.stages)
    for (const auto& [iv, attr] : st->attrs)
      if (attr.kind == ForKind::ThreadBinding && attr.thread->thread_tag.rfind("vthread", 0) == 0)
        out.insert(iv->var.get());
  return out;
}

int thread_rank(const std::string& tag) { return tag.rfind("blockIdx", 0) == 0 ? 0 : 1; }

int scope_rank(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::Global: return 0;
    case MemoryScope::Shared: return 1;
    case MemoryScope::Local: return 2;
    case MemoryScope::Warp:                 // one copy per thread of the loop IR (a warp on the GPU)
    case MemoryScope::Warpgroup: return 2;  // (a warpgroup)
  }
  return 0;
}

AttachLevel thread_loop(const ScheduleNode& s, const StageNode& st, const IterVar& leaf) {
  std::string tag = thread_tag(st, leaf);
  if (!tag.empty())
    for (const AttachLevel& lv : attach_path(s, st))
      if (thread_tag(*lv.stage, lv.iv) == tag) return thread_loop(s, *lv.stage, lv.iv);
  return {&st, leaf};
}

Expr leaf_value(const ScheduleNode& s, const StageNode& st, const IterVar& leaf, const BoundMap& bounds) {
  AttachLevel loop = thread_loop(s, st, leaf);
  const Range& own = bounds.at(leaf);
  const Var& v = loop.stage == &st ? leaf.var() : loop.iv.var();
  return is_zero(own.min) ? Expr(v) : simplify(own.min + v);
}

bool shifts_inwards(const SplitRelation& sp, const Expr& extent, const VarBounds& known) {
  return sp.tail == TailStrategy::ShiftInwards && sp.factor.defined() && !can_prove(extent % sp.factor == 0, known) &&
         can_prove(extent >= sp.factor, known);
}

std::vector<IterVar> root_axes_of(const StageNode& st, const IterVar& leaf) {
  std::vector<IterVar> todo{leaf}, roots;
  while (!todo.empty()) {
    IterVar v = todo.back();
    todo.pop_back();
    bool derived = false;
    for (const Relation& rel : st.relations) {
      if (const auto* sp = std::get_if<SplitRelation>(&rel); sp && (sp->outer.same_as(v) || sp->inner.same_as(v))) {
        todo.push_back(sp->parent);
        derived = true;
      } else if (const auto* f = std::get_if<FuseRelation>(&rel); f && f->fused.same_as(v)) {
        todo.push_back(f->outer);
        todo.push_back(f->inner);
        derived = true;
      }
    }
    if (!derived) roots.push_back(v);
  }
  return roots;
}

std::map<const IterVarNode*, Expr> pass_up_values(const StageNode& st, std::map<const IterVarNode*, Expr> value,
                                                  const BoundMap& bounds, const VarBounds& known) {
  for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
    if (const auto* sp = std::get_if<SplitRelation>(&*it)) {
      Expr factor = sp->factor.defined() ? sp->factor : bounds.at(sp->inner).extent;
      const Range& pr = bounds.at(sp->parent);
      Expr outer = value.at(sp->outer.get()) - bounds.at(sp->outer).min;
      Expr inner = value.at(sp->inner.get()) - bounds.at(sp->inner).min;
      Expr start = outer * factor;
      if (shifts_inwards(*sp, pr.extent, known)) start = min(start, pr.extent - factor);
      value[sp->parent.get()] = simplify(pr.min + start + inner, known);
    } else if (const auto* f = std::get_if<FuseRelation>(&*it)) {
      Expr fused = value.at(f->fused.get()) - bounds.at(f->fused).min;
      Expr ie = bounds.at(f->inner).extent;
      value[f->outer.get()] = simplify(bounds.at(f->outer).min + fused / ie, known);
      value[f->inner.get()] = simplify(bounds.at(f->inner).min + fused % ie, known);
    }
  }
  return value;
}

namespace {

// A dimension c * v + d (c > 0) of an int32 shape must fit int32: v <= (INT32_MAX - d) / c.
void constrain_by_extent(const Expr& e, VarBounds& vb) {
  const std::vector<Var> vars = free_vars(e);
  for (const Var& v : vars)
    if (!vb.count(v.get())) vb[v.get()] = Interval{0, kShapeVarMax};
  if (vars.size() != 1 || e.dtype() != Int(32)) return;
  const Var& v = vars[0];
  const std::optional<LinearIn> linear = linear_in(e, v);
  const int64_t* off = linear ? as_const_int(linear->rest) : nullptr;
  if (!off || linear->coef <= 0) return;
  const int64_t* coef = &linear->coef;
  int64_t top = (int64_t{INT32_MAX} - *off) / *coef;
  Interval& iv = vb[v.get()];
  iv.max = std::max<int64_t>(0, std::min(iv.max, top));
}

}  // namespace

VarBounds shape_var_bounds(const ScheduleNode& s) {
  VarBounds vb;
  // A variable split factor is positive (split checks constant ones).
  for (const auto& st : s.stages)
    for (const Relation& rel : st->relations)
      if (const auto* sp = std::get_if<SplitRelation>(&rel)) {
        const Expr& amount = sp->factor.defined() ? sp->factor : sp->nparts;
        if (const auto* v = amount.as<VarNode>()) vb[v] = Interval{1, kShapeVarMax};
      }
  for (const auto& st : s.stages) {
    for (const Expr& e : st->op->shape) constrain_by_extent(e, vb);
    for (const IterVar& iv : st->op->reduce_axis) {
      constrain_by_extent(iv.dom().min, vb);
      constrain_by_extent(iv.dom().extent, vb);
    }
  }
  return vb;
}

}  // namespace te::lowering
