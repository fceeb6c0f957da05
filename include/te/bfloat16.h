/// \file
/// bfloat16 storage type with round-to-nearest-even conversions.
#pragma once
#include <cstdint>

#include "te/export.h"

namespace te {

/// A bfloat16 value as stored in memory (the element type of BFloat(16) arrays): the
/// upper 16 bits of a float32. It only converts; te computes bfloat16 arithmetic itself
/// (in float32, rounded back after every operation).
struct TE_API bfloat16 {
  uint16_t bits = 0;  ///< The bit pattern: sign, 8 exponent bits, 7 mantissa bits.
  /// Positive zero.
  bfloat16() = default;
  /// f rounded to the nearest bfloat16 (ties to even; overflow gives infinity; NaN stays
  /// a NaN, quieted).
  explicit bfloat16(float f) : bits(float_to_bfloat16_bits(f)) {}
  /// The exact float value.
  explicit operator float() const { return bfloat16_bits_to_float(bits); }
  /// The bfloat16 with bit pattern b.
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }

  /// f rounded to the nearest bfloat16, as bits: ties to even, subnormals kept (bfloat16
  /// has float32's exponent range), overflow to infinity; a NaN keeps its sign and top
  /// payload bits and is quieted (so it never becomes infinity), as x86's VCVTNEPS2BF16.
  static uint16_t float_to_bfloat16_bits(float f);
  /// The float value of bfloat16 bits b (exact: b shifted into a float's upper half).
  static float bfloat16_bits_to_float(uint16_t b);
};

}  // namespace te
