// The expression fuzzer: one random expression tree over 1-4 input arrays of random
// types, computed element-wise (compute + a random CPU or GPU schedule + lower(), so all
// passes run: vectorize, unroll, loop partitioning, ...). Its references: the same
// compute unscheduled, and the same tree with every constant read from an input array
// instead of written as an immediate (constant folding against run-time evaluation).
#pragma once
#include <cstdint>

#include "fuzz_case.h"

namespace te::fuzz {

struct ExprCaseOptions {
  // Bind the loop to blockIdx.x/threadIdx.x (a case for the CUDA emulation) in this
  // percentage of cases; such trees avoid signed 32/64-bit wrapping (undefined in CUDA C).
  int gpu_percent = 0;
  int max_depth = 5;
  // bfloat16 among the input, output and inner types (other seeds than without).
  bool bfloat16 = false;
};

FuzzCase make_expr_case(uint64_t seed, const ExprCaseOptions& options = {});

}  // namespace te::fuzz
