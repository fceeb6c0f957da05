// The extern functions (call_extern) that loop IR calls, each with the C signature its
// calls give it: what the backends declare, resolve or look up.
#pragma once
#include <string>
#include <vector>

#include "te/export.h"
#include "te/ir.h"

namespace te {

// The C signature of an extern function, in te's element types.
struct ExternSignature {
  DataType ret;
  std::vector<DataType> params;
  bool operator==(const ExternSignature& o) const { return ret == o.ret && params == o.params; }
  bool operator!=(const ExternSignature& o) const { return !(*this == o); }
  // "float32(float32, int32)".
  std::string to_string() const;
};

// The signature of one call (vector lanes are separate calls: element types).
ExternSignature extern_signature(const CallNode* call);

struct ExternFunction {
  std::string name;
  ExternSignature sig;
  std::string caller;  // the first function that calls it, for messages
};

// Every extern function the functions call, in order of first call. te::Error, prefixed
// with `what` ("build", "build_cuda"), when one name is called with two signatures: a C
// function has one.
std::vector<ExternFunction> extern_functions(const std::vector<LoweredFunc>& funcs, const char* what);

// Whether values of t cross the C boundary of call_extern: bool, 8..64-bit int and uint,
// float32, float64 (scalars).
bool is_extern_type(DataType t);
// Whether s is a C identifier (an extern function's or a lowered function's name; a
// te::torch argument's).
TE_API bool is_c_identifier(const std::string& s);

}  // namespace te
