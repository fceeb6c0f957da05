// solve_read: Gaussian elimination on a read's affine indices, one dimension at a time.
#include "autodiff/solve_read.h"

#include <algorithm>

#include "expr/analysis.h"
#include "expr/simplify_internal.h"
#include "te/simplify.h"

namespace te::autodiff {

namespace {

using simp::Linear;
using simp::Term;

Expr conjoin(const Expr& a, const Expr& b) { return a.defined() ? (a && b) : b; }

// e (simplified) as a linear form over `vars`, or nullopt when a loop variable occurs
// other than as a term of its own (inside a division, a min, a product of two variables).
std::optional<Linear> affine_in(const Expr& e, const std::vector<LoopVar>& vars) {
  Linear lin = simp::linear_of(e);
  for (const Term& t : lin.terms) {
    const auto* v = t.atom.as<VarNode>();
    const bool is_loop_var =
        v != nullptr && std::any_of(vars.begin(), vars.end(), [&](const LoopVar& l) { return l.var.get() == v; });
    if (is_loop_var) continue;
    for (const LoopVar& l : vars)
      if (uses_var(t.atom, l.var)) return std::nullopt;
  }
  return lin;
}

}  // namespace

std::optional<Gather> solve_read(const std::vector<Expr>& indices, const std::vector<Expr>& shape,
                                 const std::vector<LoopVar>& vars, const std::vector<Var>& j) {
  for (const Expr& i : indices)
    if (!tensor_reads(i).empty()) return std::nullopt;
  std::vector<std::pair<Var, Expr>> solved;
  std::vector<Expr> equalities;  // j_d == what the site reads along d
  auto is_solved = [&](const VarNode* v) {
    return std::any_of(solved.begin(), solved.end(), [&](const auto& s) { return s.first.get() == v; });
  };
  Expr divisible;
  for (size_t d = 0; d < indices.size(); ++d) {
    const Expr index = simplify(substitute(indices[d], solved));
    std::optional<Linear> lin = affine_in(index, vars);
    if (!lin) return std::nullopt;
    const Expr jd = cast(index.dtype(), j[d]);
    // The unsolved loop variable to solve this dimension for: the first in loop order (an
    // axis before a reduction axis: its range is the tensor's, the reduction's the window's).
    const Term* pick = nullptr;
    size_t pick_rank = vars.size();
    for (const Term& t : lin->terms) {
      const auto* v = t.atom.as<VarNode>();
      if (v == nullptr || t.coeff == 0 || is_solved(v)) continue;
      size_t rank = static_cast<size_t>(
          std::find_if(vars.begin(), vars.end(), [&](const LoopVar& l) { return l.var.get() == v; }) - vars.begin());
      if (rank < pick_rank) {
        pick = &t;
        pick_rank = rank;
      }
    }
    if (pick == nullptr) {
      equalities.push_back(jd == index);
      continue;
    }
    Linear rest = *lin;
    const int64_t c = pick->coeff;
    const Var v = vars[pick_rank].var;
    rest.terms.erase(rest.terms.begin() + (pick - lin->terms.data()));
    Expr numerator = jd - simp::linear_to_expr(rest);
    if (c != 1 && c != -1) divisible = conjoin(divisible, numerator % make_const(index.dtype(), c) == 0);
    Expr value = simplify(cast(v.dtype(), c == 1 ? numerator : numerator / make_const(index.dtype(), c)));
    const std::vector<std::pair<Var, Expr>> now{{v, value}};
    for (auto& s : solved) s.second = simplify(substitute(s.second, now));
    for (Expr& e : equalities) e = substitute(e, now);
    if (divisible.defined()) divisible = substitute(divisible, now);
    solved.emplace_back(v, value);
  }
  Gather g;
  g.solved = solved;
  for (const LoopVar& l : vars)
    if (!is_solved(l.var.get())) g.free.push_back(&l);
  Expr reached = divisible;
  for (const Expr& e : equalities) reached = conjoin(reached, e);
  g.other = reached.defined() ? simplify(reached) : reached;
  g.strided = divisible.defined();
  for (const auto& [v, value] : solved) {
    const LoopVar& l = *std::find_if(vars.begin(), vars.end(), [&](const LoopVar& x) { return x.var.same_as(v); });
    // An index that is the loop variable itself over the tensor's whole extent reaches
    // every element.
    bool whole = false;
    for (size_t d = 0; d < j.size() && !whole; ++d)
      whole = equal(value, cast(v.dtype(), j[d])) && is_zero(l.min) && equal(l.extent, shape[d]);
    if (whole) continue;
    reached = conjoin(reached, value >= l.min && value < l.min + l.extent);
    g.ranges.push_back({v, value, l.min, l.extent});
  }
  if (reached.defined()) {
    reached = simplify(reached);
    if (const int64_t* c = as_const_int(reached); c && *c) reached = Expr();
  }
  g.reached = reached;
  return g;
}

}  // namespace te::autodiff
