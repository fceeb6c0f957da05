// te::scatter: a compute over a domain that writes at positions it computes (possibly
// read from tensors), updating a base tensor that its stage fills in place.
#include <fmt/format.h>

#include <algorithm>

#include "expr/compute_parts.h"
#include "expr/simplify_internal.h"
#include "te/ir.h"

namespace te {

namespace {

void check_base(const Tensor& base, const std::string& name) {
  if (!base.defined()) throw Error(fmt::format("scatter '{}': the base tensor is undefined", name));
  if (base.is_placeholder())
    throw Error(
        fmt::format("scatter '{}': the base '{}' is an input (placeholder); the base must be a compute, "
                    "which the scatter fills in place: copy the input with compute(shape, [&](...) {{ "
                    "return {}(...); }}) or start from zeros",
                    name, base.name(), base.name()));
  if (base.op()->num_outputs() != 1)
    throw Error(
        fmt::format("scatter '{}': the base '{}' is an output of a compute_tuple; the base must be a "
                    "single-output compute",
                    name, base.name()));
}

void check_target(const ScatterTo& to, const Tensor& base, const std::string& name,
                  const std::vector<IterVar>& reduce_axes) {
  if (static_cast<int>(to.index.size()) != base.ndim())
    throw Error(
        fmt::format("scatter '{}': the function gave {} indices, but the output (like its base '{}') has {} "
                    "dimensions",
                    name, to.index.size(), base.name(), base.ndim()));
  for (size_t d = 0; d < to.index.size(); ++d) {
    const Expr& e = to.index[d];
    if (!e.defined()) throw Error(fmt::format("scatter '{}': index {} is undefined", name, d));
    if (!e.dtype().is_integer() || !e.dtype().is_scalar())
      throw Error(
          fmt::format("scatter '{}': index {} must be a scalar integer, got {}", name, d, e.dtype().to_string()));
    const bool uses_reduce_axis = std::any_of(reduce_axes.begin(), reduce_axes.end(),
                                              [&](const IterVar& iv) { return uses_var(e, iv.var().get()); });
    if (uses_reduce_axis)
      throw Error(
          fmt::format("scatter '{}': index {} ({}) uses a reduction axis of the value; the position may "
                      "depend only on the domain's axes and on tensors read at them",
                      name, d, to_string(e)));
  }
  if (to.value.dtype() != base.dtype())
    throw Error(fmt::format("scatter '{}': the value is {} but the base '{}' is {}: cast the value", name,
                            to.value.dtype().to_string(), base.name(), base.dtype().to_string()));
}

}  // namespace

Tensor scatter_from_vars(const Tensor& base, std::vector<Expr> domain,
                         const std::function<ScatterTo(const std::vector<Var>&)>& fn, std::string name,
                         std::vector<std::string> axis_names) {
  using namespace compute_parts;
  check_base(base, name);
  check_shape(domain, name, "scatter");
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::Compute;
  op->name = name;
  op->dtype = base.dtype();
  op->shape = base.shape();
  op->scatter_base = base.op();
  std::vector<Var> vars = make_axes(*op, domain, axis_names, "scatter");
  ScatterTo to = fn(vars);
  check_body(to.value, name, "scatter");
  const auto* red = to.value.as<ReduceNode>();
  if (red && red->sources.size() > 1)
    throw Error(
        fmt::format("scatter '{}': the value is value {} of a {}-value reduction ({}); a scatter writes one "
                    "value",
                    name, red->value_index, red->sources.size(), red->combiner->name));
  // An accumulating scatter's sum adds every term at its own position: its index may use
  // the sum's axes (a scatter-add over a data-dependent range, as bev_pool's intervals).
  const bool per_term = to.accumulate && red && red->reducer == Reducer::Sum;
  check_target(to, base, name, red && !per_term ? red->axis : std::vector<IterVar>{});
  if (to.accumulate && red && !per_term)
    throw Error(
        fmt::format("scatter '{}': an accumulating scatter adds plain values or a sum (each term at its own "
                    "position), not a {} reduction",
                    name, red->combiner ? red->combiner->name : reducer_name(red->reducer)));
  if (to.accumulate && !(base.dtype().is_float() || base.dtype().is_integer()))
    throw Error(
        fmt::format("scatter '{}': an accumulating scatter adds numbers, not {}", name, base.dtype().to_string()));
  op->body = to.value;
  op->scatter_index = to.index;
  if (to.deterministic && !to.accumulate)
    throw Error(
        fmt::format("scatter '{}': deterministic is an option of accumulating scatters (accumulate = true)", name));
  op->scatter_accumulate = to.accumulate;
  op->scatter_deterministic = to.deterministic;
  finish_compute(*op, {to.value}, to.index);
  return Tensor(op);
}

}  // namespace te
