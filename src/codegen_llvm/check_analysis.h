// What the grouped and hoisted index checks (codegen_check_groups.cpp,
// codegen_check_hoist.cpp) need to know about a piece of loop IR.
#pragma once
#include <unordered_set>
#include <vector>

#include "te/ir.h"

namespace te::codegen {

// The loads of a statement's top-level stores (the statement itself or the members of
// its sequence) that run whenever the statement does: not those of a predicated store,
// nor those under a predicate, a select's or if_then_else's branch, the right side of
// && / || or a let's body.
std::vector<const LoadNode*> loads_always_run(const Stmt& s);

// The buffers an expression loads from.
std::unordered_set<const BufferNode*> buffers_loaded(const Expr& e);

// The buffers stored anywhere in a statement.
std::unordered_set<const BufferNode*> buffers_stored(const Stmt& s);

}  // namespace te::codegen
