#include "expr/buffer_util.h"

#include <limits>

namespace te {

std::optional<int64_t> product_of_extents(const Buffer& buf,
                                          const std::function<std::optional<int64_t>(const Expr&)>& count,
                                          int64_t limit) {
  int64_t product = 1;
  bool empty = false, too_large = false;
  for (const Expr& extent : buf.shape()) {
    std::optional<int64_t> n = count(extent);
    if (!n) return std::nullopt;
    if (*n <= 0) {
      empty = true;
    } else if (!too_large) {
      // product * n > limit without overflowing: product and n are positive.
      too_large = product > limit / *n;
      if (!too_large) product *= *n;
    }
  }
  if (empty) return 0;
  if (too_large) return std::nullopt;
  return product;
}

std::optional<int64_t> constant_elements(const Buffer& buf, int64_t limit) {
  return product_of_extents(
      buf,
      [](const Expr& extent) -> std::optional<int64_t> {
        const int64_t* c = as_const_int(extent);
        if (c == nullptr) return std::nullopt;
        return *c;
      },
      limit);
}

bool beyond_int32_indices(const Buffer& buf, const std::vector<int64_t>& shape) {
  if (buf.shape().empty()) return false;
  for (const Expr& e : buf.shape())
    if (e.dtype().bits() > 32) return false;
  int64_t count = 1;
  for (int64_t extent : shape)
    if (__builtin_mul_overflow(count, extent, &count)) return true;
  return count > std::numeric_limits<int32_t>::max();
}

}  // namespace te
