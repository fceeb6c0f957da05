#include "codegen_cuda_src/c_types.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "expr/float_round.h"
#include "expr/int_arith.h"
#include "te/bfloat16.h"
#include "te/error.h"
#include "te/float16.h"

namespace te::cuda {

std::string c_type(DataType t) {
  int bits = t.bits();
  if (t.is_bool()) return "bool";
  if (t.is_bfloat()) {
    if (bits == 16) return "__nv_bfloat16";
  } else if (t.is_float()) {
    if (bits == 16) return "__half";
    if (bits == 32) return "float";
    if (bits == 64) return "double";
  } else if ((t.is_int() || t.is_uint()) && (bits == 8 || bits == 16 || bits == 32 || bits == 64)) {
    return fmt::format("{}int{}_t", t.is_uint() ? "u" : "", bits);
  }
  throw Error(fmt::format("CUDA codegen: type {} has no CUDA C equivalent", t.to_string()));
}

std::string type_suffix(DataType t) {
  c_type(t);  // rejects types without a C spelling
  if (t.is_bool()) return "b";
  if (t.is_bfloat()) return "bf16";
  const char* kind = t.is_float() ? "f" : t.is_uint() ? "u" : "i";
  return fmt::format("{}{}", kind, t.bits());
}

std::string int_literal(DataType t, int64_t value) {
  t = t.element_of();
  if (t.is_bool()) return value ? "true" : "false";
  if (t.is_float()) return float_literal(t, static_cast<double>(value));
  value = arith::wrap(value, t);
  if (t.is_uint()) {
    uint64_t u = arith::as_unsigned(value, t);
    if (t.bits() == 64) return fmt::format("{}ull", u);
    if (t.bits() == 32) return fmt::format("{}u", u);
    return fmt::format("({}){}", c_type(t), u);
  }
  // The most negative value has no literal: write it as (-(max) - 1).
  std::string digits;
  if (t.bits() >= 32 && value == (t.bits() == 64 ? INT64_MIN : int64_t{INT32_MIN}))
    digits = fmt::format("(-{}{} - 1)", -(value + 1), t.bits() == 64 ? "LL" : "");
  else
    digits = value < 0 ? fmt::format("({})", value) : fmt::format("{}", value);
  if (t.bits() == 32) return digits;
  return fmt::format("({}){}", c_type(t), digits);
}

namespace {

// Shortest decimal text that reads back to v in the given precision, always with a
// '.' or an exponent so that C reads it as floating point.
std::string float_digits(double v, int bits) {
  std::string s = bits == 32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

uint16_t half_bits_of(double v) {
  return half(static_cast<float>(round_to_float_type(v, Float(16)))).bits;  // exact: already rounded
}

uint16_t bfloat16_bits_of(double v) { return bfloat16(static_cast<float>(round_to_float_type(v, BFloat(16)))).bits; }

std::string float_literal(DataType t, double value) {
  t = t.element_of();
  switch (t.bits()) {
    case 16:
      if (t.is_bfloat()) return fmt::format("__ushort_as_bfloat16((unsigned short)0x{:04x}u)", bfloat16_bits_of(value));
      return fmt::format("__ushort_as_half((unsigned short)0x{:04x}u)", half_bits_of(value));
    case 32: {
      float f = static_cast<float>(value);
      if (std::isnan(f)) return "__int_as_float(0x7fc00000)";
      if (std::isinf(f)) return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float((int)0xff800000u)";
      std::string s = float_digits(value, 32) + "f";
      return f < 0 || std::signbit(f) ? "(" + s + ")" : s;
    }
    case 64: {
      if (std::isnan(value)) return "__longlong_as_double(0x7ff8000000000000LL)";
      if (std::isinf(value))
        return value > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                         : "__longlong_as_double((long long)0xfff0000000000000ull)";
      std::string s = float_digits(value, 64);
      return value < 0 || std::signbit(value) ? "(" + s + ")" : s;
    }
  }
  throw Error(fmt::format("CUDA codegen: type {} has no CUDA C equivalent", t.to_string()));
}

std::string zero_literal(DataType t) { return t.is_float() ? float_literal(t, 0.0) : int_literal(t, 0); }

}  // namespace te::cuda
