// How a ReduceNode's values combine, for every reducer (built-in or CommReducer): what
// lowering, rfactor and the cross-thread allreduce build their updates from.
#pragma once
#include <vector>

#include "te/expr.h"

namespace te {

// a combined with b by a built-in reducer (a + b, a * b, min, max).
Expr combine_with(Reducer r, const Expr& a, const Expr& b);

// The value of an empty reduction, one per value of r's tuple.
std::vector<Expr> reduce_identity(const ReduceNode& r);

// The combination of partial results a and b (one Expr per value each). A custom rule
// may use a value several times: pass variables or loads that may be repeated, and bind
// them first where a store could come in between (see lowering's reduce_update).
std::vector<Expr> reduce_combine(const ReduceNode& r, const std::vector<Expr>& a, const std::vector<Expr>& b);

// Whether a and b reduce the same sources the same way over the same axes: the values
// of one tuple reduction (they may differ in value_index).
bool same_reduction(const ReduceNode& a, const ReduceNode& b);

}  // namespace te
