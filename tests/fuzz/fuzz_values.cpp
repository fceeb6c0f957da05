#include "fuzz_values.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace te::fuzz {
namespace {

// Element k of an integer or bool array, sign- or zero-extended to 64 bits.
int64_t int_element(const NDArray& a, int64_t k) {
  DataType t = a.dtype();
  const auto* p = static_cast<const uint8_t*>(a.data()) + k * t.bytes();
  uint64_t u = 0;
  std::memcpy(&u, p, static_cast<size_t>(t.bytes()));  // little-endian: the low bytes
  if (t.is_int() && t.bits() < 64 && ((u >> (t.bits() - 1)) & 1)) u |= ~uint64_t{0} << t.bits();
  return static_cast<int64_t>(u);
}

double float_element(const NDArray& a, int64_t k) {
  DataType t = a.dtype();
  const auto* p = static_cast<const uint8_t*>(a.data()) + k * t.bytes();
  if (t.bits() == 16) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return t.is_bfloat() ? bfloat16::bfloat16_bits_to_float(h) : half::half_bits_to_float(h);
  }
  if (t.bits() == 32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

void set_int(NDArray& a, int64_t k, int64_t v) {
  DataType t = a.dtype();
  auto* p = static_cast<uint8_t*>(a.data()) + k * t.bytes();
  if (t.is_bool()) v = v != 0;
  std::memcpy(p, &v, static_cast<size_t>(t.bytes()));  // little-endian: the low bytes
}

// double -> float rounding to nearest, also beyond float's range (where a plain
// conversion is undefined behaviour): from the midpoint between FLT_MAX and 2^128 on, inf.
float to_float(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (!(std::fabs(v) > kMax)) return static_cast<float>(v);  // also NaN
  const double midpoint = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  float r = std::fabs(v) >= midpoint ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::max();
  return std::signbit(v) ? -r : r;
}

// double -> float toward zero with the last bit set when inexact ("round to odd"), so
// that rounding the float to half (or bfloat16) gives the double rounded directly.
float to_float_round_odd(double v) {
  float f = to_float(v);
  if (static_cast<double>(f) == v || std::isnan(v) || std::isinf(f)) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= 1;
  std::memcpy(&f, &bits, 4);
  return f;
}

void set_float(NDArray& a, int64_t k, double v) {
  DataType t = a.dtype();
  auto* p = static_cast<uint8_t*>(a.data()) + k * t.bytes();
  if (t.bits() == 16) {
    const float odd = to_float_round_odd(v);
    uint16_t h = t.is_bfloat() ? bfloat16::float_to_bfloat16_bits(odd) : half::float_to_half_bits(odd);
    std::memcpy(p, &h, 2);
  } else if (t.bits() == 32) {
    float f = to_float(v);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &v, 8);
  }
}

int64_t edge_int(Rng& rng, DataType t) {
  if (t.is_bool()) return static_cast<int64_t>(rng.below(2));
  const int bits = t.bits();
  const int64_t mn = t.is_uint() ? 0 : (bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
  const int64_t mx = t.is_uint() ? (bits == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << bits) - 1))
                                 : (bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1);
  switch (rng.below(9)) {
    case 0: return mn;
    case 1: return mx;
    case 2: return rng.range(-2, 2);
    case 3: return static_cast<int64_t>(static_cast<uint64_t>(mn) + rng.below(3));
    case 4: return static_cast<int64_t>(static_cast<uint64_t>(mx) - rng.below(3));
    case 5: return int64_t{1} << rng.below(static_cast<uint64_t>(bits - 1));
    case 6: return rng.range(-100, 100);
    default: return static_cast<int64_t>(rng.bits());  // wrapped by the store
  }
}

double edge_float(Rng& rng, DataType t) {
  const double inf = std::numeric_limits<double>::infinity();
  double big = t.bits() == 16 ? 65504.0 : t.bits() == 32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
  double tiny = t.bits() == 16 ? 5.960464477539063e-8 : t.bits() == 32 ? 1.401298464324817e-45 : 4.9e-324;
  if (t.is_bfloat()) {
    big = std::ldexp(255.0, 120);  // 0x7f7f
    tiny = std::ldexp(1.0, -133);  // 0x0001
  }
  switch (rng.below(16)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return rng.chance(50) ? inf : -inf;
    case 2: return rng.chance(50) ? 0.0 : -0.0;
    case 3: return rng.chance(50) ? big : -big;
    case 4: return rng.chance(50) ? tiny : -tiny;
    // Draws in separate statements: the order of operands is unspecified in C++.
    case 5: {
      double whole = static_cast<double>(rng.range(-3, 3));
      return whole + (rng.chance(50) ? 0.5 : 0.0);
    }
    case 6: {
      double mantissa = rng.uniform(-1, 1);
      return std::ldexp(mantissa, static_cast<int>(rng.range(-30, 40)));
    }
    case 7: {
      double sign = rng.chance(50) ? 1 : -1;
      return 2147483648.0 * sign + static_cast<double>(rng.range(-2, 2)) * 128;
    }
    default: return rng.uniform(-10, 10);
  }
}

}  // namespace

NDArray random_array(Rng& rng, const std::vector<int64_t>& shape, DataType dtype, ValueProfile profile) {
  NDArray a = NDArray::empty(shape, dtype);
  for (int64_t k = 0; k < a.size(); ++k) {
    switch (profile) {
      case ValueProfile::Edge:
        if (dtype.is_float())
          set_float(a, k, edge_float(rng, dtype));
        else
          set_int(a, k, edge_int(rng, dtype));
        break;
      case ValueProfile::SmallInt: {
        int64_t v = dtype.is_uint() ? rng.range(0, 8) : dtype.is_bool() ? rng.range(0, 1) : rng.range(-8, 8);
        if (dtype.is_float())
          set_float(a, k, static_cast<double>(v));
        else
          set_int(a, k, v);
        break;
      }
      case ValueProfile::Positive:
        if (dtype.is_float())
          set_float(a, k, rng.uniform(0.5, 2.0));
        else
          set_int(a, k, rng.range(1, 4));
        break;
    }
  }
  return a;
}

void store_immediate(NDArray& a, int64_t k, const Expr& imm) {
  if (const double* f = as_const_float(imm))
    set_float(a, k, *f);
  else if (const int64_t* i = as_const_int(imm))
    set_int(a, k, *i);
  else
    throw Error("store_immediate: not an immediate: " + to_string(imm));
}

double unit_roundoff(DataType t) {
  if (t.is_bfloat()) return std::ldexp(1.0, -8);
  return std::ldexp(1.0, t.bits() == 16 ? -11 : t.bits() == 32 ? -24 : -53);
}

std::string element_text(const NDArray& a, int64_t k) {
  DataType t = a.dtype();
  if (!t.is_float()) {
    int64_t v = int_element(a, k);
    if (t.is_uint() && t.bits() == 64) return std::to_string(static_cast<uint64_t>(v));
    return std::to_string(v);
  }
  double v = float_element(a, k);
  return fmt::format("{} ({:a})", v, v);
}

std::string compare_arrays(const NDArray& want, const NDArray& got, Compare mode, double rel_tol, double abs_tol) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape())
    return fmt::format("dtype/shape differ: want {}{}, got {}{}", want.dtype().to_string(), want.shape_string(),
                       got.dtype().to_string(), got.shape_string());
  DataType t = want.dtype();
  std::string diff;
  int64_t bad = 0;
  for (int64_t k = 0; k < want.size(); ++k) {
    bool same;
    if (!t.is_float()) {
      same = int_element(want, k) == int_element(got, k);
    } else {
      double x = float_element(want, k), y = float_element(got, k);
      if (std::isnan(x) || std::isnan(y)) {
        same = std::isnan(x) && std::isnan(y);
      } else if (mode == Compare::Bits) {
        same = x == y && std::signbit(x) == std::signbit(y);
      } else if (mode == Compare::Value) {
        same = x == y;
      } else {
        same = x == y || std::fabs(x - y) <= rel_tol * std::fabs(x) + abs_tol;
      }
    }
    if (same) continue;
    if (bad++ < 6) diff += fmt::format("    [{}]: want {}, got {}\n", k, element_text(want, k), element_text(got, k));
  }
  if (bad > 6) diff += fmt::format("    ... {} of {} elements differ\n", bad, want.size());
  return diff;
}

}  // namespace te::fuzz
