// Which indices the CUDA kernels check at run time: the one rule shared by the kernel
// analysis (a checked index's buffer extents become kernel parameters) and the printer
// (ExprPrinter::checked_index prints the checks).
#pragma once
#include "codegen_cuda_src/value_range.h"
#include "expr/reads_memory.h"
#include "te/expr.h"

namespace te::cuda {

// True when the value range of index, given ranges (wide as for value_range), lies inside
// buf, whose element count must be a constant.
bool provably_in_bounds(const Buffer& buf, const Expr& index, const VarRanges& ranges, bool wide);

// True when a flattened index into buf needs a run-time check: a scalar signed index that
// reads memory (directly or through data_vars) and is not provably inside buf. Indices
// computed from loop variables are in range by bounds inference and the launcher's shape
// checks.
bool index_needs_check(const Buffer& buf, const Expr& index, const DataVars& data_vars, const VarRanges& ranges,
                       bool wide);

}  // namespace te::cuda
