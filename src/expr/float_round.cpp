#include "expr/float_round.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "expr/int_arith.h"
#include "te/bfloat16.h"
#include "te/float16.h"

namespace te {
namespace {

// double -> float rounding toward zero with the last bit set when inexact ("round to
// odd"): rounding that float to a narrower type equals rounding the double directly.
float double_to_float_round_odd(double v) {
  float f = double_to_float(v);
  if (static_cast<double>(f) == v || std::isnan(v) || std::isinf(f)) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits |= 1;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Exponent field bits of float type t.
int exponent_bits(DataType t) {
  if (t.bits() == 64) return 11;
  if (t.is_float16()) return 5;
  return 8;  // float32, bfloat16
}

}  // namespace

float double_to_float(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (!(std::fabs(v) > kMax)) return static_cast<float>(v);  // also NaN
  const double midpoint = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  float r = std::fabs(v) >= midpoint ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::max();
  return std::signbit(v) ? -r : r;
}

double round_to_float_type(double v, DataType t) {
  if (t.bits() == 64) return v;
  if (t.bits() == 32) return double_to_float(v);
  const float odd = double_to_float_round_odd(v);
  if (t.is_bfloat()) return static_cast<float>(bfloat16(odd));
  return static_cast<float>(half(odd));
}

int float_digits(DataType t) {
  if (t.is_bfloat()) return 8;
  return t.bits() == 16 ? 11 : t.bits() == 32 ? 24 : 53;
}

bool float_type_holds(DataType to, DataType from) {
  return float_digits(to) >= float_digits(from) && exponent_bits(to) >= exponent_bits(from);
}

double int_to_float(int64_t v, DataType from, DataType to) {
  bool is_unsigned = from.is_uint();
  uint64_t u = arith::as_unsigned(v, from);
  switch (to.bits()) {
    case 64: return is_unsigned ? static_cast<double>(u) : static_cast<double>(v);
    case 32: return is_unsigned ? static_cast<float>(u) : static_cast<float>(v);
    default:
      // Through double (exact up to 2^53, and 53 >= 2 * 24 + 2 digits beyond), then one
      // rounding: float16 and bfloat16 alike (bfloat16 reaches 2^127, so an int32 can
      // round twice if it went through a float rounded to nearest).
      return round_to_float_type(is_unsigned ? static_cast<double>(u) : static_cast<double>(v), to);
  }
}

}  // namespace te
