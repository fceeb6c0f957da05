// Input data for fuzz cases and the comparison of results between backends.
//
// Float tolerance (what "match" means for floats):
//  - Compare::Bits (the expression fuzzer, with FMA contraction off): the interpreter and
//    the JIT both round every + - * / sqrt fma to the type's precision (float16: after
//    each operation), call the same libm for exp/log/pow/tanh, and define min/max,
//    casts and NaN handling the same way (src/interpret/lane_ops.h). So the tolerance is
//    zero: equal bit patterns (+0.0 and -0.0 differ), except that any NaN equals any NaN
//    (payloads and signs of NaNs are not part of te's semantics).
//  - Compare::Value (the graph fuzzer): reductions may run in another order once a
//    schedule splits, reorders or rfactors them. The generator keeps every float value
//    an integer of magnitude below 2^24 / 2^53 (inputs are small integers, reads are
//    clamped, no division), so sums and products are exact in any order and the values
//    must be equal; only the sign of a zero may differ (min/max over {+0, -0} depends on
//    the order), so -0.0 == +0.0 there. NaN == NaN as above.
//  - Compare::Relative (graphs built with FMA contraction on): a * b + c may then round
//    once instead of twice. Those graphs use only + and * of positive values, so every
//    intermediate rounding error is relative, and n operations on the longest path give
//    at most about n * 2^-p relative error (p: 11, 24 or 53 mantissa bits); the check
//    allows |got - want| <= 4 * n * 2^-p * |want|.
// Integers (and bool) always match exactly.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_rng.h"
#include "te/te.h"

namespace te::fuzz {

// How the inputs of a case are drawn.
enum class ValueProfile : uint8_t {
  Edge,      // edge values of the type mixed with random bits (expression fuzzer)
  SmallInt,  // small integers in [-8, 8] of any type (graph fuzzer: exact float math)
  Positive,  // floats in [0.5, 2] (FMA-contraction graphs)
};

// An array of shape and dtype filled from rng according to profile.
NDArray random_array(Rng& rng, const std::vector<int64_t>& shape, DataType dtype, ValueProfile profile);

enum class Compare : uint8_t { Bits, Value, Relative };

// Empty if `got` matches `want` (same dtype and shape) under mode; else a description
// of the first differing elements. rel_tol and abs_tol are used by Compare::Relative only:
// |got - want| <= rel_tol * |want| + abs_tol.
std::string compare_arrays(const NDArray& want, const NDArray& got, Compare mode, double rel_tol = 0,
                           double abs_tol = 0);

// Stores the value of an immediate (IntImm or FloatImm of a's type) at element k.
void store_immediate(NDArray& a, int64_t k, const Expr& imm);

// The value of element k as text: exact for every type ("-128", "nan", "0x1p-24").
std::string element_text(const NDArray& a, int64_t k);

// Relative precision 2^-p of a float type (p = 11, 24 or 53; 8 for bfloat16).
double unit_roundoff(DataType t);

}  // namespace te::fuzz
