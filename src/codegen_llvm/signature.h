// The native calling convention of a LoweredFunc, shared by the JIT, the C header and
// the argument checks: raw buffer pointers in parameter order, then every symbolic
// variable (shape variables, then scalar parameters) in order of first appearance.
#pragma once
#include <string>
#include <vector>

#include "te/ir.h"

namespace te::codegen {

struct KernelArg {
  Buffer buffer;       // defined for a buffer pointer
  Var var;             // defined for a symbolic variable
  std::string c_name;  // a C identifier, unique within the function
  int param = -1;      // the LoweredFunc parameter it comes from, -1 for a shape variable
};

struct KernelSignature {
  std::string name;
  std::vector<KernelArg> args;
  // For each LoweredFunc parameter, its index in args.
  std::vector<int> arg_of_param;
};

// Validates the function's interface (a C identifier for a name, distinct buffers,
// scalar parameters of value types, integer shape variables) and derives its
// signature; te::Error naming the function and parameter otherwise.
KernelSignature kernel_signature(const LoweredFunc& f);

// The C spelling of an argument's type: "float*", "int32_t", "uint16_t*" (float16 or
// bfloat16 storage), "uint8_t*" (bool storage); float16 and bfloat16 scalars are passed as
// float and bool scalars as uint8_t.
std::string c_type(const KernelArg& a);
// "int32_t vadd(float* A, float* B, float* C, int32_t n)"
std::string c_prototype(const KernelSignature& s);

// A C identifier that is not a C keyword (a name a header can declare).
bool is_c_name(const std::string& s);

}  // namespace te::codegen
