// Loop structure primitives: split, split_nparts, fuse, reorder, tile.
#include <fmt/format.h>

#include <algorithm>

#include "schedule/messages.h"
#include "schedule/stage_lookup.h"
#include "te/schedule.h"
#include "te/simplify.h"

namespace te {

using sched::quote;

namespace {

void check_compute(const StageNode& s, const char* primitive) {
  if (s.op->kind != OpKind::Compute)
    throw Error(
        fmt::format("{}: stage {} is a placeholder; it has no loops to schedule", primitive, quote(s.op->name)));
}

// A loop that carries an annotation or an attached stage cannot be replaced by others.
void check_replaceable(const ScheduleNode& sch, const StageNode& s, const IterVar& iv, const char* primitive) {
  auto it = s.attrs.find(iv.get());
  if (it != s.attrs.end())
    throw Error(fmt::format("{}: axis {} of stage {} is already {}; restructure loops before annotating them",
                            primitive, quote(iv.name()), quote(s.op->name), sched::describe_attr(it->second)));
  for (const auto& other : sch.stages)
    if (other->attach_type == AttachType::Scope && other->attach_ivar.same_as(iv))
      throw Error(
          fmt::format("{}: stage {} is computed at axis {} of stage {}; restructure loops before "
                      "compute_at",
                      primitive, quote(other->op->name), quote(iv.name()), quote(s.op->name)));
}

// The split amount in the parent's index type; it must be a positive integer.
Expr check_amount(const StageNode& s, const IterVar& parent, Expr amount, const char* primitive, const char* what) {
  if (!amount.defined() || !amount.dtype().is_integer() || !amount.dtype().is_scalar())
    throw Error(fmt::format("{}: the {} for axis {} of stage {} must be an integer", primitive, what,
                            quote(parent.name()), quote(s.op->name)));
  DataType t = parent.var().dtype();
  if (const int64_t* v = as_const_int(amount)) {
    if (*v <= 0)
      throw Error(fmt::format("{}: the {} for axis {} of stage {} must be positive, got {}", primitive, what,
                              quote(parent.name()), quote(s.op->name), *v));
    return make_const(t, *v);
  }
  return amount.dtype() == t ? amount : cast(t, amount);
}

Expr ceil_div(const Expr& a, const Expr& b) { return simplify((a + b - 1) / b); }

// Smaller of a known extent and a split amount, when both are constants.
Expr clamp_to_extent(const Expr& amount, const Expr& extent) {
  const int64_t* a = as_const_int(amount);
  const int64_t* e = as_const_int(extent);
  if (a && e && *e < *a) return extent;
  return amount;
}

IterVar derived(const IterVar& from, const std::string& name, Expr extent) {
  DataType t = from.var().dtype();
  return IterVar(Range::from_min_extent(make_zero(t), std::move(extent)), Var(name, t), from.type());
}

// ShiftInwards recomputes the points where the last iteration overlaps the one before:
// harmless for a pure stage, but a reduction would accumulate them twice.
void check_tail(const StageNode& s, const IterVar& parent, TailStrategy tail, const char* primitive) {
  if (tail != TailStrategy::ShiftInwards) return;
  if (s.op->scatter_accumulate)
    throw Error(
        fmt::format("{}: ShiftInwards on axis {} of stage {}: the stage is a scatter-add, and the "
                    "overlapping last iteration would add some points twice; use GuardWithIf",
                    primitive, quote(parent.name()), quote(s.op->name)));
  if (s.op->reduce_axis.empty()) return;
  throw Error(
      fmt::format("{}: ShiftInwards on axis {} of stage {}: the stage is a reduction, and the "
                  "overlapping last iteration would accumulate some points twice; use GuardWithIf",
                  primitive, quote(parent.name()), quote(s.op->name)));
}

std::pair<IterVar, IterVar> do_split(const ScheduleNode& sch, StageNode& s, const IterVar& parent, Expr factor,
                                     Expr nparts, TailStrategy tail, const char* primitive) {
  check_compute(s, primitive);
  size_t pos = sched::check_leaf(s, parent, primitive);
  check_replaceable(sch, s, parent, primitive);
  check_tail(s, parent, tail, primitive);
  Expr ext = parent.dom().extent;
  IterVar outer, inner;
  if (factor.defined()) {
    factor = check_amount(s, parent, factor, primitive, "factor");
    outer = derived(parent, parent.name() + ".outer", ceil_div(ext, factor));
    inner = derived(parent, parent.name() + ".inner",
                    tail == TailStrategy::GuardWholeTiles ? factor : clamp_to_extent(factor, ext));
  } else {
    nparts = check_amount(s, parent, nparts, primitive, "number of parts");
    outer = derived(parent, parent.name() + ".outer", clamp_to_extent(nparts, ext));
    inner = derived(parent, parent.name() + ".inner", ceil_div(ext, nparts));
  }
  s.relations.push_back(SplitRelation{parent, outer, inner, factor, nparts, tail});
  s.all_iter_vars.push_back(outer);
  s.all_iter_vars.push_back(inner);
  s.leaf_iter_vars[pos] = outer;
  s.leaf_iter_vars.insert(s.leaf_iter_vars.begin() + static_cast<std::ptrdiff_t>(pos) + 1, inner);
  return {outer, inner};
}

}  // namespace

std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, Expr factor, TailStrategy tail) {
  return do_split(*schedule_, *node_, parent, std::move(factor), Expr(), tail, "split");
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& parent, Expr nparts) {
  return do_split(*schedule_, *node_, parent, Expr(), std::move(nparts), TailStrategy::GuardWithIf, "split_nparts");
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  StageNode& s = *node_;
  check_compute(s, "fuse");
  size_t po = sched::check_leaf(s, outer, "fuse");
  size_t pi = sched::check_leaf(s, inner, "fuse");
  if (pi != po + 1)
    throw Error(fmt::format("fuse: axes {} and {} of stage {} are not adjacent loops with {} directly outside {}",
                            quote(outer.name()), quote(inner.name()), quote(name()), quote(outer.name()),
                            quote(inner.name())));
  if (outer.type() != inner.type())
    throw Error(fmt::format("fuse: axes {} and {} of stage {} mix a data-parallel and a reduction axis",
                            quote(outer.name()), quote(inner.name()), quote(name())));
  check_replaceable(*schedule_, s, outer, "fuse");
  check_replaceable(*schedule_, s, inner, "fuse");
  Expr ext = simplify(outer.dom().extent * inner.dom().extent);
  IterVar fused = derived(outer, outer.name() + "." + inner.name() + ".fused", ext);
  s.relations.push_back(FuseRelation{outer, inner, fused});
  s.all_iter_vars.push_back(fused);
  s.leaf_iter_vars[po] = fused;
  s.leaf_iter_vars.erase(s.leaf_iter_vars.begin() + static_cast<std::ptrdiff_t>(pi));
  return fused;
}

IterVar Stage::fuse(const std::vector<IterVar>& given) {
  const std::vector<IterVar> axes = given;  // a copy: `given` may be this stage's leaves, which fusing changes
  StageNode& s = *node_;
  check_compute(s, "fuse");
  if (axes.empty()) {
    if (!s.leaf_iter_vars.empty()) throw Error(fmt::format("fuse: no axes given for stage {}", quote(name())));
    IterVar one(Range::from_min_extent(0, 1), Var("fused"), IterVarType::DataPar);
    s.relations.push_back(SingletonRelation{one});
    s.all_iter_vars.push_back(one);
    s.leaf_iter_vars.push_back(one);
    return one;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t p = sched::check_leaf(s, axes[i], "fuse");
    if (i > 0 && p != sched::check_leaf(s, axes[i - 1], "fuse") + 1)
      throw Error(
          fmt::format("fuse: axes {} and {} of stage {} are not adjacent loops with {} directly "
                      "outside {}",
                      quote(axes[i - 1].name()), quote(axes[i].name()), quote(name()), quote(axes[i - 1].name()),
                      quote(axes[i].name())));
  }
  IterVar acc = axes[0];
  for (size_t i = 1; i < axes.size(); ++i) acc = fuse(acc, axes[i]);
  return acc;
}

void Stage::reorder(const std::vector<IterVar>& given) {
  const std::vector<IterVar> order = given;  // a copy: `given` may be this stage's leaves
  StageNode& s = *node_;
  check_compute(s, "reorder");
  std::vector<size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) {
    pos.push_back(sched::check_leaf(s, order[i], "reorder"));
    for (size_t j = 0; j < i; ++j)
      if (order[j].same_as(order[i]))
        throw Error(fmt::format("reorder: axis {} of stage {} appears twice", quote(order[i].name()), quote(name())));
  }
  std::vector<size_t> slots = pos;
  std::sort(slots.begin(), slots.end());
  for (size_t i = 0; i < order.size(); ++i) s.leaf_iter_vars[slots[i]] = order[i];
}

std::tuple<IterVar, IterVar, IterVar, IterVar> Stage::tile(const IterVar& x, const IterVar& y, Expr x_factor,
                                                           Expr y_factor) {
  if (x.same_as(y))
    throw Error(
        fmt::format("tile: the two axes given for stage {} are the same axis {}", quote(name()), quote(x.name())));
  // Check everything first so that a bad call leaves the stage as it was.
  for (const IterVar* iv : {&x, &y}) {
    sched::check_leaf(*node_, *iv, "tile");
    check_replaceable(*schedule_, *node_, *iv, "tile");
  }
  check_amount(*node_, x, x_factor, "tile", "factor");
  check_amount(*node_, y, y_factor, "tile", "factor");
  auto [xo, xi] = split(x, std::move(x_factor));
  auto [yo, yi] = split(y, std::move(y_factor));
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

}  // namespace te
