// split_phases: computes a stage by phases of some of its axes (x = stride * q + a) in a
// new stage, and turns the stage itself into the copy that puts the phases back in place.
#include <fmt/format.h>

#include <algorithm>

#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/operation_builders.h"
#include "schedule/stage_lookup.h"
#include "te/schedule.h"
#include "te/simplify.h"

namespace te {

using sched::quote;

Tensor Schedule::split_phases(const Tensor& t, const std::vector<IterVar>& axes, int stride, const IterVar& innermost) {
  ScheduleNode& s = *node_;
  if (!t.defined()) throw Error("split_phases: undefined tensor");
  auto st = sched::find_stage(s, t.op().get());
  if (!st) throw Error(fmt::format("split_phases: tensor {} is not part of this schedule", quote(t.name())));
  Operation op = st->op;
  const std::string who = quote(op->name);
  if (op->kind != OpKind::Compute) throw Error(fmt::format("split_phases: stage {} is a placeholder", who));
  if (op->is_scatter() || op->is_row_reduction() || op->num_outputs() != 1)
    throw Error(
        fmt::format("split_phases: stage {} is a scatter, a row reduction or a multi-output compute; only a "
                    "compute of one value can be split by phases",
                    who));
  if (stride < 2) throw Error(fmt::format("split_phases: stride {} for stage {} must be at least 2", stride, who));
  if (axes.empty()) throw Error(fmt::format("split_phases: no axes given for stage {}", who));
  if (!st->relations.empty() || !st->attrs.empty())
    throw Error(
        fmt::format("split_phases: stage {} already has a loop schedule, which split_phases would drop; split "
                    "it by phases first",
                    who));
  for (const auto& other : s.stages)
    if (other->attach_type == AttachType::Scope && other->attach_op == st->origin_op)
      throw Error(fmt::format("split_phases: stage {} is computed at a loop of stage {}, which split_phases removes",
                              quote(other->op->name), who));
  std::vector<bool> split(op->axis.size(), false);
  for (const IterVar& x : axes) {
    const int d = sched::index_of(op->axis, x);
    if (d < 0)
      throw Error(fmt::format("split_phases: {} is not an axis of stage {}",
                              x.defined() ? quote(x.name()) : "the undefined axis", who));
    if (split[static_cast<size_t>(d)]) throw Error(fmt::format("split_phases: axis {} given twice", quote(x.name())));
    if (!as_const_int(x.dom().extent) || !is_zero(x.dom().min))
      throw Error(fmt::format("split_phases: axis {} of stage {} needs a constant extent and a minimum of 0",
                              quote(x.name()), who));
    split[static_cast<size_t>(d)] = true;
  }
  int last = -1;  // the axis that goes last in the phase stage, if one is given
  if (innermost.defined()) {
    last = sched::index_of(op->axis, innermost);
    if (last < 0 || split[static_cast<size_t>(last)])
      throw Error(fmt::format("split_phases: innermost axis {} is not an axis of stage {} that is not split",
                              quote(innermost.name()), who));
  }

  // The phase stage: the phases first, then the axes with each split one coarse.
  std::vector<IterVar> phase_axes, coarse_axes;
  std::vector<Expr> phase_shape, coarse_shape;
  std::vector<std::pair<Var, Expr>> at_phase;
  Expr inside;  // the points of P that are points of t (all when stride divides)
  for (size_t d = 0; d < op->axis.size(); ++d) {
    const IterVar& x = op->axis[d];
    DataType it = x.var().dtype();
    if (!split[d]) {
      Var v(x.name(), it);
      coarse_axes.emplace_back(x.dom(), v, IterVarType::DataPar);
      coarse_shape.push_back(x.dom().extent);
      at_phase.emplace_back(x.var(), v);
      continue;
    }
    const int64_t extent = *as_const_int(x.dom().extent);
    Expr n = make_const(it, (extent + stride - 1) / stride), sv = make_const(it, stride);
    Var a(x.name() + ".phase", it), q(x.name() + ".coarse", it);
    phase_axes.emplace_back(Range::from_min_extent(make_zero(it), sv), a, IterVarType::DataPar);
    phase_shape.push_back(sv);
    coarse_axes.emplace_back(Range::from_min_extent(make_zero(it), n), q, IterVarType::DataPar);
    coarse_shape.push_back(n);
    Expr value = q * sv + a;
    at_phase.emplace_back(x.var(), value);
    if (extent % stride != 0) {
      Expr in = value < x.dom().extent;
      inside = inside.defined() ? (inside && in) : in;
    }
  }
  Expr body = sched::rename_vars(op->body, at_phase);
  if (inside.defined()) {
    if (const auto* red = body.as<ReduceNode>()) {
      Expr cond = red->condition.defined() ? (red->condition && inside) : inside;
      body = Expr(std::make_shared<ReduceNode>(red->dtype, red->reducer, red->combiner, red->sources, red->axis, cond,
                                               red->value_index));
    } else {
      body = select(inside, body, make_zero(body.dtype()));
    }
  }
  // coarse_* hold one entry per axis of t, in order: `last` moves to the end.
  auto move_last = [&](auto& v) {
    if (last >= 0) std::rotate(v.begin() + last, v.begin() + last + 1, v.end());
  };
  move_last(coarse_axes);
  move_last(coarse_shape);
  std::vector<IterVar> p_axes = phase_axes;
  p_axes.insert(p_axes.end(), coarse_axes.begin(), coarse_axes.end());
  std::vector<Expr> p_shape = phase_shape;
  p_shape.insert(p_shape.end(), coarse_shape.begin(), coarse_shape.end());
  Operation phases = sched::make_compute(op->name + ".phases", p_shape, p_axes, body);

  // t's stage: the copy back into place.
  std::vector<Expr> phase_index, coarse_index;
  for (size_t d = 0; d < op->axis.size(); ++d) {
    const Var& x = op->axis[d].var();
    if (!split[d]) {
      coarse_index.push_back(x);
      continue;
    }
    Expr sv = make_const(x.dtype(), stride);
    phase_index.push_back(x % sv);
    coarse_index.push_back(x / sv);
  }
  move_last(coarse_index);
  phase_index.insert(phase_index.end(), coarse_index.begin(), coarse_index.end());
  Expr read(std::make_shared<TensorReadNode>(op->dtype, phases, phase_index, 0));
  Operation copy = sched::with_bodies(op, {read});

  st->all_iter_vars = op->axis;
  st->leaf_iter_vars = op->axis;
  s.stages.insert(s.stages.begin() + static_cast<std::ptrdiff_t>(sched::stage_index(s, st.get())),
                  sched::make_stage(phases));
  sched::replace_definition(s, *st, copy);
  return Tensor(phases, 0);
}

}  // namespace te
