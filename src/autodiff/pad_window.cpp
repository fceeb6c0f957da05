// read_padded: a gather's range checks replaced by a zero-padded read (pad_window.h).
#include "autodiff/pad_window.h"

#include <functional>

#include "expr/analysis.h"
#include "lower/int_set.h"
#include "te/ir.h"
#include "te/simplify.h"

namespace te::autodiff {

namespace {

// e with each read of the tensor `like` reads replaced by what `with` makes of it.
Expr replace_reads_of(const Expr& e, const TensorReadNode* like,
                      const std::function<Expr(const TensorReadNode*)>& with) {
  return map_tensor_reads(e, [&](const TensorReadNode* n, const Expr& read) {
    return n->op == like->op && n->value_index == like->value_index ? with(n) : read;
  });
}

}  // namespace

std::optional<Expr> read_padded(const Gather& g, const Expr& term, const std::vector<Expr>& x_shape,
                                const std::vector<Var>& j, const std::vector<const LoopVar*>& free) {
  // A strided window's reach (every stride-th row) stays a condition: its padded copy's
  // region per output row would not be a constant box.
  if (g.ranges.empty() || g.strided) return std::nullopt;
  // The one tensor whose reads use the checked variables, each as a whole index.
  const TensorReadNode* site = nullptr;
  std::vector<int> dim(g.ranges.size(), -1);
  for (const TensorReadNode* r : tensor_reads(term)) {
    bool uses = false;
    for (const Expr& i : r->indices)
      for (const Gather::RangeCheck& c : g.ranges) uses = uses || uses_var(i, c.var);
    if (!uses) continue;
    if (site != nullptr && (r->op != site->op || r->value_index != site->value_index)) return std::nullopt;
    site = site != nullptr ? site : r;
    for (size_t d = 0; d < r->indices.size(); ++d)
      for (size_t c = 0; c < g.ranges.size(); ++c) {
        if (!uses_var(r->indices[d], g.ranges[c].var)) continue;
        if (r->indices[d].as<VarNode>() != g.ranges[c].var.get()) return std::nullopt;
        if (dim[c] != -1 && dim[c] != static_cast<int>(d)) return std::nullopt;
        dim[c] = static_cast<int>(d);
      }
  }
  if (site == nullptr) return std::nullopt;
  for (int d : dim)
    if (d < 0) return std::nullopt;
  // Nothing but those reads may use the checked variables (the rest is computed at the
  // padding too, where it must be harmless: it multiplies a zero).
  const Expr rest = replace_reads_of(term, site, [](const TensorReadNode* n) { return make_zero(n->dtype); });
  for (const Gather::RangeCheck& c : g.ranges)
    if (uses_var(rest, c.var)) return std::nullopt;

  // The reach beyond each edge: the checked value's range over X's elements and the free loops.
  const Tensor h(site->op, site->value_index);
  lowering::RelaxMap relax;
  for (size_t d = 0; d < j.size(); ++d) relax[j[d].get()] = Range(make_zero(j[d].dtype()), x_shape[d]);
  for (const LoopVar* l : free) relax[l->var.get()] = Range(l->min, l->min + l->extent);
  std::vector<int64_t> before(h.shape().size(), 0), after(h.shape().size(), 0);
  for (size_t c = 0; c < g.ranges.size(); ++c) {
    const Gather::RangeCheck& rc = g.ranges[c];
    const size_t d = static_cast<size_t>(dim[c]);
    // The simplified expressions kept alive: as_const_int points into them.
    const Expr min_e = simplify(rc.min), extent_e = simplify(rc.extent);
    const int64_t* min = as_const_int(min_e);
    const int64_t* extent = as_const_int(extent_e);
    const int64_t* size = as_const_int(h.shape()[d]);
    if (!min || !extent || !size || *min != 0 || *extent != *size) return std::nullopt;
    const lowering::IntSet reach = lowering::eval_set(rc.value, relax, {});
    const Expr lo_e = reach.min.defined() ? simplify(reach.min) : Expr();
    const Expr hi_e = reach.max.defined() ? simplify(reach.max) : Expr();
    const int64_t* lo = lo_e.defined() ? as_const_int(lo_e) : nullptr;
    const int64_t* hi = hi_e.defined() ? as_const_int(hi_e) : nullptr;
    if (!lo || !hi) return std::nullopt;
    before[d] = std::max<int64_t>(before[d], -*lo);
    after[d] = std::max<int64_t>(after[d], *hi - (*size - 1));
  }
  bool pads = false;
  for (size_t d = 0; d < before.size(); ++d) pads = pads || before[d] > 0 || after[d] > 0;
  if (!pads) return term;  // the window never leaves the tensor: no condition, no copy

  std::vector<Expr> shape = h.shape();
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] = simplify(shape[d] + make_const(shape[d].dtype(), before[d] + after[d]));
  const Tensor padded = compute_from_vars(
      shape,
      [&](const std::vector<Var>& p) {
        std::vector<Expr> at;
        Expr inside;
        for (size_t d = 0; d < p.size(); ++d) {
          if (before[d] == 0 && after[d] == 0) {
            at.push_back(p[d]);
            continue;
          }
          const Expr i = p[d] - make_const(p[d].dtype(), before[d]);
          const Expr in = i >= make_zero(i.dtype()) && i < cast(i.dtype(), h.shape()[d]);
          inside = inside.defined() ? (inside && in) : in;
          at.push_back(i);
        }
        return if_then_else(inside, h(at), make_zero(h.dtype()));
      },
      h.name() + "_padded");
  return replace_reads_of(term, site, [&](const TensorReadNode* n) {
    std::vector<Expr> at;
    for (size_t d = 0; d < n->indices.size(); ++d)
      at.push_back(before[d] ? n->indices[d] + make_const(n->indices[d].dtype(), before[d]) : n->indices[d]);
    return padded(at);
  });
}

}  // namespace te::autodiff
