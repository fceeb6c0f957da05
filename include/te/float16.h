/// \file
/// IEEE-754 binary16 storage type with round-to-nearest-even conversions.
#pragma once
#include <cstdint>

#include "te/export.h"

namespace te {

/// A float16 value as stored in memory (the element type of Float(16) arrays). It only
/// converts; te computes float16 arithmetic itself.
struct TE_API half {
  uint16_t bits = 0;  ///< The IEEE-754 binary16 bit pattern.
  /// Positive zero.
  half() = default;
  /// f rounded to the nearest float16 (ties to even; overflow gives infinity).
  explicit half(float f) : bits(float_to_half_bits(f)) {}
  /// The exact float value.
  explicit operator float() const { return half_bits_to_float(bits); }
  /// The half with bit pattern b.
  static half from_bits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }

  /// f rounded to the nearest binary16, as bits (ties to even; NaN stays NaN).
  static uint16_t float_to_half_bits(float f);
  /// The float value of binary16 bits h (exact).
  static float half_bits_to_float(uint16_t h);
};

}  // namespace te
