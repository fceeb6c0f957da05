// IEEE-754 binary16 <-> binary32 conversions in plain integer arithmetic, so the result
// is the same on every host (no F16C, no compiler _Float16). NaN payloads are kept
// (truncated to 10 bits, never quieted) so every half value survives a trip through float.
#include "te/float16.h"

#include <cstring>

namespace te {
namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Shifts `value` right by `shift` bits, rounding to nearest, ties to even.
uint32_t shift_right_round_even(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1u);
  const uint32_t half_way = 1u << (shift - 1);
  if (rest > half_way || (rest == half_way && (kept & 1u))) return kept + 1u;
  return kept;
}

}  // namespace

uint16_t half::float_to_half_bits(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const int exponent = static_cast<int>((u >> 23) & 0xffu);
  const uint32_t mantissa = u & 0x7fffffu;

  if (exponent == 0xff) {
    if (mantissa == 0) return sign | 0x7c00u;  // infinity
    // NaN: keep the top payload bits; a payload that truncates to zero would read as
    // infinity, so keep it non-zero.
    uint16_t payload = static_cast<uint16_t>(mantissa >> 13);
    if (payload == 0) payload = 1;
    return sign | 0x7c00u | payload;
  }
  // Float subnormals (below 2^-126) are far below half's smallest subnormal (2^-24).
  if (exponent == 0) return sign;

  const int unbiased = exponent - 127;
  if (unbiased > 15) return sign | 0x7c00u;           // at least 2^16: beyond half's range
  const uint32_t significand = mantissa | 0x800000u;  // 24 bits with the implicit 1

  if (unbiased >= -14) {
    // Normal half: drop 13 mantissa bits. A carry out of the mantissa correctly bumps
    // the exponent, and a carry out of exponent 30 lands on 0x7c00, infinity.
    const uint32_t rounded = shift_right_round_even(significand, 13);  // 11 or 12 bits
    const uint32_t bits = (static_cast<uint32_t>(unbiased + 15) << 10) + (rounded - 0x400u);
    return static_cast<uint16_t>(sign | bits);
  }

  // Subnormal half: the value in units of 2^-24 is significand * 2^(unbiased + 1).
  const int shift = -(unbiased + 1);  // >= 14
  if (shift > 24) return sign;        // below 2^-25: rounds to zero (never a tie)
  // A result of 0x400 is the smallest normal half, which is the correct encoding.
  return static_cast<uint16_t>(sign | shift_right_round_even(significand, shift));
}

float half::half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const int exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;

  if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) {
    return bits_float(sign | (static_cast<uint32_t>(exponent - 15 + 127) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) return bits_float(sign);
  // Subnormal half: normalise, it is a normal float.
  int float_exponent = -14;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --float_exponent;
  }
  mantissa &= 0x3ffu;
  return bits_float(sign | (static_cast<uint32_t>(float_exponent + 127) << 23) | (mantissa << 13));
}

}  // namespace te
