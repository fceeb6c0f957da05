#include "schedule/operation_builders.h"

#include "schedule/graph_queries.h"

namespace te::sched {

Operation make_compute(std::vector<std::string> names, std::vector<Expr> shape, std::vector<IterVar> axis,
                       std::vector<Expr> bodies) {
  TE_ICHECK(!bodies.empty() && names.size() == bodies.size(), "make_compute: one name per body");
  auto n = std::make_shared<OperationNode>();
  n->kind = OpKind::Compute;
  n->name = names[0];
  n->dtype = bodies[0].dtype();
  n->shape = std::move(shape);
  n->axis = std::move(axis);
  if (const auto* r = bodies[0].as<ReduceNode>()) n->reduce_axis = r->axis;
  n->body = bodies[0];
  for (size_t i = 1; i < bodies.size(); ++i) n->more_outputs.push_back({names[i], bodies[i].dtype(), bodies[i]});
  n->inputs = reads_of(*n);
  return n;
}

namespace {

// op with other bodies, scatter base and scatter index (the rest, a row reduction's rows
// included, kept).
Operation rebuild(const Operation& op, std::vector<Expr> bodies, Operation base, std::vector<Expr> index) {
  Operation made = make_compute(output_names(*op), op->shape, op->axis, std::move(bodies));
  auto n = std::const_pointer_cast<OperationNode>(made);
  n->scatter_base = std::move(base);
  n->scatter_index = std::move(index);
  n->scatter_accumulate = op->scatter_accumulate;
  n->scatter_deterministic = op->scatter_deterministic;
  n->row_outputs = op->row_outputs;
  n->row_shape = op->row_shape;
  n->inputs = reads_of(*n);
  return n;
}

}  // namespace

Operation make_compute(std::string name, std::vector<Expr> shape, std::vector<IterVar> axis, Expr body) {
  return make_compute(std::vector<std::string>{std::move(name)}, std::move(shape), std::move(axis),
                      std::vector<Expr>{std::move(body)});
}

std::vector<std::string> output_names(const OperationNode& op) {
  std::vector<std::string> out;
  for (int i = 0; i < op.num_outputs(); ++i) out.push_back(op.output_name(i));
  return out;
}

Operation with_bodies(const Operation& op, std::vector<Expr> bodies) {
  return rebuild(op, std::move(bodies), op->scatter_base, op->scatter_index);
}

Operation map_bodies(const Operation& op, const std::function<Expr(const Expr&)>& fn,
                     const std::map<const OperationNode*, Operation>& new_ops) {
  std::vector<Expr> bodies, index;
  bool changed = false;
  for (const Expr& b : op->bodies()) {
    bodies.push_back(fn(b));
    changed = changed || !bodies.back().same_as(b);
  }
  for (const Expr& e : op->scatter_index) {
    index.push_back(fn(e));
    changed = changed || !index.back().same_as(e);
  }
  Operation base = op->scatter_base;
  if (auto it = new_ops.find(base.get()); base && it != new_ops.end()) {
    base = it->second;
    changed = true;
  }
  return changed ? rebuild(op, std::move(bodies), std::move(base), std::move(index)) : op;
}

Expr rename_vars(const Expr& e, const std::vector<std::pair<Var, Expr>>& rename) {
  const auto* red = e.as<ReduceNode>();
  if (!red) return substitute(e, rename);
  std::vector<std::pair<Var, Expr>> map = rename;
  std::vector<IterVar> axes;
  bool changed = false;
  for (const IterVar& iv : red->axis) {
    Expr min = substitute(iv.dom().min, map), extent = substitute(iv.dom().extent, map);
    if (min.same_as(iv.dom().min) && extent.same_as(iv.dom().extent)) {
      axes.push_back(iv);
      continue;
    }
    IterVar fresh(Range::from_min_extent(min, extent), Var(iv.name(), iv.var().dtype()), IterVarType::Reduce);
    map.emplace_back(iv.var(), fresh.var());
    axes.push_back(fresh);
    changed = true;
  }
  if (!changed) return substitute(e, rename);
  std::vector<Expr> sources;
  for (const Expr& src : red->sources) sources.push_back(substitute(src, map));
  Expr cond = red->condition.defined() ? substitute(red->condition, map) : Expr();
  return Expr(
      std::make_shared<ReduceNode>(red->dtype, red->reducer, red->combiner, sources, axes, cond, red->value_index));
}

}  // namespace te::sched
