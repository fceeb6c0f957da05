// Small queries on loop IR used by the CUDA printers.
#pragma once
#include "expr/analysis.h"  // uses_var
#include "te/ir.h"

namespace te::cuda {

// True if s loads from or stores to b (by identity or by name).
bool uses_buffer(const Stmt& s, const Buffer& b);
// True if some type in f (parameters, allocations, expressions) is float16.
bool uses_float16(const LoweredFunc& f);
// The same for bfloat16.
bool uses_bfloat16(const LoweredFunc& f);
// True if index is a ramp over `lanes` consecutive elements: what one vector access moves.
bool dense_ramp(const Expr& index, int lanes);

}  // namespace te::cuda
