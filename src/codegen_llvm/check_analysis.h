// What the grouped and hoisted index checks (codegen_check_groups.cpp,
// codegen_check_hoist.cpp) need to know about a piece of loop IR.
#pragma once
#include <unordered_set>
#include <vector>

#include "te/ir.h"

namespace te::codegen {

// The loads of a statement's top-level stores (the statement itself or the members of
// its sequence, each maybe under the lets that compute its shared values) that run
// whenever the statement does: not those of a predicated store,
// nor those under a predicate, a select's or if_then_else's branch, the right side of
// && / || or a let's body.
// `lets` receives those lets' variables and values (the values already in terms of the
// variables bound outside the statement), so that an index read through a let can be
// written without it (substitute) where the let is not bound yet.
std::vector<const LoadNode*> loads_always_run(const Stmt& s, std::vector<std::pair<Var, Expr>>* lets);

}  // namespace te::codegen
