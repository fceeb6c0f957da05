// Placeholders, computes, tensor reads and the operation graph.
#include "te/tensor.h"

#include <fmt/format.h>

#include <unordered_set>

#include "expr/analysis.h"
#include "expr/compute_parts.h"
#include "expr/reduce_rule.h"
#include "te/ir.h"

namespace te {

using namespace compute_parts;

void compute_parts::check_shape(const std::vector<Expr>& shape, const std::string& name, const char* what) {
  for (size_t i = 0; i < shape.size(); ++i) {
    const Expr& e = shape[i];
    if (!e.defined()) throw Error(fmt::format("{} '{}': dimension {} is undefined", what, name, i));
    if (!e.dtype().is_integer() || !e.dtype().is_scalar())
      throw Error(
          fmt::format("{} '{}': dimension {} must be a scalar integer, got {}", what, name, i, e.dtype().to_string()));
    if (const int64_t* v = as_const_int(e); v && *v < 0)
      throw Error(fmt::format("{} '{}': dimension {} is negative ({})", what, name, i, *v));
  }
}

namespace {

// Collects the operations a body reads (in order of first use) and checks that reductions
// appear only at the top.
class BodyChecker : public IRVisitor {
 public:
  explicit BodyChecker(const std::string& name) : name_(name) {}
  std::vector<Operation> inputs;

 protected:
  void visit_tensor_read(const TensorReadNode* n) override {
    if (seen_.insert(n->op.get()).second) inputs.push_back(n->op);
    IRVisitor::visit_tensor_read(n);
  }
  void visit_reduce(const ReduceNode*) override {
    throw Error(
        fmt::format("compute '{}': a reduction (sum/prod/min/max/... over axes) must be the whole body, "
                    "not part of a larger expression",
                    name_));
  }
  void visit_load(const LoadNode*) override {
    throw Error(fmt::format("compute '{}': the body may read tensors, not buffers (Load)", name_));
  }

 private:
  const std::string& name_;
  std::unordered_set<const OperationNode*> seen_;
};

}  // namespace

Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  check_shape(shape, name, "placeholder");
  if (!dtype.is_scalar() || dtype.is_void() || dtype.is_handle())
    throw Error(
        fmt::format("placeholder '{}': element type must be a scalar data type, got {}", name, dtype.to_string()));
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::Placeholder;
  op->name = std::move(name);
  op->dtype = dtype;
  op->shape = std::move(shape);
  return Tensor(op);
}

namespace {}  // namespace

namespace compute_parts {

std::vector<Var> make_axes(OperationNode& op, const std::vector<Expr>& shape,
                           const std::vector<std::string>& axis_names, const char* what) {
  static const char* kDefault[] = {"i", "j", "k", "l", "m", "n"};
  if (!axis_names.empty() && axis_names.size() != shape.size())
    throw Error(
        fmt::format("{} '{}': {} axis names given for {} dimensions", what, op.name, axis_names.size(), shape.size()));
  std::vector<Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string axis_name = !axis_names.empty() ? axis_names[d]
                            : shape.size() <= 6 ? kDefault[d]
                                                : fmt::format("i{}", d);
    DataType t = shape[d].dtype().bits() > 32 ? Int(64) : Int(32);
    Var v(axis_name, t);
    vars.push_back(v);
    op.axis.emplace_back(Range::from_min_extent(make_zero(t), shape[d]), v, IterVarType::DataPar);
  }
  return vars;
}

void check_body(const Expr& body, const std::string& name, const char* what) {
  if (!body.defined()) throw Error(fmt::format("{} '{}': the function returned an undefined Expr", what, name));
  if (body.dtype().is_vector())
    throw Error(fmt::format("{} '{}': the body must be a scalar, got {}", what, name, body.dtype().to_string()));
}

}  // namespace compute_parts

namespace {

// The bodies of one compute: all reductions that are the values of one tuple
// reduction, in order, or none a reduction.
void check_tuple_bodies(const std::vector<Expr>& bodies, const std::vector<std::string>& names) {
  const auto* first = bodies[0].as<ReduceNode>();
  for (size_t i = 0; i < bodies.size(); ++i) {
    const auto* r = bodies[i].as<ReduceNode>();
    if (!first && !r) continue;
    if (!first || !r)
      throw Error(
          fmt::format("compute_tuple '{}': output '{}' is {}a reduction but output '{}' is {}: the outputs "
                      "are either all the values of one tuple reduction or all not reductions",
                      names[0], names[i], r ? "" : "not ", names[0], first ? "one" : "not"));
    if (!same_reduction(*r, *first))
      throw Error(
          fmt::format("compute_tuple '{}': output '{}' is not the same reduction as output '{}': the "
                      "outputs must be the values of one tuple reduction (argmax, welford, a "
                      "comm_reducer over a tuple)",
                      names[0], names[i], names[0]));
    if (r->value_index != static_cast<int>(i))
      throw Error(
          fmt::format("compute_tuple '{}': output {} ('{}') is value {} of the reduction: give the values "
                      "in order",
                      names[0], i, names[i], r->value_index));
  }
  if (first && first->sources.size() != bodies.size())
    throw Error(fmt::format("compute_tuple '{}': the reduction has {} values but {} outputs are given", names[0],
                            first->sources.size(), bodies.size()));
}

}  // namespace

namespace compute_parts {

void finish_compute(OperationNode& op, const std::vector<Expr>& bodies, const std::vector<Expr>& more_reads) {
  BodyChecker checker(op.name);
  if (op.scatter_base) checker.inputs.push_back(op.scatter_base);
  for (const Expr& body : bodies) {
    if (auto* r = body.as<ReduceNode>()) {
      op.reduce_axis = r->axis;
      for (const IterVar& iv : r->axis) {
        checker.visit(iv.dom().min);
        checker.visit(iv.dom().extent);
      }
      for (const Expr& s : r->sources) checker.visit(s);
      checker.visit(r->condition);
    } else {
      checker.visit(body);
    }
  }
  for (const Expr& e : more_reads) checker.visit(e);
  op.inputs = std::move(checker.inputs);
}

}  // namespace compute_parts

Tensor compute_from_vars(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& fn,
                         std::string name, std::vector<std::string> axis_names) {
  check_shape(shape, name, "compute");
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::Compute;
  op->name = name;
  op->shape = shape;
  std::vector<Var> vars = make_axes(*op, op->shape, axis_names, "compute");
  Expr body = fn(vars);
  check_body(body, name, "compute");
  if (const auto* r = body.as<ReduceNode>(); r && r->sources.size() > 1)
    throw Error(
        fmt::format("compute '{}': the body is value {} of a {}-value reduction ({}): make every value an "
                    "output with compute_tuple",
                    name, r->value_index, r->sources.size(), r->combiner->name));
  op->dtype = body.dtype();
  op->body = body;
  finish_compute(*op, {body});
  return Tensor(op);
}

namespace {

// A multi-output compute's operation, its axes made, before its bodies.
std::shared_ptr<OperationNode> tuple_op(const std::vector<Expr>& shape, const std::vector<std::string>& names,
                                        const char* what) {
  if (names.empty()) throw Error(fmt::format("{}: give one name per output (none given)", what));
  check_shape(shape, names[0], what);
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (names[i] == names[j])
        throw Error(fmt::format("{} '{}': two outputs are named '{}'", what, names[0], names[i]));
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::Compute;
  op->name = names[0];
  op->shape = shape;
  return op;
}

// The row reducer whose values bodies are, or null.
const CommReducerNode* row_rule(const std::vector<Expr>& bodies) {
  const auto* r = bodies[0].as<ReduceNode>();
  return r && r->combiner && r->combiner->row_values > 0 ? r->combiner.get() : nullptr;
}

// Checks the bodies and gives op its outputs.
std::vector<Tensor> finish_tuple(const std::shared_ptr<OperationNode>& op, const std::vector<Expr>& bodies,
                                 const std::vector<std::string>& names, const char* what) {
  if (bodies.size() != names.size())
    throw Error(fmt::format("{} '{}': the function returned {} values for {} names", what, names[0], bodies.size(),
                            names.size()));
  for (size_t i = 0; i < bodies.size(); ++i) check_body(bodies[i], names[i], "compute");
  check_tuple_bodies(bodies, names);
  op->dtype = bodies[0].dtype();
  op->body = bodies[0];
  for (size_t i = 1; i < bodies.size(); ++i) op->more_outputs.push_back({names[i], bodies[i].dtype(), bodies[i]});
  finish_compute(*op, bodies);
  std::vector<Tensor> out;
  for (size_t i = 0; i < bodies.size(); ++i) out.emplace_back(op, static_cast<int>(i));
  return out;
}

}  // namespace

std::vector<Tensor> compute_tuple_from_vars(std::vector<Expr> shape,
                                            const std::function<std::vector<Expr>(const std::vector<Var>&)>& fn,
                                            std::vector<std::string> names, std::vector<std::string> axis_names) {
  auto op = tuple_op(shape, names, "compute_tuple");
  std::vector<Var> vars = make_axes(*op, op->shape, axis_names, "compute_tuple");
  std::vector<Expr> bodies = fn(vars);
  if (!bodies.empty() && bodies[0].defined())
    if (const CommReducerNode* rule = row_rule(bodies))
      throw Error(fmt::format("compute_tuple '{}': '{}' reduces rows; make its values with compute_rows", names[0],
                              rule->name));
  return finish_tuple(op, bodies, names, "compute_tuple");
}

std::vector<Tensor> compute_rows(
    std::vector<Expr> row_shape, std::vector<Expr> element_shape,
    const std::function<std::vector<Expr>(const std::vector<Var>& row, const std::vector<Var>& element)>& fn,
    std::vector<std::string> names, std::vector<std::string> axis_names) {
  std::vector<Expr> shape = row_shape;
  shape.insert(shape.end(), element_shape.begin(), element_shape.end());
  auto op = tuple_op(shape, names, "compute_rows");
  if (element_shape.empty())
    throw Error(
        fmt::format("compute_rows '{}': give at least one element dimension (a reduction with values only "
                    "per row is a compute_tuple)",
                    names[0]));
  op->row_shape = row_shape;
  std::vector<Var> vars = make_axes(*op, op->shape, axis_names, "compute_rows");
  const std::vector<Var> row(vars.begin(), vars.begin() + static_cast<std::ptrdiff_t>(row_shape.size()));
  const std::vector<Var> element(vars.begin() + static_cast<std::ptrdiff_t>(row_shape.size()), vars.end());
  std::vector<Expr> bodies = fn(row, element);
  const CommReducerNode* rule = !bodies.empty() && bodies[0].defined() ? row_rule(bodies) : nullptr;
  if (!rule)
    throw Error(
        fmt::format("compute_rows '{}': the values must be those of a row reducer (online_softmax, a "
                    "RowReducer), in order",
                    names[0]));
  std::vector<Tensor> out = finish_tuple(op, bodies, names, "compute_rows");
  const auto* red = bodies[0].as<ReduceNode>();
  auto per_row = [&](const Expr& e, const std::string& what) {
    for (const Var& v : element)
      if (e.defined() && uses_var(e, v))
        throw Error(
            fmt::format("compute_rows '{}': {} uses element axis '{}'; the row values and the condition are "
                        "one per row",
                        names[0], what, v->name));
  };
  for (int i = 0; i < rule->row_values; ++i)
    per_row(red->sources[static_cast<size_t>(i)], "row value '" + names[static_cast<size_t>(i)] + "'");
  per_row(red->condition, "the condition");
  for (const IterVar& iv : red->axis) {
    per_row(iv.dom().min, "reduction axis '" + iv.name() + "'");
    per_row(iv.dom().extent, "reduction axis '" + iv.name() + "'");
  }
  op->row_outputs = rule->row_values;
  return out;
}

IterVar Tensor::axis(int k) const {
  if (node("axis").kind != OpKind::Compute) throw Error(fmt::format("tensor '{}': a placeholder has no axes", name()));
  if (k < 0 || k >= static_cast<int>(op_->axis.size()))
    throw Error(fmt::format("tensor '{}': axis {} out of range (it has {})", name(), k, op_->axis.size()));
  return op_->axis[k];
}

IterVar Tensor::reduce_axis(int k) const {
  if (node("reduce_axis").kind != OpKind::Compute || op_->reduce_axis.empty())
    throw Error(fmt::format("tensor '{}': not a reduction, it has no reduce axes", name()));
  if (k < 0 || k >= static_cast<int>(op_->reduce_axis.size()))
    throw Error(
        fmt::format("tensor '{}': reduce axis {} out of range (it has {})", name(), k, op_->reduce_axis.size()));
  return op_->reduce_axis[k];
}

Expr Tensor::operator()(std::vector<Expr> indices) const {
  if (!op_) throw Error("tensor read: the tensor is undefined");
  if (static_cast<int>(indices.size()) != ndim())
    throw Error(
        fmt::format("tensor '{}': read with {} indices but it has {} dimensions", name(), indices.size(), ndim()));
  for (size_t i = 0; i < indices.size(); ++i) {
    const Expr& e = indices[i];
    if (!e.defined()) throw Error(fmt::format("tensor '{}': index {} is undefined", name(), i));
    if (!e.dtype().is_integer() || !e.dtype().is_scalar())
      throw Error(
          fmt::format("tensor '{}': index {} must be a scalar integer, got {}", name(), i, e.dtype().to_string()));
  }
  return Expr(std::make_shared<const TensorReadNode>(dtype(), op_, std::move(indices), value_index_));
}

std::vector<Operation> topo_sort(const std::vector<Tensor>& outputs) {
  std::vector<Operation> order;
  std::unordered_set<const OperationNode*> done;
  // Iterative DFS: deep graphs must not overflow the stack.
  std::vector<std::pair<Operation, size_t>> stack;
  for (const Tensor& t : outputs) {
    if (!t.defined()) throw Error("topo_sort: an output tensor is undefined");
    if (done.count(t.op().get())) continue;
    stack.emplace_back(t.op(), 0);
    while (!stack.empty()) {
      auto& [op, next] = stack.back();
      if (next < op->inputs.size()) {
        Operation in = op->inputs[next++];
        if (!done.count(in.get())) stack.emplace_back(in, 0);
        continue;
      }
      if (done.insert(op.get()).second) order.push_back(op);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace te
