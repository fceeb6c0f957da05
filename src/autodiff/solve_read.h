// Which elements of a tensor one read site reaches, solved for the reading loops: the
// gather form of an adjoint (dX[j] = sum over the loops the site leaves free of the term
// at the solved point), for reads whose indices are affine in the loop variables
// (element-wise, transposes, broadcasts, matmul, convolution windows, strides).
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "te/expr.h"

namespace te::autodiff {

// A loop variable of the compute being differentiated (an axis or a reduction axis),
// with its range.
struct LoopVar {
  Var var;
  Expr min, extent;
};

struct Gather {
  // The loop variables the site determines, each as a function of j (X's index).
  std::vector<std::pair<Var, Expr>> solved;
  // The loop variables left: summed over.
  std::vector<const LoopVar*> free;
  // Where the site reaches element j (undefined: everywhere): the solved variables in
  // their ranges, divisibility for strides, and the dimensions no variable was solved
  // from equal to what the site reads there. In j and the free variables.
  Expr reached;
  // reached's parts: one range check per solved variable that must stay in its loop's
  // range (value in [min, min + extent)), and the rest (divisibility, equalities;
  // undefined: none).
  struct RangeCheck {
    Var var;
    Expr value, min, extent;
  };
  std::vector<RangeCheck> ranges;
  Expr other;
  // Whether a solved value divides (a strided read: every stride-th element is reached).
  bool strided = false;
};

// The gather form of the read X(indices) inside loops `vars`, for X of `shape` indexed
// by j; nullopt when an index reads a tensor or is not affine in the loop variables (a
// division, a min...): the caller scatters instead.
std::optional<Gather> solve_read(const std::vector<Expr>& indices, const std::vector<Expr>& shape,
                                 const std::vector<LoopVar>& vars, const std::vector<Var>& j);

}  // namespace te::autodiff
