// bfloat16 <-> float32 conversions on the bit patterns, so the result is the same on every
// host and matches what the LLVM backend emits (codegen_types.cpp: round_to_bfloat16).
#include "te/bfloat16.h"

#include <cstring>

namespace te {

uint16_t bfloat16::float_to_bfloat16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u | 0x00400000u) >> 16);  // NaN
  // Round to nearest even on the dropped 16 bits; a carry out of the mantissa bumps the
  // exponent, and past the largest finite value lands exactly on infinity.
  const uint32_t lsb = (u >> 16) & 1u;
  return static_cast<uint16_t>((u + 0x7fffu + lsb) >> 16);
}

float bfloat16::bfloat16_bits_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace te
