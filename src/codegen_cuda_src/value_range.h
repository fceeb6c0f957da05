// Conservative integer ranges of index expressions. The CUDA backend uses them to
// print plain `/` and `%` where te's floor semantics agree with C's (non-negative
// dividend, positive constant divisor): value_range, which accounts for wrapping; and
// to decide when int32 index arithmetic must be computed in 64 bits: math_range.
#pragma once
#include <cstdint>
#include <map>

#include "te/expr.h"
#include "te/simplify.h"

namespace te::cuda {

// [lo, hi]; bounds at or beyond +-kUnbounded mean "no bound known".
struct ValueRange {
  static constexpr int64_t kUnbounded = int64_t{1} << 61;
  int64_t lo = -kUnbounded, hi = kUnbounded;
  bool nonnegative() const { return lo >= 0; }
  bool fits_int32() const { return lo >= INT32_MIN && hi <= INT32_MAX; }
};

using VarRanges = std::map<const VarNode*, ValueRange>;

// The range of every value e can take, given ranges for some variables; other
// variables span their type. A subexpression whose mathematical range does not fit its
// type may have wrapped, so its range is its type's.
// wide: int32 arithmetic is computed in int64 (cuda ExprPrinter's wide mode), so only
// casts to int32 wrap at 32 bits.
ValueRange value_range(const Expr& e, const VarRanges& known, bool wide = false);

// The range of the mathematical values of e (+ - * as on unbounded integers, casts
// between integer types exact where the value fits): how far index arithmetic would
// reach if it did not wrap, to decide whether it needs 64 bits.
ValueRange math_range(const Expr& e, const VarRanges& known);

// The range of a loop variable running over [min, min + extent).
ValueRange loop_var_range(const Expr& min, const Expr& extent, const VarRanges& known);

// The range of values of scalar type t.
ValueRange type_range(DataType t);

// The bounds `known` gives e's variables, for simplify() (variables without both
// bounds left out).
VarBounds var_bounds_of(const Expr& e, const VarRanges& known);

}  // namespace te::cuda
