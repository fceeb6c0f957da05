#include "codegen_cuda_src/swizzle.h"

#include <fmt/format.h>

#include "te/error.h"
#include "te/simplify.h"

namespace te::cuda {

std::string swizzled_index(HelperSet& helpers, const Buffer& b, const std::string& index) {
  const int width = b.swizzle_bytes();
  if (width == 0) return index;
  const int element = b.dtype().bytes(), shift = __builtin_ctz(static_cast<unsigned>(element));  // a power of 2
  const std::string name = fmt::format("te_swizzle_{}_{}", width, element);
  // Byte bits [4, 4 + w) and [7, 7 + w) are element bits 4 - log2(S) and 7 - log2(S).
  helpers.use_text(name,
                   fmt::format("// Where a shared buffer swizzled by {0} bytes keeps element e ({1}-byte elements):\n"
                               "// the 16-byte chunk bits of its byte offset XOR the bits of its row in the\n"
                               "// 8-row pattern (Stage::swizzle; Hopper's TMA and wgmma layout).\n"
                               "template <typename I>\n"
                               "{2} I {3}(I e) {{\n"
                               "  return e ^ (((e >> {4}) & {5}) << {6});\n"
                               "}}\n",
                               width, element, kDeviceFunction, name, 7 - shift, width / 16 - 1, 4 - shift));
  if (b.swizzle_row() == 0) return fmt::format("{}({})", name, index);
  // Column blocks: element (r, c) of rows of C goes to block c / w (w elements: the
  // swizzle's width), row r of it, and that index through the swizzle.
  const int64_t row = b.swizzle_row(), w = width / element;
  const int64_t* total = as_const_int(b.shape()[0]);
  TE_ICHECK(total != nullptr && *total % row == 0, "CUDA: column blocks of a buffer of whole rows");
  const int64_t rows = *total / row;
  const std::string blocks = fmt::format("te_swizzle_{}_{}_blocks_{}x{}", width, element, rows, row);
  helpers.use_text(
      blocks, fmt::format("// Where a {2} x {3} shared buffer swizzled by {0} bytes in column blocks keeps element\n"
                          "// e: block c / {4} of row r = e / {3}, c = e % {3} (each block {2} rows of {4}), then\n"
                          "// the swizzle.\n"
                          "template <typename I>\n"
                          "{5} I {6}(I e) {{\n"
                          "  const I r = e / {3}, c = e % {3};\n"
                          "  return {7}(c / {4} * {8} + r * {4} + c % {4});\n"
                          "}}\n",
                          width, element, rows, row, w, kDeviceFunction, blocks, name, rows * w));
  return fmt::format("{}({})", blocks, index);
}

bool vector_fits_swizzle(const Buffer& b, const Expr& ramp_index, int lanes) {
  if (b.swizzle_bytes() == 0) return true;
  const auto* r = ramp_index.as<RampNode>();
  if (r == nullptr || b.dtype().bytes() * lanes > 16) return false;
  const Expr& base = r->base;
  return can_prove(base % make_const(base.dtype(), lanes) == make_zero(base.dtype()));
}

}  // namespace te::cuda
