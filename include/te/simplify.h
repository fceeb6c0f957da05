/// \file
/// The simplifier: constant folding and the canonical integer rewrites lowering needs.
#pragma once
#include <cstdint>
#include <map>

#include "te/export.h"
#include "te/ir.h"

namespace te {

/// Known inclusive bounds of integer variables, keyed by variable identity.
struct TE_API Interval {
  int64_t min;  ///< The smallest value.
  int64_t max;  ///< The largest value (inclusive).
};
/// Bounds of variables for simplify() and can_prove().
using VarBounds = std::map<const VarNode*, Interval>;

/// Value-preserving rewrites: folds constants, collects terms, cancels x - x, rewrites
/// (x*64 + y) / 64 to x and (x*64 + y) % 64 to y when 0 <= y < 64 is known, and removes
/// comparisons and min/max it can decide from the bounds.
TE_API Expr simplify(const Expr& e, const VarBounds& bounds = {});
/// Simplifies every expression; loop variables get their loop's bounds when constant,
/// and if/else branches whose condition is decided are dropped.
TE_API Stmt simplify(const Stmt& s, const VarBounds& bounds = {});

/// True if cond (a bool expression) holds for every value the bounds allow.
TE_API bool can_prove(const Expr& cond, const VarBounds& bounds = {});

/// Constant bounds of an integer expression given variable bounds, if any can be found.
TE_API bool const_bounds(const Expr& e, const VarBounds& bounds, Interval* out);

}  // namespace te
