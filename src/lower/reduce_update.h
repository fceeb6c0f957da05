// The statement that folds new values into a reduction's accumulators, for every reducer.
#pragma once
#include <vector>

#include "te/ir.h"

namespace te::lowering {

// acc_i = combine(acc, rhs)_i for each value of red, where acc holds Loads (each stored
// back where it was loaded from); where only_if is given and false, acc_i keeps its
// value. A built-in reducer is one store; a custom rule gets the accumulators' and rhs's
// values bound first, since it may read a value several times and one value's store
// must not change what another value's combination reads.
Stmt reduce_update(const ReduceNode& red, const std::vector<Expr>& acc, const std::vector<Expr>& rhs,
                   const Expr& only_if = Expr());

// acc_i = values_i for each accumulator Load.
Stmt store_all(const std::vector<Expr>& acc, const std::vector<Expr>& values);

}  // namespace te::lowering
