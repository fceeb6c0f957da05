// te::gradient: reverse mode over the graph of computes. Each compute Y, once its adjoint
// H is known (the sum of what its consumers sent), sends each tensor X it reads one
// contribution per read site: dX[j] = sum over Y's other loop variables of
// H[i] * d body / d X(site), where j are the site's index variables (the gather form: no
// scatter, no zero Jacobian). Contributions are plain computes; the adjoint of a
// requested input is their sum, in the input's type.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "autodiff/derivative.h"
#include "expr/analysis.h"
#include "te/autodiff.h"
#include "te/error.h"
#include "te/ir.h"

namespace te {
namespace {

// The TensorRead nodes of e, in order of first appearance, each once (a node e holds
// twice is one site, its derivative counting both).
std::vector<const TensorReadNode*> read_sites(const Expr& e) {
  std::vector<const TensorReadNode*> sites;
  std::set<const TensorReadNode*> seen;
  for (const TensorReadNode* n : tensor_reads(e))
    if (seen.insert(n).second) sites.push_back(n);
  return sites;
}

// A loop variable of the compute being differentiated: its range.
struct LoopVar {
  Var var;
  Expr min, extent;
};

class Gradient {
 public:
  std::vector<Tensor> run(const Tensor& output, const std::vector<Tensor>& inputs, const Tensor& head) {
    check(output, inputs, head);
    std::vector<Operation> order = topo_sort({output});
    // Only the operations between the output and a requested input need adjoints.
    std::set<const OperationNode*> wanted;
    for (const Tensor& t : inputs) wanted.insert(t.op().get());
    std::set<const OperationNode*> on_path(wanted);
    for (const Operation& op : order)
      for (const Operation& in : op->inputs)
        if (on_path.count(in.get())) on_path.insert(op.get());
    contributions_[output.op().get()].push_back(head.defined() ? head : ones(output));
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Operation& op = *it;
      if (op->kind != OpKind::Compute || !contributions_.count(op.get()) || !on_path.count(op.get())) continue;
      const Tensor adjoint = total(Tensor(op), op->name + "_grad");
      differentiate(op, adjoint, on_path);
    }
    std::vector<Tensor> out;
    for (const Tensor& t : inputs) out.push_back(total(t, t.name() + "_grad"));
    return out;
  }

 private:
  void check(const Tensor& output, const std::vector<Tensor>& inputs, const Tensor& head) {
    if (!output.defined()) throw Error("gradient: the output is an undefined tensor");
    if (!output.dtype().is_float())
      throw Error(fmt::format("gradient: the output '{}' is {}: only floating-point outputs have a gradient",
                              output.name(), output.dtype().to_string()));
    std::set<const OperationNode*> seen;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Tensor& t = inputs[k];
      if (!t.defined()) throw Error(fmt::format("gradient: input {} is an undefined tensor", k));
      if (!t.dtype().is_float())
        throw Error(fmt::format("gradient: input '{}' is {}: integer and bool tensors have no gradient", t.name(),
                                t.dtype().to_string()));
      if (!seen.insert(t.op().get()).second) throw Error(fmt::format("gradient: input '{}' is given twice", t.name()));
    }
    if (head.defined()) {
      bool same = head.dtype() == output.dtype() && head.ndim() == output.ndim();
      for (int d = 0; same && d < output.ndim(); ++d) same = equal(head.shape()[d], output.shape()[d]);
      if (!same)
        throw Error(
            fmt::format("gradient: the head '{}' ({}, {} dimensions) must have the output '{}''s shape and "
                        "type ({}, {} dimensions)",
                        head.name(), head.dtype().to_string(), head.ndim(), output.name(), output.dtype().to_string(),
                        output.ndim()));
    }
  }

  static Tensor ones(const Tensor& t) {
    return compute_from_vars(
        t.shape(), [&](const std::vector<Var>&) { return make_const(t.dtype(), 1.0); }, t.name() + "_ones");
  }

  // The sum of what t's consumers sent, in t's type (zeros when none did).
  Tensor total(const Tensor& t, const std::string& name) {
    const std::vector<Tensor>& parts = contributions_[t.op().get()];
    if (parts.size() == 1 && parts[0].dtype() == t.dtype()) return parts[0];
    return compute_from_vars(
        t.shape(),
        [&](const std::vector<Var>& j) {
          std::vector<Expr> index(j.begin(), j.end());
          Expr sum = make_zero(t.dtype());
          for (const Tensor& p : parts) sum = autodiff::add(sum, cast(t.dtype(), p(index)));
          return sum;
        },
        name);
  }

  void differentiate(const Operation& op, const Tensor& adjoint, const std::set<const OperationNode*>& on_path) {
    const std::string where = fmt::format("compute '{}'", op->name);
    if (op->is_scatter()) throw Error(fmt::format("gradient: {} is a scatter: te cannot differentiate it yet", where));
    if (op->num_outputs() != 1)
      throw Error(fmt::format("gradient: {} has {} outputs: te cannot differentiate tuple computes yet", where,
                              op->num_outputs()));
    Expr body = op->body, condition;
    std::vector<LoopVar> vars;
    for (size_t d = 0; d < op->axis.size(); ++d) vars.push_back({op->axis[d].var(), make_zero(Int(32)), op->shape[d]});
    if (const auto* r = body.as<ReduceNode>()) {
      if (r->reducer != Reducer::Sum)
        throw Error(fmt::format("gradient: {} is a {} reduction: te differentiates sum reductions only", where,
                                r->combiner ? r->combiner->name : reducer_name(r->reducer)));
      for (const IterVar& k : r->axis) vars.push_back({k.var(), k.dom().min, k.dom().extent});
      condition = r->condition;
      body = r->source();
    }
    std::vector<Expr> index;
    for (size_t d = 0; d < op->axis.size(); ++d) index.push_back(op->axis[d].var());
    const Expr head = adjoint(index);
    int site_number = 0;
    for (const TensorReadNode* site : read_sites(body)) {
      const Operation& x = site->op;
      if (!on_path.count(x.get()) || !site->dtype.is_float()) continue;
      Expr partial = autodiff::derivative(body, site, where);
      if (is_zero(partial)) continue;
      Expr term = autodiff::mul(cast(partial.dtype(), head), partial);
      // Guarded, as the reduction guards its source (which may read only where it holds).
      if (condition.defined()) term = if_then_else(condition, term, make_zero(term.dtype()));
      contributions_[x.get()].push_back(scatter_back(op, x, site, term, vars, site_number++));
    }
  }

  // dX over X's shape: the term with the site's index variables replaced by X's, summed
  // over the other loop variables.
  static Tensor scatter_back(const Operation& y, const Operation& x, const TensorReadNode* site, const Expr& term,
                             const std::vector<LoopVar>& vars, int number) {
    std::vector<const LoopVar*> by_dim;
    for (const Expr& i : site->indices) {
      const auto* v = i.as<VarNode>();
      auto it = std::find_if(vars.begin(), vars.end(), [&](const LoopVar& l) { return l.var.get() == v; });
      bool repeated =
          it != vars.end() && std::any_of(by_dim.begin(), by_dim.end(), [&](const LoopVar* l) { return l == &*it; });
      if (v == nullptr || it == vars.end() || repeated) {
        std::vector<std::string> text;
        for (const Expr& e : site->indices) text.push_back(to_string(e));
        throw Error(fmt::format(
            "gradient: compute '{}' reads '{}' at ({}): te differentiates reads whose every index is one loop "
            "variable of the reading compute, each once",
            y->name, x->output_name(site->value_index), fmt::join(text, ", ")));
      }
      by_dim.push_back(&*it);
    }
    const std::string name = fmt::format("{}_grad_{}{}", x->output_name(site->value_index), y->name,
                                         number ? fmt::format("_{}", number) : std::string());
    return compute_from_vars(
        x->shape,
        [&](const std::vector<Var>& j) {
          std::vector<std::pair<Var, Expr>> map;
          Expr in_range;  // j within the range the reading loop gave the index
          for (size_t d = 0; d < j.size(); ++d) {
            const LoopVar& l = *by_dim[d];
            map.emplace_back(l.var, j[d]);
            if (!is_zero(l.min) || !equal(l.extent, x->shape[d])) {
              Expr inside = j[d] >= l.min && j[d] < l.min + l.extent;
              in_range = in_range.defined() ? (in_range && inside) : inside;
            }
          }
          std::vector<IterVar> others;
          for (const LoopVar& l : vars) {
            if (std::any_of(by_dim.begin(), by_dim.end(), [&](const LoopVar* b) { return b == &l; })) continue;
            IterVar k = reduce_axis(Range(l.min, l.min + l.extent), l.var.name());
            map.emplace_back(l.var, k.var());
            others.push_back(k);
          }
          Expr value = substitute(term, map);
          if (!others.empty()) return sum(value, others, in_range);
          // Guarded: the adjoint is read only where the reading loop went.
          return in_range.defined() ? if_then_else(in_range, value, make_zero(value.dtype())) : value;
        },
        name);
  }

  std::map<const OperationNode*, std::vector<Tensor>> contributions_;
};

}  // namespace

std::vector<Tensor> gradient(const Tensor& output, const std::vector<Tensor>& inputs, const Tensor& head) {
  return Gradient().run(output, inputs, head);
}

}  // namespace te
