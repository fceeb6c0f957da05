// Element counts of buffers, for the backends' index checks and allocations.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>

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

}  // namespace te
