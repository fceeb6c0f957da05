#include "codegen_cuda_src/index_check.h"

#include "expr/buffer_util.h"

namespace te::cuda {

bool provably_in_bounds(const Buffer& buf, const Expr& index, const VarRanges& ranges, bool wide) {
  // Up to kUnbounded elements: a range's hi below it is a known bound.
  std::optional<int64_t> size = constant_elements(buf, ValueRange::kUnbounded);
  if (!size) return false;
  ValueRange r = value_range(index, ranges, wide);
  return r.lo >= 0 && r.hi < *size;
}

bool index_needs_check(const Buffer& buf, const Expr& index, const DataVars& data_vars, const VarRanges& ranges,
                       bool wide) {
  DataType t = index.dtype();
  return t.is_scalar() && t.is_int() && reads_memory(index, data_vars) && !provably_in_bounds(buf, index, ranges, wide);
}

}  // namespace te::cuda
