// Small queries on loop IR used by the CUDA printers.
#pragma once
#include <set>

#include "te/ir.h"

namespace te::cuda {

// True if s (or e) reads variable v.
bool uses_var(const Stmt& s, const VarNode* v);
bool uses_var(const Expr& e, const VarNode* v);
// True if s loads from or stores to b (by identity or by name).
bool uses_buffer(const Stmt& s, const Buffer& b);
// True if e reads memory.
bool has_load(const Expr& e);
// True if e reads memory, directly or through one of data_vars (bound to values read from
// memory): its value can be anything, as an index it needs a run-time check.
bool reads_memory(const Expr& e, const std::set<const VarNode*>& data_vars);
// True if some type in f (parameters, allocations, expressions) is float16.
bool uses_float16(const LoweredFunc& f);

}  // namespace te::cuda
