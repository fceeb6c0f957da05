// The small inline functions a generated .cu defines before its kernels: te's integer
// division and modulo, min/max, abs and saturating float -> int casts. Only the helpers
// a module uses are emitted (nvcc warns about unused static functions).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "te/dtype.h"
#include "te/export.h"

namespace te::cuda {

// How the source declares a device-only helper function.
inline constexpr const char* kDeviceFunction = "static __device__ __forceinline__";

enum class Helper : uint8_t {
  FloorDiv,
  FloorMod,
  TruncDiv,
  TruncMod,  // integers, 32 or 64 bits
  Min,
  Max,            // any scalar type
  Abs,            // signed integers, 32 or 64 bits
  FloatFloorMod,  // float32 / float64: a - b * floor(a / b)
  FloatToInt,     // float32 / float64 -> any integer, saturating
  CheckedIndex,   // an index read from memory, checked (32/64-bit)
  ShiftLeft,
  ShiftRight,  // te's shifts, every amount defined (32/64-bit)
};

class TE_API HelperSet {
 public:
  // Registers a helper and returns its name. t is the operand type (for FloatToInt the
  // source float type, with `to` the integer result type).
  std::string use(Helper h, DataType t, DataType to = DataType());
  // Registers a helper given as its text (a tensor intrinsic's device functions); the
  // same name twice keeps the first text.
  void use_text(const std::string& name, const std::string& text);
  // The definitions, in the order they were first used.
  std::string definitions() const;
  bool empty() const { return order_.empty(); }

 private:
  std::set<std::string> names_;
  std::vector<std::string> order_;  // definitions
};

}  // namespace te::cuda
