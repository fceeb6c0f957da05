// te::gradient: reverse mode over the graph of computes. Each compute Y, once its adjoint
// H is known (the sum of what its consumers sent), sends each tensor X it reads one
// contribution per read site: dX[j] = sum over Y's other loop variables of
// H[i] * d body / d X(site), where j are the site's index variables (the gather form: no
// scatter, no zero Jacobian). Contributions are plain computes; the adjoint of a
// requested input is their sum, in the input's type.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "autodiff/derivative.h"
#include "autodiff/pad_window.h"
#include "autodiff/solve_read.h"
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

using autodiff::LoopVar;

// What one read site sends the tensor it reads: a compute over its shape (the gather
// form), or a scatter-add to apply onto the sum of the others.
struct Part {
  static Part of(Tensor t) {
    Part p;
    p.gather = std::move(t);
    return p;
  }
  Tensor gather;
  std::function<Tensor(const Tensor& base, const std::string& name)> scatter;
  std::string name;  // the scatter stage's own name
};

// Read sites of one tensor that the same loops solve the same way: one gather compute.
struct GatherGroup {
  Operation x;
  int value_index = 0;                       // which output of x the sites read
  autodiff::Gather gather;                   // the first site's (solved and free agree)
  std::vector<std::pair<Expr, Expr>> cases;  // per site: where it reaches j, its term
  std::string name;                          // the first site's contribution name
};

class Gradient {
 public:
  explicit Gradient(const GradientOptions& options) : options_(options) {}

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
    contributions_[{output.op().get(), output.value_index()}].push_back(Part::of(head.defined() ? head : ones(output)));
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Operation& op = *it;
      if (op->kind != OpKind::Compute || !on_path.count(op.get())) continue;
      std::vector<Tensor> adjoints(static_cast<size_t>(op->num_outputs()));
      bool any = false;
      for (int i = 0; i < op->num_outputs(); ++i)
        if (contributions_.count({op.get(), i}) && op->output_dtype(i).is_float()) {
          adjoints[static_cast<size_t>(i)] = total(Tensor(op, i), op->output_name(i) + "_grad");
          any = true;
        }
      if (any) differentiate(op, adjoints, on_path);
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

  // The sum of what t's consumers sent, in t's type (zeros when none did): the gathers
  // summed, then each scatter-add adding onto that in place (one buffer, no extra pass);
  // 16-bit types accumulate in float32 and are cast at the end.
  Tensor total(const Tensor& t, const std::string& name) {
    const std::vector<Part>& parts = contributions_[{t.op().get(), t.value_index()}];
    std::vector<Tensor> gathers;
    std::vector<const Part*> scatters;
    for (const Part& p : parts) {
      if (p.scatter)
        scatters.push_back(&p);
      else
        gathers.push_back(p.gather);
    }
    if (scatters.empty() && gathers.size() == 1 && gathers[0].dtype() == t.dtype()) return gathers[0];
    const DataType acc = scatters.empty() ? t.dtype() : accumulation_type(t.dtype());
    Tensor sum = compute_from_vars(
        t.shape(),
        [&](const std::vector<Var>& j) {
          std::vector<Expr> index(j.begin(), j.end());
          Expr total = make_zero(acc);
          for (const Tensor& g : gathers) total = autodiff::add(total, cast(acc, g(index)));
          return total;
        },
        scatters.empty() ? name : name + (gathers.empty() ? "_zeros" : "_gathered"));
    for (size_t k = 0; k < scatters.size(); ++k) {
      const bool last = k + 1 == scatters.size() && acc == t.dtype();
      sum = scatters[k]->scatter(sum, last ? name : scatters[k]->name);
    }
    if (acc == t.dtype()) return sum;
    return compute_from_vars(
        t.shape(),
        [&](const std::vector<Var>& j) { return cast(t.dtype(), sum(std::vector<Expr>(j.begin(), j.end()))); }, name);
  }

  static DataType accumulation_type(DataType t) { return t.bits() < 32 ? Float(32) : t; }

  void differentiate(const Operation& op, const std::vector<Tensor>& adjoints,
                     const std::set<const OperationNode*>& on_path) {
    const std::string where = fmt::format("compute '{}'", op->name);
    std::vector<LoopVar> vars;
    for (const IterVar& a : op->axis) vars.push_back({a.var(), a.dom().min, a.dom().extent});
    // A scatter's point p sends its value to element index(p): its head is there.
    std::vector<Expr> index;
    for (const IterVar& a : op->axis) index.push_back(a.var());
    if (op->is_scatter()) {
      if (op->scatter_accumulate)
        throw Error(fmt::format("gradient: {} is a scatter-add: te differentiates scatters that assign", where));
      index = op->scatter_index;
      if (on_path.count(op->scatter_base.get())) send_to_base(op, adjoints[0]);
    }
    const std::vector<Expr> bodies = op->bodies();
    const auto* r = bodies[0].as<ReduceNode>();
    if (op->is_row_reduction())
      throw Error(
          fmt::format("gradient: {} is a row reduction ({}): te::gradient does not differentiate row reductions; for "
                      "attention use te::ops::attention_backward (te/ops/attention_backward.h)",
                      where, r->combiner->name));
    if (op->num_outputs() > 1 && r) {
      // argmax / argmin: the value output's gradient goes to the element the index output
      // chose (the first of ties, as PyTorch's max(dim)); the index has none.
      const std::string rule = r->combiner ? r->combiner->name : "";
      if (rule != "argmax" && rule != "argmin")
        throw Error(fmt::format(
            "gradient: {} is a {} tuple reduction: te differentiates the argmax and argmin tuple reductions", where,
            rule.empty() ? std::string("custom") : rule));
      if (!adjoints[1].defined()) return;
      for (const IterVar& k : r->axis) vars.push_back({k.var(), k.dom().min, k.dom().extent});
      const Expr chosen = r->axis[0].var() == cast(r->axis[0].var().dtype(), Tensor(op, 0)(index));
      const Expr value = r->sources[1];
      send(op, value, adjoints[1](index) * select(chosen, make_const(value.dtype(), 1.0), make_zero(value.dtype())),
           r->condition, vars, on_path, where);
      return;
    }
    for (size_t i = 0; i < bodies.size(); ++i) {
      if (!adjoints[i].defined()) continue;
      Expr body = bodies[i], condition, head = adjoints[i](index);
      std::vector<LoopVar> loops = vars;
      if (const auto* red = body.as<ReduceNode>()) {
        const bool extremum = red->reducer == Reducer::Max || red->reducer == Reducer::Min;
        const bool product = red->reducer == Reducer::Prod;
        if (red->reducer != Reducer::Sum && !extremum && !product)
          throw Error(fmt::format("gradient: {} is a {} reduction: te differentiates sum, prod, max and min reductions",
                                  where, red->combiner ? red->combiner->name : reducer_name(red->reducer)));
        for (const IterVar& k : red->axis) loops.push_back({k.var(), k.dom().min, k.dom().extent});
        condition = red->condition;
        body = red->source();
        // max/min: the gradient goes to the elements equal to the result, shared evenly
        // between ties (as PyTorch's amax/amin).
        if (extremum) head = head * share_of_extremum(op, *red, index);
        if (product) head = head * others_product(op, *red, index);
      }
      send(op, body, head, condition, loops, on_path, where);
    }
  }

  // What one body (with its head, the reduction's condition and its loops) sends the
  // tensors it reads.
  void send(const Operation& op, const Expr& body, const Expr& head, const Expr& condition,
            const std::vector<LoopVar>& vars, const std::set<const OperationNode*>& on_path, const std::string& where) {
    // Sites the same loops solve the same way (grid_sample's four corner weights, read at
    // constant indices) share one compute: one pass over the free loops, not one each.
    std::vector<GatherGroup> groups;
    std::map<const OperationNode*, std::vector<Var>> index_vars;
    for (const TensorReadNode* site : read_sites(body)) {
      const Operation& x = site->op;
      if (!on_path.count(x.get()) || !site->dtype.is_float()) continue;
      Expr partial = autodiff::derivative(body, site, where);
      if (is_zero(partial)) continue;
      Expr term = autodiff::mul(cast(partial.dtype(), head), partial);
      // A NaN or infinity the body holds as a marker (grid_sample's "not a tap" weight)
      // must not turn the zero adjoint of what it marks into NaN: a zero adjoint adds
      // nothing, whatever the partial.
      if (mentions_nonfinite(partial)) term = select(head == make_zero(head.dtype()), make_zero(term.dtype()), term);
      // Guarded, as the reduction guards its source (which may read only where it holds).
      if (condition.defined()) term = if_then_else(condition, term, make_zero(term.dtype()));
      const int number = sites_sent_[op.get()]++;
      const std::string name = fmt::format("{}_grad_{}{}", x->output_name(site->value_index), op->name,
                                           number ? fmt::format("_{}", number) : std::string());
      std::vector<Var>& j = index_vars[x.get()];
      for (size_t d = j.size(); d < x->shape.size(); ++d) j.emplace_back(fmt::format("j{}", d), Int(32));
      if (std::optional<autodiff::Gather> g = autodiff::solve_read(site->indices, x->shape, vars, j)) {
        auto same = std::find_if(groups.begin(), groups.end(), [&](const GatherGroup& grp) {
          return grp.x == x && grp.value_index == site->value_index && grp.gather.free == g->free &&
                 same_solution(grp.gather.solved, g->solved);
        });
        if (same == groups.end()) {
          groups.push_back({x, site->value_index, *g, {}, name});
          same = groups.end() - 1;
        }
        same->cases.emplace_back(g->reached, term);
        continue;
      }
      Part p;
      p.name = name;
      const bool deterministic = options_.deterministic;
      p.scatter = [=](const Tensor& base, const std::string& stage_name) {
        return scatter_add(op, site, term, condition, vars, base, stage_name, deterministic);
      };
      contributions_[{x.get(), site->value_index}].push_back(p);
    }
    for (const GatherGroup& grp : groups)
      contributions_[{grp.x.get(), grp.value_index}].push_back(Part::of(gather(grp, index_vars.at(grp.x.get()))));
  }

  static bool same_solution(const std::vector<std::pair<Var, Expr>>& a, const std::vector<std::pair<Var, Expr>>& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k)
      if (!a[k].first.same_as(b[k].first) || !equal(a[k].second, b[k].second)) return false;
    return true;
  }

  // Per point of op: a reduction over fresh copies of r's axes (and its condition) of
  // term(f, y), f being r's source at the fresh point and y op's value at the point.
  static Tensor reduce_again(const Operation& op, const ReduceNode& r,
                             const std::function<Expr(const Expr& f, const Expr& y)>& term, bool product,
                             const std::string& name) {
    const Tensor y(op);
    return compute_from_vars(
        op->shape,
        [&](const std::vector<Var>& j) {
          std::vector<std::pair<Var, Expr>> map;
          for (size_t d = 0; d < j.size(); ++d) map.emplace_back(op->axis[d].var(), j[d]);
          std::vector<IterVar> axes;
          for (const IterVar& k : r.axis) {
            IterVar fresh = reduce_axis(
                Range(substitute(k.dom().min, map), substitute(k.dom().min + k.dom().extent, map)), k.var().name());
            map.emplace_back(k.var(), fresh.var());
            axes.push_back(fresh);
          }
          Expr t = term(substitute(r.source(), map), y(std::vector<Expr>(j.begin(), j.end())));
          Expr where = r.condition.defined() ? substitute(r.condition, map) : Expr();
          return product ? prod(t, axes, where) : sum(t, axes, where);
        },
        op->name + name);
  }

  // For Y = max/min over k of f: [f == Y] / (the number of k where f == Y), at the
  // reduction's point.
  static Expr share_of_extremum(const Operation& op, const ReduceNode& r, const std::vector<Expr>& index) {
    const Expr f = r.source(), one = make_const(f.dtype(), 1.0), zero = make_zero(f.dtype());
    Tensor ties = reduce_again(
        op, r, [&](const Expr& fk, const Expr& y) { return select(fk == y, one, zero); }, false, "_ties");
    return select(f == Tensor(op)(index), one / ties(index), zero);
  }

  // For Y = prod over k of f: the product of the other factors, as PyTorch's
  // prod_backward: Y / f without zeros; with one zero factor, the product of the nonzero
  // ones at the zero (0 elsewhere); with several, 0.
  static Expr others_product(const Operation& op, const ReduceNode& r, const std::vector<Expr>& index) {
    const Expr f = r.source(), one = make_const(f.dtype(), 1.0), zero = make_zero(f.dtype());
    Tensor zeros = reduce_again(
        op, r, [&](const Expr& fk, const Expr&) { return select(fk == zero, one, zero); }, false, "_zeros");
    Tensor nonzero = reduce_again(
        op, r, [&](const Expr& fk, const Expr&) { return select(fk == zero, one, fk); }, true, "_nonzero");
    const Expr z = zeros(index);
    return select(z == zero, Tensor(op)(index) / select(f == zero, one, f),
                  select(z == one && f == zero, nonzero(index), zero));
  }

  // dX[j] = sum over the free loop variables of each site's term at the solved point,
  // where that site reaches j.
  static Tensor gather(const GatherGroup& grp, const std::vector<Var>& j) {
    const autodiff::Gather& g = grp.gather;
    return compute_from_vars(
        grp.x->shape,
        [&](const std::vector<Var>& axes) {
          std::vector<std::pair<Var, Expr>> map, to_axes;
          for (size_t d = 0; d < j.size(); ++d) to_axes.emplace_back(j[d], axes[d]);
          std::vector<IterVar> free;
          for (const LoopVar* l : g.free) {
            IterVar k = reduce_axis(Range(l->min, l->min + l->extent), l->var.name());
            map.emplace_back(l->var, k.var());
            free.push_back(k);
          }
          auto at = [&](const Expr& e) { return substitute(substitute(e, to_axes), map); };
          for (const auto& [v, value] : g.solved) map.emplace_back(v, at(value));
          if (grp.cases.size() == 1) {
            Expr term = grp.cases[0].second, where = grp.cases[0].first;
            // A window's condition (a convolution's input gradient) read as padding instead.
            if (!free.empty() && where.defined())
              if (std::optional<Expr> padded = autodiff::read_padded(g, term, grp.x->shape, j, g.free)) {
                term = *padded;
                where = g.other;
              }
            Expr value = substitute(term, map);
            Expr reached = where.defined() ? at(where) : Expr();
            if (!free.empty()) return sum(value, free, reached);
            // Guarded: the adjoint is read only where the reading loop went.
            return reached.defined() ? if_then_else(reached, value, make_zero(value.dtype())) : value;
          }
          Expr value;
          for (const auto& [reached, term] : grp.cases) {
            Expr t = substitute(term, map);
            if (reached.defined()) t = if_then_else(at(reached), t, make_zero(t.dtype()));
            value = value.defined() ? autodiff::add(value, t) : t;
          }
          return free.empty() ? value : sum(value, free);
        },
        grp.name);
  }

  // A read at computed positions (an index read from memory, a division...): each point
  // of the reading loops adds its term at the element it read, onto base (of the
  // accumulation type: float32 for 16-bit inputs). The scatter runs over the reading
  // compute's axes; its reduction axes (with their ranges, which may read tensors, and
  // its condition) become the scatter-add's sum, whose every term adds at its own place.
  static Tensor scatter_add(const Operation& y, const TensorReadNode* site, const Expr& term, const Expr& condition,
                            const std::vector<LoopVar>& vars, const Tensor& base, const std::string& name,
                            bool deterministic) {
    std::vector<Expr> domain;
    std::vector<std::string> axis_names;
    for (const IterVar& a : y->axis) {
      domain.push_back(a.dom().extent);
      axis_names.push_back(a.var().name());
    }
    return scatter_from_vars(
        base, domain,
        [&](const std::vector<Var>& p) {
          std::vector<std::pair<Var, Expr>> map;
          for (size_t k = 0; k < p.size(); ++k) map.emplace_back(vars[k].var, at_min(vars[k].min, p[k]));
          std::vector<IterVar> sum_axes;
          for (size_t k = p.size(); k < vars.size(); ++k) {
            const Expr lo = substitute(vars[k].min, map);
            IterVar r = reduce_axis(Range(lo, lo + substitute(vars[k].extent, map)), vars[k].var.name());
            map.emplace_back(vars[k].var, r.var());
            sum_axes.push_back(r);
          }
          ScatterTo to;
          for (const Expr& i : site->indices) to.index.push_back(substitute(i, map));
          to.value = cast(base.dtype(), substitute(term, map));
          if (!sum_axes.empty())
            to.value = sum(to.value, sum_axes, condition.defined() ? substitute(condition, map) : Expr());
          to.accumulate = true;
          to.deterministic = deterministic;
          return to;
        },
        name, axis_names);
  }

  // A loop from min as a scatter axis from 0: the axis itself where min is 0, so an index
  // that was the loop variable stays a bare axis (the schedules see the axis indexes it).
  static Expr at_min(const Expr& min, const Var& axis) { return is_zero(min) ? Expr(axis) : min + axis; }

  // A scatter's base (which it assigns over): its adjoint where no point writes.
  void send_to_base(const Operation& op, const Tensor& adjoint) {
    const Operation& base = op->scatter_base;
    Tensor blank = compute_from_vars(
        base->shape, [&](const std::vector<Var>&) { return make_zero(adjoint.dtype()); }, op->name + "_unwritten");
    Tensor written = scatter_from_vars(
        blank,
        [&] {
          std::vector<Expr> d;
          for (const IterVar& a : op->axis) d.push_back(a.dom().extent);
          return d;
        }(),
        [&](const std::vector<Var>& p) {
          std::vector<std::pair<Var, Expr>> map;
          for (size_t k = 0; k < p.size(); ++k)
            map.emplace_back(op->axis[k].var(), at_min(op->axis[k].dom().min, p[k]));
          ScatterTo to;
          for (const Expr& i : op->scatter_index) to.index.push_back(substitute(i, map));
          to.value = make_const(adjoint.dtype(), 1.0);
          return to;
        },
        op->name + "_written");
    contributions_[{base.get(), 0}].push_back(Part::of(compute_from_vars(
        base->shape,
        [&](const std::vector<Var>& j) {
          std::vector<Expr> at(j.begin(), j.end());
          return select(written(at) != make_zero(adjoint.dtype()), make_zero(adjoint.dtype()), adjoint(at));
        },
        base->name + "_grad_" + op->name)));
  }

  static bool mentions_nonfinite(const Expr& e) {
    struct Finder : IRVisitor {
      bool found = false;
      void visit_float_imm(const FloatImmNode* n) override { found = found || !std::isfinite(n->value); }
    } finder;
    finder.visit(e);
    return finder.found;
  }

  // Per output of an operation (a compute_tuple has several): what its readers sent.
  std::map<std::pair<const OperationNode*, int>, std::vector<Part>> contributions_;
  std::map<const OperationNode*, int> sites_sent_;  // per reading compute: its contributions' numbers
  GradientOptions options_;
};

}  // namespace

std::vector<Tensor> gradient(const Tensor& output, const std::vector<Tensor>& inputs, const Tensor& head,
                             const GradientOptions& options) {
  return Gradient(options).run(output, inputs, head);
}

}  // namespace te
