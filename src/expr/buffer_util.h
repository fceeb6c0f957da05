// Element counts of buffers, for the backends' index checks and allocations.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "te/expr.h"

namespace te {

// The product of count(extent) over buf's extents, a count <= 0 making the product 0 (a
// negative extent holds nothing). nullopt when count gives nullopt for some extent, or
// when the product exceeds limit.
std::optional<int64_t> product_of_extents(const Buffer& buf,
                                          const std::function<std::optional<int64_t>(const Expr&)>& count,
                                          int64_t limit = INT64_MAX);

// The number of elements of buf when every extent is an integer constant (a negative
// extent counting as 0); nullopt when one is not, or when the number exceeds limit.
std::optional<int64_t> constant_elements(const Buffer& buf, int64_t limit = INT64_MAX);

// Whether an array of `shape` given for buf has more elements than buf's indices reach:
// with extents of at most 32 bits, indices are int32 and more than 2^31 - 1 elements would
// wrap them (int64 extents index any array).
bool beyond_int32_indices(const Buffer& buf, const std::vector<int64_t>& shape);

}  // namespace te
