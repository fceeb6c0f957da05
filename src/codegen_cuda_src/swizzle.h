// Swizzled shared buffers (Stage::swizzle) in CUDA source: the index of each element
// access goes through the swizzle, and a vector access stays one access only within a
// 16-byte chunk, which the swizzle moves whole.
#pragma once
#include <string>

#include "codegen_cuda_src/helpers.h"
#include "te/ir.h"

namespace te::cuda {

// `index` (C text, an element index of b) as b keeps it: through te_swizzle_<W>_<S> for a
// swizzled buffer (te_swizzle_<W>_<S>_blocks_<R>x<C> when it is kept in column blocks),
// unchanged otherwise.
std::string swizzled_index(HelperSet& helpers, const Buffer& b, const std::string& index);

// Whether a dense vector of `lanes` elements of b at ramp_index may move as one access:
// always for a buffer that is not swizzled; for a swizzled one, when it fills at most one
// 16-byte chunk from a provably aligned start.
bool vector_fits_swizzle(const Buffer& b, const Expr& ramp_index, int lanes);

}  // namespace te::cuda
