// rfactor: factors a reduction over one of its leaf reduction loops into a new stage.
#include <fmt/format.h>

#include <set>

#include "expr/reduce_rule.h"
#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/operation_builders.h"
#include "schedule/stage_lookup.h"
#include "te/schedule.h"
#include "te/simplify.h"

namespace te {

using sched::quote;

namespace {

using IvSet = std::set<const IterVarNode*>;

bool in(const IvSet& s, const IterVar& iv) { return s.count(iv.get()) != 0; }

// The iter vars related to `axis`: the roots it derives from and everything derived from them.
IvSet touched_by(const StageNode& st, const IterVar& axis) {
  IvSet up{axis.get()};
  for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
    if (const auto* s = std::get_if<SplitRelation>(&*it)) {
      if (in(up, s->outer) || in(up, s->inner)) up.insert(s->parent.get());
    } else if (const auto* f = std::get_if<FuseRelation>(&*it)) {
      if (in(up, f->fused)) up.insert({f->outer.get(), f->inner.get()});
    }
  }
  IvSet down;
  for (const IterVar& r : st.op->reduce_axis)
    if (in(up, r)) down.insert(r.get());
  for (const Relation& rel : st.relations) {
    if (const auto* s = std::get_if<SplitRelation>(&rel)) {
      if (in(down, s->parent)) down.insert({s->outer.get(), s->inner.get()});
    } else if (const auto* f = std::get_if<FuseRelation>(&rel)) {
      if (in(down, f->outer) || in(down, f->inner)) down.insert(f->fused.get());
    }
  }
  return down;
}

bool divides(const Expr& amount, const Expr& extent) {
  const int64_t* a = as_const_int(amount);
  const int64_t* e = as_const_int(extent);
  return a && e && *a > 0 && *e % *a == 0;
}

// Root values in terms of the leaf vars (leaf_value gives each leaf's), and the guards
// that keep uneven splits inside their parents.
struct RootValues {
  std::map<const IterVarNode*, Expr> value;
  Expr guard;
};

RootValues pass_up(const StageNode& st, const IvSet& touched, std::map<const IterVarNode*, Expr> value) {
  RootValues out;
  for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
    if (const auto* s = std::get_if<SplitRelation>(&*it)) {
      if (!in(touched, s->parent)) continue;
      const Range& pd = s->parent.dom();
      Expr factor = s->factor.defined() ? s->factor : s->inner.dom().extent;
      Expr v = simplify(value.at(s->outer.get()) * factor + value.at(s->inner.get()) + pd.min);
      value[s->parent.get()] = v;
      bool exact = s->factor.defined() ? divides(s->factor, pd.extent) : divides(s->nparts, pd.extent);
      if (!exact) {
        Expr g = v < pd.min + pd.extent;
        out.guard = out.guard.defined() ? (out.guard && g) : g;
      }
    } else if (const auto* f = std::get_if<FuseRelation>(&*it)) {
      if (!in(touched, f->fused)) continue;
      Expr fv = value.at(f->fused.get());
      Expr ie = f->inner.dom().extent;
      value[f->outer.get()] = simplify(fv / ie + f->outer.dom().min);
      value[f->inner.get()] = simplify(fv % ie + f->inner.dom().min);
    }
  }
  out.value = std::move(value);
  return out;
}

}  // namespace

Tensor Schedule::rfactor(const Tensor& t, const IterVar& axis, int factor_axis) {
  ScheduleNode& s = *node_;
  if (!t.defined()) throw Error("rfactor: undefined tensor");
  auto st = sched::find_stage(s, t.op().get());
  if (!st) throw Error(fmt::format("rfactor: tensor {} is not part of this schedule", quote(t.name())));
  Operation op = st->op;
  const auto* red = op->kind == OpKind::Compute ? op->body.as<ReduceNode>() : nullptr;
  if (op->is_scatter())
    throw Error(
        fmt::format("rfactor: stage {} is a scatter; its reduction writes at positions it computes, so "
                    "it cannot be split into partial sums: rfactor a compute and scatter its result",
                    quote(op->name)));
  if (!red) throw Error(fmt::format("rfactor: stage {} is not a reduction", quote(op->name)));
  sched::check_leaf(*st, axis, "rfactor");
  for (const IterVar& r : op->reduce_axis)
    if (sched::has_dependent_bounds(r, *op))
      throw Error(fmt::format(
          "rfactor: reduction axis {} of stage {} has bounds that read tensors or use the "
          "stage's axes ({} to {}); rfactor needs bounds fixed for the whole stage",
          quote(r.name()), quote(op->name), to_string(r.dom().min), to_string(simplify(r.dom().min + r.dom().extent))));
  if (axis.type() != IterVarType::Reduce)
    throw Error(
        fmt::format("rfactor: axis {} of stage {} is not a reduction axis", quote(axis.name()), quote(op->name)));
  // A row reduction's partial states are rows too: the factored dimension goes among
  // the row axes.
  const int rows = static_cast<int>(op->row_shape.size());
  int ndim = static_cast<int>(op->is_row_reduction() ? op->row_shape.size() : op->axis.size());
  if (factor_axis < 0 || factor_axis > ndim)
    throw Error(fmt::format("rfactor: factor_axis {} for stage {} must be between 0 and {}{}", factor_axis,
                            quote(op->name), ndim,
                            op->is_row_reduction() ? " (a row reduction's factored dimension is a row axis)" : ""));
  for (const auto& other : s.stages)
    if (other->attach_type == AttachType::Scope && other->attach_op == st->origin_op &&
        sched::index_of(op->axis, other->attach_ivar) < 0)
      throw Error(fmt::format("rfactor: stage {} is computed at axis {} of stage {}, which rfactor removes",
                              quote(other->op->name), quote(other->attach_ivar.name()), quote(op->name)));

  // rfactor rebuilds the stage's loops (its axes, then the factored reduction): a loop
  // schedule given before would be dropped.
  for (const IterVar& leaf : st->leaf_iter_vars) {
    auto it = st->attrs.find(leaf.get());
    if (it != st->attrs.end())
      throw Error(
          fmt::format("rfactor: axis {} of stage {} is {}, but rfactor rebuilds the stage's loops; "
                      "annotate stage {} after rfactor",
                      quote(leaf.name()), quote(op->name), sched::describe_attr(it->second), quote(op->name)));
  }
  for (const Relation& rel : st->relations) {
    const auto* sp = std::get_if<SplitRelation>(&rel);
    const auto* fu = std::get_if<FuseRelation>(&rel);
    const IterVar& iv = sp ? sp->parent : fu ? fu->outer : std::get<SingletonRelation>(rel).iv;
    if (iv.type() != IterVarType::Reduce)
      throw Error(
          fmt::format("rfactor: data axis {} of stage {} is {}, but rfactor rebuilds the stage's data "
                      "loops; split or fuse them after rfactor",
                      quote(iv.name()), quote(op->name), sp ? "split" : "fused"));
  }

  // The factored stage: op's axes (renamed) with axis's iterations inserted as a dimension.
  IvSet touched = touched_by(*st, axis);
  std::vector<std::pair<Var, Expr>> subst;
  std::vector<IterVar> rf_axes;
  std::vector<Expr> rf_shape;
  for (const IterVar& iv : op->axis) {
    Var v(iv.name(), iv.var().dtype());
    rf_axes.emplace_back(iv.dom(), v, IterVarType::DataPar);
    rf_shape.push_back(iv.dom().extent);
    subst.emplace_back(iv.var(), v);
  }
  DataType at = axis.var().dtype();
  Expr factor_extent = simplify(axis.dom().extent);
  Var fv(axis.name(), at);
  rf_axes.insert(rf_axes.begin() + factor_axis,
                 IterVar(Range::from_min_extent(make_zero(at), factor_extent), fv, IterVarType::DataPar));
  rf_shape.insert(rf_shape.begin() + factor_axis, factor_extent);

  std::map<const IterVarNode*, Expr> leaf_value;
  std::vector<IterVar> rf_reduce;
  for (const IterVar& r : op->reduce_axis)
    if (!in(touched, r)) rf_reduce.push_back(r);
  for (const IterVar& leaf : st->leaf_iter_vars) {
    if (!in(touched, leaf)) continue;
    if (leaf.same_as(axis)) {
      leaf_value[leaf.get()] = fv;
    } else {
      rf_reduce.push_back(leaf);
      leaf_value[leaf.get()] = leaf.var();
    }
  }
  RootValues roots = pass_up(*st, touched, leaf_value);
  for (const IterVar& r : op->reduce_axis)
    if (in(touched, r)) subst.emplace_back(r.var(), roots.value.at(r.get()));

  // One output per value of the reduction (several for a tuple reducer such as argmax).
  std::vector<Expr> sources;
  for (const Expr& src : red->sources) sources.push_back(substitute(src, subst));
  Expr cond = red->condition.defined() ? substitute(red->condition, subst) : Expr();
  // The uneven split's guard holds on all but its last iterations: likely(), so that
  // loop_partition peels those off and the rest runs unguarded (a lane-blended update in
  // every iteration otherwise).
  if (roots.guard.defined()) cond = cond.defined() ? (cond && likely(roots.guard)) : likely(roots.guard);
  if (op->is_row_reduction() && rf_reduce.empty())
    throw Error(
        fmt::format("rfactor: stage {} is a row reduction, and rfactor over {} would leave its factored "
                    "stage no reduction: split {} and rfactor over the outer part",
                    quote(op->name), quote(axis.name()), quote(axis.name())));
  const std::vector<Expr> identity = reduce_identity(*red);
  std::vector<Expr> rf_bodies;
  std::vector<std::string> rf_names;
  for (size_t i = 0; i < sources.size(); ++i) {
    const int vi = static_cast<int>(i);
    rf_names.push_back(op->output_name(vi) + ".rf");
    if (rf_reduce.empty())
      rf_bodies.push_back(cond.defined() ? select(cond, sources[i], identity[i]) : sources[i]);
    else
      rf_bodies.emplace_back(
          std::make_shared<ReduceNode>(sources[i].dtype(), red->reducer, red->combiner, sources, rf_reduce, cond, vi));
  }
  Operation rf = sched::make_compute(rf_names, rf_shape, rf_axes, rf_bodies);
  if (op->is_row_reduction()) {  // its partial states: rows with the factored dimension
    auto n = std::const_pointer_cast<OperationNode>(rf);
    n->row_shape.assign(rf_shape.begin(), rf_shape.begin() + rows + 1);
    n->row_outputs = op->row_outputs;
  }

  // The original stage now reduces the partial results over the factored dimension.
  IterVar rv(Range::from_min_extent(make_zero(at), factor_extent), Var(axis.name() + ".v", at), IterVarType::Reduce);
  std::vector<Expr> index;
  for (const IterVar& iv : op->axis) index.push_back(iv.var());
  index.insert(index.begin() + factor_axis, rv.var());
  std::vector<Expr> partials, bodies;
  for (int i = 0; i < rf->num_outputs(); ++i) {
    std::vector<Expr> at = index;  // a row value's partial: at its row
    if (i < rf->row_outputs) at.resize(rf->row_shape.size());
    partials.emplace_back(std::make_shared<TensorReadNode>(rf->output_dtype(i), rf, at, i));
  }
  for (int i = 0; i < rf->num_outputs(); ++i)
    bodies.emplace_back(std::make_shared<ReduceNode>(op->output_dtype(i), red->reducer, red->combiner, partials,
                                                     std::vector<IterVar>{rv}, Expr(), i));
  Operation next = sched::with_bodies(op, bodies);

  sched::set_operation(*st, next);
  st->all_iter_vars = op->axis;
  // (A row reduction's element loops stay inside its reduction, as make_stage orders them.)
  st->all_iter_vars.insert(st->all_iter_vars.begin() + (op->is_row_reduction() ? rows : ndim), rv);
  st->leaf_iter_vars = st->all_iter_vars;
  st->relations.clear();
  st->attrs.clear();
  s.stages.insert(s.stages.begin() + static_cast<std::ptrdiff_t>(sched::stage_index(s, st.get())),
                  sched::make_stage(rf));
  sched::propagate_replacements(s, {{op.get(), next}});
  return Tensor(rf, t.value_index());
}

}  // namespace te
