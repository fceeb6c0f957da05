#include "expr/buffer_util.h"

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

}  // namespace te
