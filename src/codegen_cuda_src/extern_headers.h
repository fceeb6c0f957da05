// CudaOptions::extern_headers and extern_code: the __device__ functions of call_extern.
#pragma once
#include <string>

#include "te/cuda.h"

namespace te::cuda {

// The headers' text and extern_code, each marked with where it came from, to be placed
// in the source before the kernels. te::Error when a header cannot be read, or when f
// calls an extern function that none of them declares (textually: its name followed by
// `(` outside comments and literals) and that is not one of options.extern_builtins,
// naming the function and the headers.
std::string extern_header_text(const LoweredFunc& f, const CudaOptions& options);

// Whether `name(` occurs in C source text outside comments and string or character
// literals, name not being the tail of a longer identifier.
bool mentions_call(const std::string& source, const std::string& name);

}  // namespace te::cuda
