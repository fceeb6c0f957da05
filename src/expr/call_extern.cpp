// call_extern(): a call of a C function outside te. The checks here are the ones every
// backend relies on: a C identifier for a name (it is printed into C and LLVM symbols as
// it is) and scalar arguments and result of types with one obvious C ABI type.
#include <fmt/format.h>

#include <cctype>

#include "expr/extern_calls.h"
#include "te/expr.h"

namespace te {

bool is_extern_type(DataType t) {
  if (!t.is_scalar() || t.is_void() || t.is_handle()) return false;
  if (t.is_bool()) return true;
  if (t.is_integer()) return t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  return t.is_float() && (t.bits() == 32 || t.bits() == 64);
}

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

namespace {

// Why t cannot cross the C boundary, for the messages below.
std::string refusal(DataType t) {
  if (t.is_float() && t.bits() == 16)  // float16 or bfloat16
    return t.element_of().to_string() +
           " has no C type te can pass (cast to float32, and declare the function with float)";
  if (t.is_vector()) return "a vector (extern functions take and return scalars; te calls them once per lane)";
  return "not a C scalar type (bool, int8..int64, uint8..uint64, float32, float64)";
}

}  // namespace

Expr call_extern(DataType ret, const std::string& name, std::vector<Expr> args) {
  if (!is_c_identifier(name))
    throw Error(
        fmt::format("call_extern: '{}' is not a C identifier (letters, digits and '_', not starting "
                    "with a digit): it must be the function's C name",
                    name));
  if (!is_extern_type(ret))
    throw Error(fmt::format("call_extern '{}': the result type {} is {}", name, ret.to_string(), refusal(ret)));
  for (size_t k = 0; k < args.size(); ++k) {
    const Expr& a = args[k];
    if (!a.defined())
      throw Error(fmt::format("call_extern '{}': argument {} is undefined (a default-constructed Expr)", name, k));
    if (!is_extern_type(a.dtype()))
      throw Error(fmt::format("call_extern '{}': argument {} has type {}, which is {}", name, k, a.dtype().to_string(),
                              refusal(a.dtype())));
  }
  return Expr(std::make_shared<const CallNode>(ret, Intrinsic::Extern, std::move(args), name));
}

}  // namespace te
