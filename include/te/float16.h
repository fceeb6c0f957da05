// IEEE-754 binary16 storage type with round-to-nearest-even conversions.
#pragma once
#include <cstdint>

namespace te {

struct half {
  uint16_t bits = 0;
  half() = default;
  explicit half(float f) : bits(float_to_half_bits(f)) {}
  explicit operator float() const { return half_bits_to_float(bits); }
  static half from_bits(uint16_t b) { half h; h.bits = b; return h; }

  static uint16_t float_to_half_bits(float f);
  static float half_bits_to_float(uint16_t h);
};

}  // namespace te
