// CUDA C spellings of te's scalar types and immediates.
#pragma once
#include <cstdint>
#include <string>

#include "te/dtype.h"

namespace te::cuda {

// The C type of one lane: "float", "__half", "__nv_bfloat16", "int32_t", "bool", ...
// Throws te::Error for types CUDA C cannot hold (handles, odd widths).
std::string c_type(DataType t);
// A short tag for helper names: "f32", "f16", "bf16", "i32", "u8", "b".
std::string type_suffix(DataType t);

// An immediate of scalar type t as a C expression of exactly that type where it matters:
// "5", "(-5)", "(int64_t)5", "5u", "(uint8_t)255", "true", "0.5f", "1.0", half and
// bfloat16 as bits.
std::string int_literal(DataType t, int64_t value);
std::string float_literal(DataType t, double value);
// Zero of type t.
std::string zero_literal(DataType t);

// The bits of the IEEE half nearest to v (ties to even), rounding v once.
uint16_t half_bits_of(double v);
// The bits of the bfloat16 nearest to v (ties to even), rounding v once.
uint16_t bfloat16_bits_of(double v);

}  // namespace te::cuda
