#include "codegen_cuda_src/helpers.h"

#include <fmt/format.h>

#include <cmath>

#include "codegen_cuda_src/c_types.h"
#include "te/error.h"

namespace te::cuda {

namespace {

const char* const kHostDevice = "static __host__ __device__ __forceinline__";

// The unsigned type of the same width, for wrapping negation.
std::string unsigned_of(DataType t) { return c_type(DataType(DataType::Code::UInt, t.bits())); }

std::string integer_division(Helper h, DataType t, const std::string& name) {
  std::string T = c_type(t);
  if (t.is_uint()) {
    bool div = h == Helper::FloorDiv || h == Helper::TruncDiv;
    return fmt::format(
        "// Unsigned {0}: x {1} 0 == 0.\n"
        "{2} {3} {4}({3} a, {3} b) {{ return b == 0 ? 0 : a {1} b; }}\n",
        div ? "division" : "remainder", div ? "/" : "%", kHostDevice, T, name);
  }
  std::string neg =
      fmt::format("({})({} - ({})a)", T, int_literal(DataType(DataType::Code::UInt, t.bits()), 0), unsigned_of(t));
  switch (h) {
    case Helper::FloorDiv:
      return fmt::format(
          "// Floor division: x / 0 == 0, MIN / -1 wraps to MIN.\n"
          "{0} {1} {2}({1} a, {1} b) {{\n"
          "  if (b == 0) return 0;\n"
          "  if (b == -1) return {3};\n"
          "  {1} q = a / b;\n"
          "  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;\n"
          "}}\n",
          kHostDevice, T, name, neg);
    case Helper::FloorMod:
      return fmt::format(
          "// Floor modulo (the divisor's sign): x % 0 == 0, MIN % -1 == 0.\n"
          "{0} {1} {2}({1} a, {1} b) {{\n"
          "  if (b == 0 || b == -1) return 0;\n"
          "  {1} r = a % b;\n"
          "  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n"
          "}}\n",
          kHostDevice, T, name);
    case Helper::TruncDiv:
      return fmt::format(
          "// C division: x / 0 == 0, MIN / -1 wraps to MIN.\n"
          "{0} {1} {2}({1} a, {1} b) {{\n"
          "  if (b == 0) return 0;\n"
          "  if (b == -1) return {3};\n"
          "  return a / b;\n"
          "}}\n",
          kHostDevice, T, name, neg);
    case Helper::TruncMod:
      return fmt::format(
          "// C remainder: x % 0 == 0, MIN % -1 == 0.\n"
          "{0} {1} {2}({1} a, {1} b) {{ return (b == 0 || b == -1) ? 0 : a % b; }}\n",
          kHostDevice, T, name);
    default: break;
  }
  TE_ICHECK(false, "not a division helper");
  return "";
}

std::string float_to_int(DataType from, DataType to, const std::string& name) {
  std::string F = c_type(from), T = c_type(to);
  std::string suffix = from.bits() == 32 ? "f" : "";
  // The limits are powers of two: exact in both float types, printed in full.
  auto limit = [&](double v) { return fmt::format("{:.1f}{}", v, suffix); };
  std::string head = fmt::format(
      "// {} -> {}: truncates toward zero, saturates out-of-range values, NaN -> 0.\n"
      "{} {} {}({} x) {{\n",
      from.to_string(), to.to_string(), kHostDevice, T, name, F);
  if (to.is_uint()) {
    uint64_t max = to.bits() == 64 ? ~uint64_t{0} : (uint64_t{1} << to.bits()) - 1;
    return head + fmt::format(
                      "  if (!(x > 0.0{0})) return 0;\n"
                      "  if (x >= {1}) return {2};\n"
                      "  return ({3})x;\n"
                      "}}\n",
                      suffix, limit(std::ldexp(1.0, to.bits())), int_literal(to, static_cast<int64_t>(max)), T);
  }
  int64_t max = to.bits() == 64 ? INT64_MAX : (int64_t{1} << (to.bits() - 1)) - 1;
  return head + fmt::format(
                    "  if (x != x) return 0;\n"
                    "  if (x >= {0}) return {1};\n"
                    "  if (x < -{0}) return {2};\n"
                    "  return ({3})x;\n"
                    "}}\n",
                    limit(std::ldexp(1.0, to.bits() - 1)), int_literal(to, max), int_literal(to, -max - 1), T);
}

// te's << and >> (expr.h): a * 2^b wrapped and floor(a / 2^b), for every amount b; a
// negative amount shifts the other way. Shifts happen on the unsigned type (a signed
// left shift of a negative value is undefined in C++17).
std::string shift(Helper h, DataType t, const std::string& name) {
  std::string T = c_type(t), U = unsigned_of(t);
  int w = t.bits();
  bool left = h == Helper::ShiftLeft;
  std::string doc =
      fmt::format("// a {} b as te defines it: {}, a negative b shifts the other way.\n", left ? "<<" : ">>",
                  left ? "a * 2^b wrapped, 0 once b >= the width" : "floor(a / 2^b), for every b");
  if (t.is_uint())
    return doc + fmt::format("{0} {1} {2}({1} a, {1} b) {{ return b >= {3}u ? ({1})0 : ({1})(a {4} b); }}\n",
                             kHostDevice, T, name, w, left ? "<<" : ">>");
  std::string shl = fmt::format("k >= {0}u ? ({1})0 : ({1})(({2})a << k)", w, T, U);
  std::string shr = fmt::format("a >> (k >= {0}u ? {1}u : k)", w, w - 1);
  return doc + fmt::format(
                   "{0} {1} {2}({1} a, {1} b) {{\n"
                   "  {3} k = b < 0 ? ({3})0 - ({3})b : ({3})b;\n"
                   "  return b < 0 ? {4} : {5};\n"
                   "}}\n",
                   kHostDevice, T, name, U, left ? shr : shl, left ? shl : shr);
}

}  // namespace

std::string HelperSet::use(Helper h, DataType t, DataType to) {
  t = t.element_of();
  std::string sfx = type_suffix(t);
  std::string name, text;
  switch (h) {
    case Helper::FloorDiv:
    case Helper::FloorMod:
    case Helper::TruncDiv:
    case Helper::TruncMod: {
      TE_ICHECK(t.is_integer() && t.bits() >= 32, "division helpers take 32/64-bit integers");
      // Unsigned floor and C division agree: one helper serves both.
      bool div = h == Helper::FloorDiv || h == Helper::TruncDiv;
      bool floor = !t.is_uint() && (h == Helper::FloorDiv || h == Helper::FloorMod);
      name = fmt::format("te_{}{}_{}", floor ? "floor" : "trunc", div ? "div" : "mod", sfx);
      text = integer_division(h, t, name);
      break;
    }
    case Helper::Min:
    case Helper::Max: {
      bool is_min = h == Helper::Min;
      name = fmt::format("te_{}_{}", is_min ? "min" : "max", sfx);
      std::string T = c_type(t);
      // __half compares with its device operators; __nv_bfloat16 through float.
      std::string a = t.is_bfloat() ? "__bfloat162float(a)" : "a", b = t.is_bfloat() ? "__bfloat162float(b)" : "b";
      text = fmt::format("{} {} {}({} a, {} b) {{ return {} {} {} ? a : b; }}\n",
                         t.is_float16() ? kDeviceFunction : kHostDevice, T, name, T, T, a, is_min ? "<" : ">", b);
      if (t.is_float()) text = "// A NaN in a gives b, a NaN in b gives the NaN.\n" + text;
      break;
    }
    case Helper::Abs: {
      TE_ICHECK(t.is_int() && t.bits() >= 32, "abs helper takes 32/64-bit signed integers");
      name = "te_abs_" + sfx;
      std::string T = c_type(t);
      text = fmt::format("// abs(MIN) wraps to MIN.\n{} {} {}({} a) {{ return a < 0 ? ({})({} - ({})a) : a; }}\n",
                         kHostDevice, T, name, T, T, int_literal(DataType(DataType::Code::UInt, t.bits()), 0),
                         unsigned_of(t));
      break;
    }
    case Helper::FloatFloorMod: {
      TE_ICHECK(t.is_float() && t.bits() >= 32, "float modulo helper takes float32/float64");
      name = "te_floormod_" + sfx;
      std::string T = c_type(t);
      bool f32 = t.bits() == 32;
      text = fmt::format(
          "// Float modulo: a - b * floor(a / b), each step rounded (never fused into an fma).\n"
          "{0} {1} {2}({1} a, {1} b) {{ return a - {3}(b, {4}(a / b)); }}\n",
          kDeviceFunction, T, name, f32 ? "__fmul_rn" : "__dmul_rn", f32 ? "floorf" : "floor");
      break;
    }
    case Helper::CheckedIndex: {
      TE_ICHECK(t.is_int() && t.bits() >= 32, "checked index helper takes 32/64-bit signed integers");
      name = "te_checked_index_" + sfx;
      std::string T = c_type(t);
      text = fmt::format(
          "// An index read from memory: outside its buffer the kernel stops (__trap; the launch\n"
          "// reports an error) instead of reading or writing out of bounds.\n"
          "{0} {1} {2}({1} i, {1} n) {{\n"
          "  if (i < 0 || i >= n) __trap();\n"
          "  return i;\n"
          "}}\n",
          kDeviceFunction, T, name);
      break;
    }
    case Helper::ShiftLeft:
    case Helper::ShiftRight: {
      TE_ICHECK(t.is_integer() && t.bits() >= 32, "shift helpers take 32/64-bit integers");
      name = fmt::format("te_{}_{}", h == Helper::ShiftLeft ? "shl" : "shr", sfx);
      text = shift(h, t, name);
      break;
    }
    case Helper::FloatToInt: {
      TE_ICHECK(t.is_float() && t.bits() >= 32 && to.is_integer(), "float -> int helper types");
      name = fmt::format("te_cast_{}_{}", sfx, type_suffix(to));
      text = float_to_int(t, to, name);
      break;
    }
  }
  if (names_.insert(name).second) order_.push_back(text);
  return name;
}

void HelperSet::use_text(const std::string& name, const std::string& text) {
  if (names_.insert(name).second) order_.push_back(text);
}

std::string HelperSet::definitions() const {
  std::string out;
  for (const std::string& d : order_) out += d;
  return out;
}

}  // namespace te::cuda
