// Emulation stand-in for CUDA's cuda_bf16.h (see cuda_emulation.h): the subset te's
// generated code uses. __nv_bfloat16 is the 16 bits; te converts explicitly around every
// operation, so no arithmetic operators are needed. Conversions behave as CUDA's: round to
// nearest even, a NaN becomes the canonical 0x7fff (te's own NaN keeps its payload; the
// tests compare NaNs as equal), doubles round once (through float rounded to odd).
#pragma once
#include "cuda_emulation.h"

struct __nv_bfloat16 {
  uint16_t bits;
};
typedef __nv_bfloat16 nv_bfloat16;

inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) {
  __nv_bfloat16 h;
  h.bits = bits;
  return h;
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.bits; }

inline float __bfloat162float(__nv_bfloat16 h) {
  uint32_t x = static_cast<uint32_t>(h.bits) << 16;
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return __ushort_as_bfloat16(0x7fff);
  uint32_t kept = x >> 16, rest = x & 0xffffu;
  if (rest > 0x8000u || (rest == 0x8000u && (kept & 1u))) ++kept;  // may carry into the exponent
  return __ushort_as_bfloat16(static_cast<unsigned short>(kept));
}

inline __nv_bfloat16 __double2bfloat16(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d && std::isfinite(d) && std::isfinite(f)) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    b |= 1u;
    std::memcpy(&f, &b, sizeof f);
  }
  return __float2bfloat16_rn(f);
}
