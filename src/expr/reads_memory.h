// Whether an expression's value comes from memory. Bounds inference proves indices
// computed from loop variables in range; an index read from memory (a gather, A[B[i]])
// can be anything, so the backends check it at run time.
#pragma once
#include <unordered_set>

#include "te/ir.h"

namespace te {

// Variables let-bound to values that read memory.
using DataVars = std::unordered_set<const VarNode*>;

// True if e reads memory: directly (a load) or through one of data_vars.
bool reads_memory(const Expr& e, const DataVars& data_vars = {});

// Adds var, let-bound to value, to data_vars when value reads memory.
void note_let(DataVars& data_vars, const VarNode* var, const Expr& value);

}  // namespace te
