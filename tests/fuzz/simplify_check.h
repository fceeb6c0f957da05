// The simplifier fuzzer: simplify() must keep values and be idempotent.
//
// tests/test_simplify.cpp already checks random scalar integer and bool expressions,
// integer ramp/broadcast rewrites and int32 loop nests with its own evaluator. This one
// covers the rest, and uses interpret() (the reference semantics) as the evaluator:
//  - scalar expressions over every type: float16/32/64 arithmetic, NaN, inf and -0.0,
//    math intrinsics, casts between any two types, bool logic over float comparisons,
//    lets, if_then_else and select, with random bounds on the integer variables;
//  - vector expressions of 2-8 lanes of every type (variables become ramps or
//    broadcasts), also compared lane by lane with the scalar expression;
//  - statements: loops of every kind, lets of any type, if/else on float conditions,
//    asserts, scalar and vector stores of every type into several buffers.
// Values are compared bit for bit (NaN == NaN), as simplification must not change them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "fuzz_case.h"
#include "fuzz_rng.h"

namespace te::fuzz {

// One random case drawn from seed; bfloat16 adds it to the types (other cases than
// without, for the same seed).
CaseResult check_simplify_case(uint64_t seed, bool bfloat16 = false);
// One case drawn from bytes (the libFuzzer target).
CaseResult check_simplify_bytes(const uint8_t* data, size_t size);

}  // namespace te::fuzz
